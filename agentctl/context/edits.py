"""Context editing on the wire: the beta flags, and the trigger a request's JSON carries.

The settings (profile/settings.py) make the edits; `context.batching.batched_edit` steers the
clear_tool_uses edit; `agent.request.build_context_management` puts them in a request.
"""

from __future__ import annotations

from typing import Any

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"  # the compact_20260112 edit


def trigger_from(context_management: dict[str, Any] | None) -> int | None:
    """The clear_tool_uses input-token trigger of a request's context_management, if it has one."""
    edits = (context_management or {}).get("edits") or []
    for edit in edits:
        if not (isinstance(edit, dict) and str(edit.get("type")).startswith("clear_tool_uses")):
            continue
        trigger = edit.get("trigger")
        if trigger is None:
            return 100_000  # the API's documented default trigger
        if isinstance(trigger, dict) and trigger.get("type") == "input_tokens":
            value = trigger.get("value")
            return value if isinstance(value, int) else None
    return None
