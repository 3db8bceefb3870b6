"""The API's 400 messages for a bad `context_management` field (the context-editing docs), or None.

Messages observed from the live API are marked [OBS]; the rest are ours, written in the API's
pydantic style (`<dotted.path>: <problem>`) because the real text is not public (E.3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

EDIT_TYPES = ("clear_tool_uses_20250919", "clear_thinking_20251015", "compact_20260112")
COMPACT_MIN_TRIGGER = 50_000  # B.4 [OBS]

_CLEAR_TOOL_USES_KEYS = {
    "type",
    "trigger",
    "keep",
    "clear_at_least",
    "exclude_tools",
    "clear_tool_inputs",
}
_CLEAR_THINKING_KEYS = {"type", "keep"}
_COMPACT_KEYS = {"type", "trigger", "pause_after_compaction", "instructions"}
# BetaCompactionBlockParam's keys [SDK]
_COMPACTION_BLOCK_KEYS = {
    "type",
    "content",
    "encrypted_content",
    "signature",
    "tool_changes",
    "cache_control",
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _extra_keys(edit: Mapping[str, Any], allowed: set[str], path: str) -> str | None:
    for key in edit:
        if key not in allowed:
            return f"{path}.{key}: Extra inputs are not permitted"
    return None


def _counter(value: Any, path: str, kinds: tuple[str, ...], minimum: int) -> str | None:
    """A `{"type": <kind>, "value": int}` object, value >= minimum (minimums are ours)."""
    if not isinstance(value, Mapping):
        return f"{path}: Input should be a valid dictionary"
    if value.get("type") not in kinds:
        expected = " or ".join(f"'{k}'" for k in kinds)
        return f"{path}.type: Input should be {expected}"
    extra = _extra_keys(value, {"type", "value"}, path)
    if extra:
        return extra
    if not _is_int(value.get("value")):
        return f"{path}.value: Input should be a valid integer"
    if value["value"] < minimum:
        return f"{path}.value: Input should be greater than or equal to {minimum}"
    return None


def _names(value: Any, path: str) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"{path}: Input should be a valid list of strings"
    return None


def _check_clear_tool_uses(edit: Mapping[str, Any], path: str) -> str | None:
    checks: list[tuple[str, Callable[[Any, str], str | None]]] = [
        ("trigger", lambda v, p: _counter(v, p, ("input_tokens", "tool_uses"), 1)),
        ("keep", lambda v, p: _counter(v, p, ("tool_uses",), 0)),
        ("clear_at_least", lambda v, p: _counter(v, p, ("input_tokens",), 0)),
        ("exclude_tools", _names),
        ("clear_tool_inputs", lambda v, p: None if isinstance(v, bool) else _names(v, p)),
    ]
    for key, check in checks:
        if edit.get(key) is not None:
            problem = check(edit[key], f"{path}.{key}")
            if problem:
                return problem
    return _extra_keys(edit, _CLEAR_TOOL_USES_KEYS, path)


def _check_clear_thinking(edit: Mapping[str, Any], path: str) -> str | None:
    keep = edit.get("keep")
    if keep is None or keep == "all":
        return _extra_keys(edit, _CLEAR_THINKING_KEYS, path)
    if isinstance(keep, Mapping) and keep.get("type") == "all":
        return _extra_keys(edit, _CLEAR_THINKING_KEYS, path)
    if isinstance(keep, Mapping) and keep.get("type") == "thinking_turns":
        problem = _counter(keep, f"{path}.keep", ("thinking_turns",), 1)
        return problem or _extra_keys(edit, _CLEAR_THINKING_KEYS, path)
    return f"{path}.keep: Input should be 'all' or an object with type 'thinking_turns' or 'all'"


def _check_compact(edit: Mapping[str, Any], path: str) -> str | None:
    trigger = edit.get("trigger")
    if trigger is not None:
        problem = _counter(trigger, f"{path}.trigger", ("input_tokens",), 0)
        if problem:
            return problem
        if trigger["value"] < COMPACT_MIN_TRIGGER:  # literal text [OBS] B.4
            return f"{path}.compact_20260112: trigger.value must be at least {COMPACT_MIN_TRIGGER}"
    return _extra_keys(edit, _COMPACT_KEYS, path)


_CHECKS: dict[str, Callable[[Mapping[str, Any], str], str | None]] = {
    "clear_tool_uses_20250919": _check_clear_tool_uses,
    "clear_thinking_20251015": _check_clear_thinking,
    "compact_20260112": _check_compact,
}


def _check_edit(edit: Any, index: int) -> str | None:
    path = f"context_management.edits.{index}"
    if not isinstance(edit, Mapping):
        return f"{path}: Input should be a valid dictionary"
    kind = edit.get("type")
    if kind not in _CHECKS:
        expected = ", ".join(f"'{t}'" for t in EDIT_TYPES)
        return (
            f"{path}: Input tag '{kind}' found using 'type' does not match any of the "
            f"expected tags: {expected}"
        )
    return _CHECKS[str(kind)](edit, path)


def _thinking_on(request: Mapping[str, Any]) -> bool:
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def _check_order(request: Mapping[str, Any], kinds: list[Any]) -> str | None:
    if "clear_thinking_20251015" not in kinds:
        return None
    if not _thinking_on(request):  # literal text [OBS] B.3
        return "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive"
    if kinds[0] != "clear_thinking_20251015":  # ours: rejected per docs, text not public
        return (
            "context_management.edits: `clear_thinking_20251015` must be the first strategy "
            "in `edits` when combined with other strategies"
        )
    return None


def _assistant(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "assistant"


def compact_strategy(request: Mapping[str, Any]) -> bool:
    """Whether the request's `context_management.edits` hold the compact strategy."""
    edits = (request.get("context_management") or {}).get("edits")
    edits = edits if isinstance(edits, list) else []
    return "compact_20260112" in [e.get("type") for e in edits if isinstance(e, Mapping)]


def validate_compaction_blocks(request: Mapping[str, Any], start: int = 0) -> str | None:
    """The 400 for a `compaction` block in `messages` without the compact strategy [OBS] B.4,
    or with empty content (the SDK says it is not allowed; the text is ours). `start`: the
    messages before it are known to pass (under the same strategy and first message)."""
    strategy = compact_strategy(request)
    messages = request.get("messages") or []
    # A conversation opening with an assistant message is reported one index on (the API
    # counts a turn before it, G.7 [OBS]).
    shift = 1 if messages and isinstance(messages[0], Mapping) and _assistant(messages[0]) else 0
    for i in range(start, len(messages)):
        message = messages[i]
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping) or block.get("type") != "compaction":
                continue
            where = f"messages.{i}.content.{j}"
            signed = bool(block.get("signature"))  # on-demand blocks need no strategy (B.5)
            if not strategy and not signed:
                where = f"messages.{i + shift}.content.{j}"
                return (
                    f"{where}: `compaction` blocks require a `compact_20260112` strategy in "
                    "`context_management.edits`."
                )
            if block.get("content") == "":
                return f"{where}.content: String should have at least 1 character"
            extra = _extra_keys(block, _COMPACTION_BLOCK_KEYS, f"{where}.compaction")
            if extra:  # what `model_dump()` of the SDK block sends (text/citations: null) [DOC]
                return extra
    return None


def validate_edits(request: Mapping[str, Any]) -> str | None:
    """The API's 400 message for the request's `context_management`, or None if fine.

    Header checks (the beta flag) are the emulator's: this sees only the request body.
    """
    if "context_management" not in request or request["context_management"] is None:
        return None
    cm = request["context_management"]
    if not isinstance(cm, Mapping):
        return "context_management: Input should be a valid dictionary"
    if request.get("compaction") is not None:  # ours: rejected per the SDK docs (B.5)
        return "`compaction` cannot be used together with `context_management`"
    extra = _extra_keys(cm, {"edits"}, "context_management")
    edits = cm.get("edits", [])
    if extra or not isinstance(edits, list):
        return extra or "context_management.edits: Input should be a valid list"
    for index, edit in enumerate(edits):
        problem = _check_edit(edit, index)
        if problem:
            return problem
    return _check_order(request, [e.get("type") for e in edits])
