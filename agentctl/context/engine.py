"""The server's context-editing rules as pure functions on raw Messages API request dicts.

Implements `clear_thinking_20251015` and `clear_tool_uses_20250919` (the context-editing
docs) for the emulator and the what-if simulator. The server is stateless: the client
resends the full history, so edits are recomputed from scratch on every request. Where the docs are
silent the choice is ours and says so; docs/context.md lists every such choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentctl.context import memo
from agentctl.context.batching import Marks, boundary
from agentctl.context.compaction import compact_edit, compacted
from agentctl.context.memo import remembered
from agentctl.context.pairs import (
    DEFAULT_CLEARED_INPUT_PLACEHOLDER,
    Pair,
    candidates,
    freed_tokens,
    pair_changes,
    replaced,
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
    "edit_as_server",
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


def _unthought(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of the message without its thinking blocks."""
    return {**message, "content": [b for b in message["content"] if not _is_thinking(b)]}


def _with_content(message: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    return {**message, "content": content}


def _rewrite(
    messages: list[dict[str, Any]], changes: list[tuple[dict[str, Any], str, Any]]
) -> None:
    """Put each (block, key, value) change into `messages` by copy on write: the changed
    blocks, and the messages holding them, become copies (`pairs.replaced`: in a replay, the
    same copies every turn); nothing the list held before is modified."""
    new = _replacements(changes)
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list) and any(id(b) in new for b in content):
            messages[index] = _rewritten(message, new)


def _rewrite_one(
    messages: list[dict[str, Any]], index: int, changes: list[tuple[dict[str, Any], str, Any]]
) -> None:
    """`_rewrite` for changes that all fall in message `index` (the caller knows where)."""
    messages[index] = _rewritten(messages[index], _replacements(changes))


def _replacements(changes: list[tuple[dict[str, Any], str, Any]]) -> dict[int, dict[str, Any]]:
    """The changed copy of each block, by the id of the block it replaces."""
    new: dict[int, dict[str, Any]] = {}
    for block, key, value in changes:
        current = new.get(id(block), block)
        new[id(block)] = replaced(current, key, value)
    return new


def _rewritten(message: dict[str, Any], new: Mapping[int, dict[str, Any]]) -> dict[str, Any]:
    blocks = [new.get(id(b), b) for b in message["content"]]
    ids = tuple(id(b) for b in blocks)
    return remembered("rewritten", message, partial(_with_content, message, blocks), ids)


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
    """Strip thinking from every assistant message but those of the last N thinking turns,
    where the turn being answered is the first of the N (recorded: keep 1 leaves no thinking
    of earlier turns; `cleared_thinking_turns` counts the assistant messages whose thinking
    went). When the request ends with the tool results of the last assistant message, that
    message is the turn being answered and keeps its thinking (ours: in the recordings it had
    none). `default_keep`: the model's default (ServerModel).
    """
    keep = _keep_thinking_turns(edit, default_keep)
    if keep is None:
        return None
    answered = _answered(messages)
    earlier = [
        m
        for m in messages
        if m is not answered
        and m.get("role") == "assistant"
        and any(_is_thinking(b) for b in message_blocks(m))
    ]
    cleared_turns = earlier[: max(len(earlier) - (keep - 1), 0)]
    if not cleared_turns:
        return None
    reported = 0
    stripped: dict[int, dict[str, Any]] = {}
    for message in cleared_turns:
        blocks = message["content"]  # a list: it holds a thinking block
        reported += sum(_thinking_text_tokens(b) for b in blocks if _is_thinking(b))
        stripped[id(message)] = remembered("unthought", message, partial(_unthought, message))
    messages[:] = [stripped.get(id(m), m) for m in messages]
    return {
        "type": "clear_thinking_20251015",
        "cleared_thinking_turns": len(cleared_turns),
        "cleared_input_tokens": reported,
    }


def _answered(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The assistant message whose tool results end the request, if they do."""
    if len(messages) < 2 or messages[-2].get("role") != "assistant":
        return None
    last = messages[-1]
    blocks = message_blocks(last)
    if last.get("role") != "user" or not any(b.get("type") == "tool_result" for b in blocks):
        return None
    return messages[-2]


def _thinking_text_tokens(block: Mapping[str, Any]) -> int:
    """What the server reports for one cleared thinking block: its text, without the
    per-block overhead and signature the bill also drops (S9's recorded reply: 44 reported
    where the billed input fell by 110)."""
    empty = {"type": block.get("type"), "thinking": "", "data": "", "signature": ""}
    return estimate_block_tokens(block) - estimate_block_tokens(empty)


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
    _rewrite(
        messages, [(block, key, value) for changes in per_pair for block, key, value, _ in changes]
    )
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
    clearable = candidates(pairs, edit, server)
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
    if memo.active():  # the edits copy on write: a shallow copy is enough (context.memo)
        edited: dict[str, Any] = {**request, "messages": list(request.get("messages") or [])}
    else:
        edited = _json_copy(request)
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
            # what the next edit measures: the prompt as this one left it (the reported
            # figure can be smaller: clear_thinking reports the text alone)
            current = estimate_request_tokens(edited)
    return EditOutcome(edited, applied, original, estimate_request_tokens(edited))


def edit_as_server(
    request: Mapping[str, Any], *, server: ServerModel = DEFAULT_SERVER_MODEL
) -> EditOutcome:
    """What the server does to one request: the edits of its `context_management`, computed
    and reported on the whole history, compaction blocks or not (the cookbook's saved
    "all-three" run kept reporting, and moving, its clearing after a compaction); then, with
    compact_20260112, the prompt the model reads: from the last compaction block on.
    `original_input_tokens` is then that view's size before the edits."""
    management = request.get("context_management")
    edits = (management.get("edits") if isinstance(management, Mapping) else None) or []
    outcome = apply_context_edits(request, edits, server=server)
    if compact_edit(request) is None:
        return outcome
    seen = compacted(outcome.request)
    original = estimate_request_tokens(compacted(request))
    return EditOutcome(seen, outcome.applied_edits, original, estimate_request_tokens(seen))
