"""Typed, validated settings of a profile: frozen dataclasses, no I/O.

The TOML layout mirrors these classes one to one: top-level keys are `Profile` fields, each
table (`[thinking]`, `[context_editing.tool_uses]`, ...) is the dataclass of the same name.
Defaults here are the built-in profile used when no profile file is found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# The context-editing tables live with the code that turns them into API JSON (context/edits).
from agentctl.context.edits import ClearThinking as ClearThinking
from agentctl.context.edits import ClearToolUses as ClearToolUses
from agentctl.context.edits import Compaction as Compaction
from agentctl.context.edits import ContextEditing as ContextEditing
from agentctl.context.edits import TriggerKind as TriggerKind
from agentctl.context.prices import Price, Pricing

CacheTtl = Literal["5m", "1h"]

DEFAULT_MODEL = "claude-sonnet-5"


@dataclass(frozen=True)
class ThinkingSettings:
    """Extended thinking, when enabled: `{"type": "enabled", "budget_tokens": N}`, or with
    `adaptive` `{"type": "adaptive"}` (the model decides when and how much to think; no
    budget is sent)."""

    enabled: bool = False
    budget_tokens: int = 4096
    adaptive: bool = False

    def request_field(self) -> dict[str, object] | None:
        """The request's `thinking` field, or None when thinking is off."""
        if not self.enabled:
            return None
        if self.adaptive:
            return {"type": "adaptive"}
        return {"type": "enabled", "budget_tokens": self.budget_tokens}


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
    # The history (journal and content blobs) is pruned past this many bytes (0 = no bound).
    history_max_bytes: int = 100_000_000
    # "queue": a run's writes wait in a pending layer for `agentctl memory review`.
    review: Literal["off", "queue"] = "off"


@dataclass(frozen=True)
class ToolSettings:
    """Which tools the model is offered; the workspace tools are read-only and confined."""

    memory: bool = True
    workspace: bool = True
    workspace_root: Path = Path(".")
    max_result_chars: int = 20_000


@dataclass(frozen=True)
class UserLocation:
    """Where the user is, roughly, for more relevant web search results (empty: not sent)."""

    city: str = ""
    region: str = ""
    country: str = ""  # two-letter ISO code
    timezone: str = ""  # IANA name, e.g. "Europe/Paris"


@dataclass(frozen=True)
class WebSearchSettings:
    """The server-side web search tool; `max_uses = 0` leaves the API's default (no limit)."""

    enabled: bool = False
    max_uses: int = 0
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    user_location: UserLocation = field(default_factory=UserLocation)


@dataclass(frozen=True)
class WebFetchSettings:
    """The server-side web fetch tool; 0 for a count leaves the API's default."""

    enabled: bool = False
    max_uses: int = 0
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    citations: bool = False
    max_content_tokens: int = 0


@dataclass(frozen=True)
class CodeExecutionSettings:
    """The server-side code execution tool (Anthropic's sandbox, billed by container time)."""

    enabled: bool = False


@dataclass(frozen=True)
class ServerToolSettings:
    """Tools the API runs itself; their versions are the newest the installed SDK knows."""

    web_search: WebSearchSettings = field(default_factory=WebSearchSettings)
    web_fetch: WebFetchSettings = field(default_factory=WebFetchSettings)
    code_execution: CodeExecutionSettings = field(default_factory=CodeExecutionSettings)


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


@dataclass(frozen=True)
class McpServer:
    """One `[mcp.servers.NAME]`: a stdio server (`command`) or a streamable HTTP one (`url`),
    its tool filter and call timeout."""

    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # Relative: to the profile's folder, which is also the default.
    cwd: Path = Path(".")
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    timeout_s: float = 60.0


@dataclass(frozen=True)
class McpSettings:
    """MCP servers whose tools are offered as `mcp__NAME__TOOL`."""

    servers: dict[str, McpServer] = field(default_factory=dict)


# A `[prices."MODEL"]` table: the same five USD-per-million figures as the built-in table.
PriceOverride = Price


@dataclass(frozen=True)
class Profile:
    """Everything a run needs to know, resolved (paths absolute, defaults filled in)."""

    model: str = DEFAULT_MODEL
    max_tokens: int = 8192
    max_turns: int = 50
    system: str = ""
    # Beta flags agentctl does not know yet, sent after its own in `anthropic-beta`.
    betas: tuple[str, ...] = ()
    thinking: ThinkingSettings = field(default_factory=ThinkingSettings)
    context_editing: ContextEditing = field(default_factory=ContextEditing)
    cache: CacheSettings = field(default_factory=CacheSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    server_tools: ServerToolSettings = field(default_factory=ServerToolSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    # model name -> price override (table [prices."claude-sonnet-5"])
    prices: dict[str, PriceOverride] = field(default_factory=dict)
    # Where the profile came from ("<built-in>" for the defaults); used in messages.
    source: str = "<built-in>"

    def pricing(self, model: str | None = None) -> Pricing:
        """What tokens of `model` (default: this profile's) cost under this profile's price
        overrides and cache TTL: the one way agentctl prices usage."""
        return Pricing.of(model or self.model, self.prices, self.cache.ttl)
