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

from agentctl.context.batching import Marks, boundary
from agentctl.context.pairs import (
    DEFAULT_CLEARED_INPUT_PLACEHOLDER,
    Pair,
    candidates,
    freed_tokens,
    pair_changes,
    tool_pairs,
)
from agentctl.context.server_model import (
    DEFAULT_CLEARED_RESULT_PLACEHOLDER,
    DEFAULT_SERVER_MODEL,
    TRIGGER_BASES,
    ServerModel,
    TriggerBasis,
)
from agentctl.context.tokens import (
    estimate_block_tokens,
    estimate_request_tokens,
    message_blocks,
)
from agentctl.context.validate import validate_edits

__all__ = [
    "DEFAULT_CLEARED_INPUT_PLACEHOLDER",
    "DEFAULT_CLEARED_RESULT_PLACEHOLDER",
    "DEFAULT_SERVER_MODEL",
    "TRIGGER_BASES",
    "EditOutcome",
    "ServerModel",
    "TriggerBasis",
    "apply_context_edits",
    "validate_edits",
]

DEFAULT_TRIGGER: dict[str, Any] = {"type": "input_tokens", "value": 100_000}  # B.2 [DOC]
DEFAULT_KEEP_TOOL_USES = 3  # B.2 [DOC]

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


def _keep_thinking_turns(edit: Mapping[str, Any], default: int | None) -> int | None:
    """N from `keep`, or None for "all" / {"type": "all"}; `default` when the edit has none."""
    keep = edit.get("keep")
    if not keep:
        return default
    if keep == "all" or (isinstance(keep, Mapping) and keep.get("type") == "all"):
        return None
    return int(keep["value"])


def _clear_thinking(
    messages: list[dict[str, Any]], edit: Mapping[str, Any], default_keep: int | None
) -> dict[str, Any] | None:
    """Strip thinking from assistant messages older than the last N that contain thinking.

    A "turn" is one assistant message (ours; the docs do not say how tool-use continuations
    of one logical turn are counted). `default_keep`: the model's default (ServerModel).
    """
    keep = _keep_thinking_turns(edit, default_keep)
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


def _triggered(edit: Mapping[str, Any], input_tokens: int, tool_uses: int) -> bool:
    """The prompt *exceeds* the trigger (strictly greater; ours, after "exceeds" in the docs)."""
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    measure = tool_uses if trigger.get("type") == "tool_uses" else input_tokens
    return measure > int(trigger["value"])


def _clear_tool_uses(
    messages: list[dict[str, Any]],
    edit: Mapping[str, Any],
    input_tokens: int,
    server: ServerModel,
    basis: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """Clear the oldest tool results beyond `keep`, unless untriggered or below clear_at_least.

    `exclude_tools` pairs, and results below the server model's `min_result_tokens`, are never
    cleared and do not count toward `keep`; the `tool_uses` trigger counts every tool use,
    excluded ones included (all ours). `basis`: None for the "unedited" model, else the
    request (its tools and system) for the "edited" one.
    """
    placeholder = server.placeholder
    victims = _victims(messages, edit, input_tokens, server, basis)
    if victims is None:
        return None
    per_pair = [c for c in (pair_changes(p, edit, placeholder) for p in victims) if c]
    freed = sum(change[3] for changes in per_pair for change in changes)
    at_least = edit.get("clear_at_least") or {}
    if not per_pair or (basis is None and freed < int(at_least.get("value", 0))):
        return None
    for changes in per_pair:
        for block, key, value, _ in changes:
            block[key] = value
    return {
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": len(per_pair),
        "cleared_input_tokens": freed,
    }


def _victims(
    messages: list[dict[str, Any]],
    edit: Mapping[str, Any],
    input_tokens: int,
    server: ServerModel,
    basis: Mapping[str, Any] | None,
) -> list[Pair] | None:
    """The pairs to clear, oldest first; None when the trigger does not fire."""
    pairs = tool_pairs(messages)
    clearable = candidates(pairs, edit, server.min_result_tokens)
    if basis is not None:
        request = {**basis, "messages": messages}
        return clearable[: _edited_boundary(request, clearable, edit, server.placeholder)]
    if not _triggered(edit, input_tokens, len(pairs)):
        return None
    keep = int((edit.get("keep") or {}).get("value", DEFAULT_KEEP_TOOL_USES))
    return clearable[: max(len(clearable) - keep, 0)]


def _edited_boundary(
    request: Mapping[str, Any], clearable: list[Pair], edit: Mapping[str, Any], placeholder: str
) -> int:
    """The "edited" model: request by request, the trigger is compared with the prompt as the
    earlier clearings left it; when it fires, everything but `keep` is cleared (each move
    subject to clear_at_least on what it adds)."""
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    marks = Marks(
        high=int(trigger["value"]),
        low=0,
        keep=int((edit.get("keep") or {}).get("value", DEFAULT_KEEP_TOOL_USES)),
        at_least=int((edit.get("clear_at_least") or {}).get("value", 0)),
        count_uses=trigger.get("type") == "tool_uses",
    )
    freed = [freed_tokens(p, edit, placeholder) for p in clearable]
    return boundary(request, clearable, freed, marks)


# --- both, in array order ----------------------------------------------------------------


def apply_context_edits(
    request: Mapping[str, Any],
    edits: Sequence[Mapping[str, Any]],
    *,
    server: ServerModel = DEFAULT_SERVER_MODEL,
) -> EditOutcome:
    """Apply `edits` in array order to a copy of `request`; the input is never mutated.

    The open rules are the server model's (`server`: trigger basis, which results count toward
    keep, the placeholder, clear_thinking's default keep for the request's model).
    clear_tool_uses measures its `input_tokens` trigger on the prompt as edited by the edits
    before it (ours; B.10). Unknown edit
    types (e.g. compact_20260112) are skipped here: call `validate_edits` first.
    `applied_edits` lists only edits that changed something.
    """
    edited: dict[str, Any] = _json_copy(request)
    messages: list[dict[str, Any]] = edited.setdefault("messages", [])
    original = estimate_request_tokens(request)
    current = original
    applied: list[dict[str, Any]] = []
    for edit in edits:
        kind = edit.get("type")
        if kind == "clear_thinking_20251015":
            default = server.default_thinking_keep(str(request.get("model", "")))
            outcome = _clear_thinking(messages, edit, default)
        elif kind == "clear_tool_uses_20250919":
            basis = None if server.trigger_basis == "unedited" else edited
            outcome = _clear_tool_uses(messages, edit, current, server, basis)
        else:
            continue
        if outcome is not None:
            applied.append(outcome)
            current -= int(outcome["cleared_input_tokens"])
    return EditOutcome(edited, applied, original, estimate_request_tokens(edited))
