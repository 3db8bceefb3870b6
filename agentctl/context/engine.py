"""The server's context-editing rules as pure functions on raw Messages API request dicts.

Implements `clear_thinking_20251015` and `clear_tool_uses_20250919` (API-NOTES B.2, B.3,
B.10) for the emulator and the what-if simulator. The server is stateless: the client resends
the full history, so edits are recomputed from scratch on every request. Where the docs are
silent the choice is ours and says so; docs/context.md lists every such choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.tokens import (
    estimate_block_tokens,
    estimate_request_tokens,
    message_blocks,
)
from agentctl.context.validate import validate_edits

__all__ = [
    "DEFAULT_CLEARED_INPUT_PLACEHOLDER",
    "DEFAULT_CLEARED_RESULT_PLACEHOLDER",
    "EditOutcome",
    "apply_context_edits",
    "validate_edits",
]

# The server's literal text is not public (API-NOTES E.1); this is ours, a documented setting.
DEFAULT_CLEARED_RESULT_PLACEHOLDER = "[Tool result cleared by context management]"
# What a cleared tool_use.input becomes: unknown (E.5); ours: an empty object, still valid JSON
# for the tool's `input` field.
DEFAULT_CLEARED_INPUT_PLACEHOLDER: dict[str, Any] = {}

DEFAULT_TRIGGER: dict[str, Any] = {"type": "input_tokens", "value": 100_000}  # B.2 [DOC]
DEFAULT_KEEP_TOOL_USES = 3  # B.2 [DOC]
DEFAULT_KEEP_THINKING_TURNS = 1  # B.3: the docs' default for an edit without `keep`

_TOOL_USE_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
_THINKING_TYPES = ("thinking", "redacted_thinking")


@dataclass(frozen=True)
class EditOutcome:
    """What the server would do to one request: the edited copy and the applied edits."""

    request: dict[str, Any]
    applied_edits: list[dict[str, Any]]
    original_input_tokens: int
    input_tokens: int


def _json_copy(value: Any) -> Any:
    """A deep copy of plain JSON (dicts, lists, scalars); much faster than copy.deepcopy."""
    if isinstance(value, Mapping):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_copy(v) for v in value]
    return value


def _content_list(message: dict[str, Any]) -> list[Any]:
    """The message's content as a list, converting string content in place (copy only)."""
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content}] if content else []
    elif not isinstance(content, list):
        message["content"] = []
    result: list[Any] = message["content"]
    return result


# --- clear_thinking_20251015 -------------------------------------------------------------


def _is_thinking(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") in _THINKING_TYPES


def _keep_thinking_turns(edit: Mapping[str, Any]) -> int | None:
    """N from `keep`, or None for "all" / {"type": "all"}."""
    keep = edit.get("keep") or {"type": "thinking_turns", "value": DEFAULT_KEEP_THINKING_TURNS}
    if keep == "all" or (isinstance(keep, Mapping) and keep.get("type") == "all"):
        return None
    return int(keep["value"])


def _clear_thinking(
    messages: list[dict[str, Any]], edit: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Strip thinking from assistant messages older than the last N that contain thinking.

    A "turn" is one assistant message (ours; the docs do not say how tool-use continuations
    of one logical turn are counted).
    """
    keep = _keep_thinking_turns(edit)
    turns = [
        m
        for m in messages
        if m.get("role") == "assistant" and any(_is_thinking(b) for b in message_blocks(m))
    ]
    if keep is None or len(turns) <= keep:
        return None
    cleared = 0
    for message in turns[: len(turns) - keep]:
        blocks = _content_list(message)
        cleared += sum(estimate_block_tokens(b) for b in blocks if _is_thinking(b))
        message["content"] = [b for b in blocks if not _is_thinking(b)]
    return {
        "type": "clear_thinking_20251015",
        "cleared_thinking_turns": len(turns) - keep,
        "cleared_input_tokens": cleared,
    }


# --- clear_tool_uses_20250919 ------------------------------------------------------------


@dataclass
class _Pair:
    """A tool use and, when present, the block that answers it (same id)."""

    use: dict[str, Any]
    result: dict[str, Any] | None = None


def _tool_pairs(messages: list[dict[str, Any]]) -> list[_Pair]:
    """Tool uses in chronological order, each with its result (next user message for client
    tools, the same assistant message for server tools)."""
    pairs: dict[str, _Pair] = {}
    order: list[_Pair] = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = str(block.get("type"))
            if kind in _TOOL_USE_TYPES and message.get("role") == "assistant":
                pair = _Pair(block)
                pairs[str(block.get("id"))] = pair
                order.append(pair)
            elif (
                kind == "tool_result" or kind.endswith("_tool_result")
            ) and "tool_use_id" in block:
                found = pairs.get(str(block["tool_use_id"]))
                if found is not None and found.result is None:
                    found.result = block
    return order


def _triggered(edit: Mapping[str, Any], input_tokens: int, tool_uses: int) -> bool:
    """The prompt *exceeds* the trigger (strictly greater; ours, after "exceeds" in the docs)."""
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    measure = tool_uses if trigger.get("type") == "tool_uses" else input_tokens
    return measure > int(trigger["value"])


def _clears_input(edit: Mapping[str, Any], name: str) -> bool:
    flag = edit.get("clear_tool_inputs")
    if isinstance(flag, list | tuple):
        return name in flag
    return bool(flag)


_Change = tuple[dict[str, Any], str, Any, int]  # (block, key, new value, tokens freed)


def _pair_changes(pair: _Pair, edit: Mapping[str, Any], placeholder: str) -> list[_Change]:
    """What clearing this pair would change; a part is left alone unless it shrinks (ours:
    a result already shorter than the placeholder, or already cleared, stays as it is)."""
    wanted: list[tuple[dict[str, Any], str, Any]] = []
    if pair.result is not None:  # tool_use_id and is_error stay (ours)
        wanted.append((pair.result, "content", placeholder))
    if _clears_input(edit, str(pair.use.get("name", ""))):
        wanted.append((pair.use, "input", dict(DEFAULT_CLEARED_INPUT_PLACEHOLDER)))
    changes: list[_Change] = []
    for block, key, value in wanted:
        freed = estimate_block_tokens(block) - estimate_block_tokens({**block, key: value})
        if freed > 0:
            changes.append((block, key, value, freed))
    return changes


def _clear_tool_uses(
    messages: list[dict[str, Any]], edit: Mapping[str, Any], input_tokens: int, placeholder: str
) -> dict[str, Any] | None:
    """Clear the oldest tool results beyond `keep`, unless untriggered or below clear_at_least.

    `exclude_tools` pairs are never cleared and do not count toward `keep`; the `tool_uses`
    trigger counts every tool use, excluded ones included (both ours).
    """
    pairs = _tool_pairs(messages)
    if not _triggered(edit, input_tokens, len(pairs)):
        return None
    excluded = set(edit.get("exclude_tools") or ())
    candidates = [p for p in pairs if str(p.use.get("name", "")) not in excluded]
    keep = int((edit.get("keep") or {}).get("value", DEFAULT_KEEP_TOOL_USES))
    victims = candidates[: max(len(candidates) - keep, 0)]
    per_pair = [c for c in (_pair_changes(p, edit, placeholder) for p in victims) if c]
    freed = sum(change[3] for changes in per_pair for change in changes)
    at_least = edit.get("clear_at_least") or {}
    if not per_pair or freed < int(at_least.get("value", 0)):
        return None
    for changes in per_pair:
        for block, key, value, _ in changes:
            block[key] = value
    return {
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": len(per_pair),
        "cleared_input_tokens": freed,
    }


# --- both, in array order ----------------------------------------------------------------


def apply_context_edits(
    request: Mapping[str, Any],
    edits: Sequence[Mapping[str, Any]],
    *,
    result_placeholder: str = DEFAULT_CLEARED_RESULT_PLACEHOLDER,
) -> EditOutcome:
    """Apply `edits` in array order to a copy of `request`; the input is never mutated.

    clear_tool_uses measures its `input_tokens` trigger on the prompt as edited by the edits
    before it (ours; B.10). Unknown edit types (e.g. compact_20260112) are skipped here: call
    `validate_edits` first. `applied_edits` lists only edits that changed something.
    """
    edited: dict[str, Any] = _json_copy(request)
    messages: list[dict[str, Any]] = edited.setdefault("messages", [])
    original = estimate_request_tokens(request)
    current = original
    applied: list[dict[str, Any]] = []
    for edit in edits:
        kind = edit.get("type")
        if kind == "clear_thinking_20251015":
            outcome = _clear_thinking(messages, edit)
        elif kind == "clear_tool_uses_20250919":
            outcome = _clear_tool_uses(messages, edit, current, result_placeholder)
        else:
            continue
        if outcome is not None:
            applied.append(outcome)
            current -= int(outcome["cleared_input_tokens"])
    return EditOutcome(edited, applied, original, estimate_request_tokens(edited))
