"""Typed, validated settings of a profile: frozen dataclasses, no I/O.

The TOML layout mirrors these classes one to one: top-level keys are `Profile` fields, each
table (`[thinking]`, `[context_editing.tool_uses]`, ...) is the dataclass of the same name.
Defaults here are the built-in profile used when no profile file is found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentctl.context.engine import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.context.prices import Price

TriggerKind = Literal["input_tokens", "tool_uses"]
CacheTtl = Literal["5m", "1h"]

DEFAULT_MODEL = "claude-sonnet-5"


@dataclass(frozen=True)
class ThinkingSettings:
    """Extended thinking: `thinking: {"type": "enabled", "budget_tokens": N}` when enabled."""

    enabled: bool = False
    budget_tokens: int = 4096


@dataclass(frozen=True)
class ClearToolUses:
    """`clear_tool_uses_20250919`. `clear_at_least = 0` means "not set" (omitted from the JSON)."""

    enabled: bool = True
    trigger_kind: TriggerKind = "input_tokens"
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    # False / True, or the names of the tools whose tool_use inputs are cleared too.
    clear_tool_inputs: bool | tuple[str, ...] = False


@dataclass(frozen=True)
class ClearThinking:
    """`clear_thinking_20251015`: keep the last N thinking turns, or "all". Needs thinking on."""

    enabled: bool = False
    keep: int | Literal["all"] = 1


@dataclass(frozen=True)
class ContextEditing:
    """Both server-side strategies; the API receives clear_thinking first when both are on."""

    tool_uses: ClearToolUses = field(default_factory=ClearToolUses)
    thinking: ClearThinking = field(default_factory=ClearThinking)
    # What the server puts in place of a cleared tool result. The real text is not public
    # (API-NOTES E.1): this is never sent to the API; the offline emulator substitutes it and
    # `simulate`/`tune` count its tokens. Set it to match what you observe from the server.
    placeholder: str = DEFAULT_CLEARED_RESULT_PLACEHOLDER


@dataclass(frozen=True)
class CacheSettings:
    """Prompt caching: breakpoints on the stable prefix (tools, system, recent turns)."""

    enabled: bool = True
    ttl: CacheTtl = "5m"


@dataclass(frozen=True)
class MemorySettings:
    """The directory that the model sees as `/memories`, and the store's limits."""

    root: Path = Path("memory")
    max_file_bytes: int = 1_000_000
    max_total_bytes: int = 50_000_000
    max_files: int = 10_000
    max_view_chars: int = 16_000


@dataclass(frozen=True)
class ToolSettings:
    """Which tools the model is offered; the workspace tools are read-only and confined."""

    memory: bool = True
    workspace: bool = True
    workspace_root: Path = Path(".")
    web_search: bool = False
    web_fetch: bool = False
    max_result_chars: int = 20_000


@dataclass(frozen=True)
class LimitSettings:
    """Budgets that stop a run with exit code 3; 0 means no limit."""

    max_input_tokens: int = 0
    max_usd: float = 0.0


@dataclass(frozen=True)
class ApiSettings:
    """How to reach the Messages API; `base_url = ""` means ANTHROPIC_BASE_URL or the default."""

    base_url: str = ""
    timeout_s: float = 600.0
    # Total time one request (and its streamed response) may take, whatever the server sends.
    deadline_s: float = 600.0
    max_retries: int = 4


# A `[prices."MODEL"]` table: the same five USD-per-million figures as the built-in table.
PriceOverride = Price


@dataclass(frozen=True)
class Profile:
    """Everything a run needs to know, resolved (paths absolute, defaults filled in)."""

    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    max_turns: int = 50
    system: str = ""
    thinking: ThinkingSettings = field(default_factory=ThinkingSettings)
    context_editing: ContextEditing = field(default_factory=ContextEditing)
    cache: CacheSettings = field(default_factory=CacheSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    # model name -> price override (table [prices."claude-sonnet-5"])
    prices: dict[str, PriceOverride] = field(default_factory=dict)
    # Where the profile came from ("<built-in>" for the defaults); used in messages.
    source: str = "<built-in>"
