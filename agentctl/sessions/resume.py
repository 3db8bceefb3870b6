"""Rebuild an interrupted or limit-stopped run from its transcript so `--resume` can continue it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentctl.agent.request import reported_size
from agentctl.errors import UsageError
from agentctl.sessions.transcript import Transcript, TurnRecord, load_session
from agentctl.types import AppliedEdit, Usage

# Stop reasons after which the last assistant message is resent as is.
RESEND_STOPS = frozenset({"pause_turn", "compaction"})


def load_run(ref: str) -> Transcript:
    """The session named by id, unique prefix or `last`; UsageError if it cannot continue."""
    run = load_session(ref)
    if run.outcome == "result":
        raise UsageError(
            f"session {run.id}: already finished ({run.last_stop}); start a new run, or "
            f"ask a follow-up with: agentctl run --continue {run.id} -p TEXT"
        )
    if run.outcome == "output":  # it ended with an answer: there is no request left to send
        raise UsageError(
            f"session {run.id}: finished with an answer that did not match its output"
            " schema; start a new run, or ask a follow-up with: agentctl run --continue"
            f" {run.id} -p TEXT"
        )
    return run


def recorded_sizes(turns: Sequence[TurnRecord]) -> dict[int, int]:
    """What each recorded response reported of its prompt (`request.reported_size`), by the
    number of messages its request carried: a resumed run steers on them as the run did."""
    sizes: dict[int, int] = {}
    for turn in turns:
        size = response_size(turn.body, turn.response)
        if size is not None and turn.messages_count is not None:
            sizes[turn.messages_count] = size
    return sizes


def response_size(
    request: Mapping[str, Any], message: Mapping[str, Any], unedited: bool = False
) -> int | None:
    """`request.reported_size` of a recorded request and its response message."""
    cm = message.get("context_management") or {}
    edits = tuple(AppliedEdit.from_json(dict(e)) for e in cm.get("applied_edits") or ())
    content = [b for b in message.get("content") or () if isinstance(b, Mapping)]
    usage = Usage.from_json(message.get("usage"))
    asked = "compaction" in request
    return reported_size(usage, content, edits, compaction_request=asked, unedited=unedited)


INTERRUPTED_RESULT = (
    "Error: the run was interrupted before this tool call finished; call it again if you "
    "still need its result"
)


def resumable_history(run: Transcript) -> list[dict[str, Any]]:
    """The history to continue from.

    A trailing answer with tool calls (the run stopped while running them) gets its tool
    results from the transcript, so calls that ran are not run twice; a call with no recorded
    result is answered with an is_error "interrupted" result. A trailing answer cut by
    max_tokens (or any other that is not resent as is) is dropped: the model redoes that turn.
    """
    messages = list(run.history)
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant" and run.last_stop not in RESEND_STOPS:
        content = last.get("content")
        blocks = content if isinstance(content, list) else []
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        if run.last_stop == "tool_use" and uses:
            messages.append({"role": "user", "content": [_result(u, run) for u in uses]})
        else:
            messages.pop()
    if not messages:
        raise UsageError(f"session {run.id}: the transcript holds no messages to resume from")
    return messages


def _result(use: dict[str, Any], run: Transcript) -> dict[str, Any]:
    record = run.tool_results.get(str(use.get("id")))
    content = record.content if record else INTERRUPTED_RESULT
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": use.get("id"),
        "content": content,
    }
    if record is None or record.is_error:
        result["is_error"] = True
    return result
