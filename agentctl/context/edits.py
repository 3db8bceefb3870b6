"""The profile's context-editing settings and the exact `context_management` JSON they become."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentctl.context.engine import DEFAULT_CLEARED_RESULT_PLACEHOLDER

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"

TriggerKind = Literal["input_tokens", "tool_uses"]


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


def clear_tool_uses_edit(s: ClearToolUses) -> dict[str, Any]:
    """One `clear_tool_uses_20250919` edit; unset optional fields are omitted."""
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": s.trigger_kind, "value": s.trigger},
        "keep": {"type": "tool_uses", "value": s.keep},
    }
    if s.clear_at_least > 0:
        edit["clear_at_least"] = {"type": "input_tokens", "value": s.clear_at_least}
    if s.exclude_tools:
        edit["exclude_tools"] = list(s.exclude_tools)
    if isinstance(s.clear_tool_inputs, tuple):
        edit["clear_tool_inputs"] = list(s.clear_tool_inputs)
    elif s.clear_tool_inputs:
        edit["clear_tool_inputs"] = True
    return edit


def clear_thinking_edit(s: ClearThinking) -> dict[str, Any]:
    """One `clear_thinking_20251015` edit."""
    keep: Any = "all" if s.keep == "all" else {"type": "thinking_turns", "value": s.keep}
    return {"type": "clear_thinking_20251015", "keep": keep}


def build_context_management(ce: ContextEditing) -> dict[str, Any] | None:
    """The request's `context_management` field, or None when no strategy is on.

    clear_thinking must come first when both are used (the API rejects the other order).
    """
    edits: list[dict[str, Any]] = []
    if ce.thinking.enabled:
        edits.append(clear_thinking_edit(ce.thinking))
    if ce.tool_uses.enabled:
        edits.append(clear_tool_uses_edit(ce.tool_uses))
    return {"edits": edits} if edits else None
