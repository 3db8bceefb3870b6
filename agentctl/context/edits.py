"""Profile context-editing settings -> the exact `context_management` JSON the API receives."""

from __future__ import annotations

from typing import Any

from agentctl.profile.settings import ClearThinking, ClearToolUses, ContextEditing

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"


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
