"""Rebuild an interrupted or limit-stopped run from its transcript so `--resume` can continue it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctl.agent.request import reported_size
from agentctl.errors import UsageError
from agentctl.sessions.catalog import Session, load_session
from agentctl.sessions.record import (
    Record,
    RequestRecord,
    ResponseRecord,
    SessionHeader,
    ToolResultRecord,
)
from agentctl.types import AppliedEdit, Usage

# Stop reasons after which the last assistant message is resent as is.
RESEND_STOPS = frozenset({"pause_turn", "compaction"})


@dataclass(frozen=True)
class SavedRun:
    """What a transcript says about a run, enough to continue it."""

    session: str  # the file's name: the file resumed is the file appended to
    path: Path
    header: SessionHeader
    messages: list[dict[str, Any]]
    last_turn: int
    last_stop: str
    outcome: str  # "result", an error kind ("limit", "interrupted", "api", ...), or "unknown"
    # tool_use id -> its recorded tool_result record (to finish a turn cut mid-tools)
    tool_results: dict[str, ToolResultRecord] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    size: int = 0  # of the file as read
    # the prompt size each recorded response reported, by messages answered (steering)
    measured: dict[int, int] = field(default_factory=dict)


def load_run(ref: str) -> SavedRun:
    """The session named by id, unique prefix or `last`; UsageError if it cannot continue."""
    run = saved_run(load_session(ref))
    if run.outcome == "result":
        raise UsageError(
            f"session {run.session}: already finished ({run.last_stop}); start a new run, or "
            f"ask a follow-up with: agentctl run --continue {run.session} -p TEXT"
        )
    if run.outcome == "output":  # it ended with an answer: there is no request left to send
        raise UsageError(
            f"session {run.session}: finished with an answer that did not match its output"
            " schema; start a new run, or ask a follow-up with: agentctl run --continue"
            f" {run.session} -p TEXT"
        )
    return run


def saved_run(saved: Session) -> SavedRun:
    """What a parsed transcript says about its run, finished or not."""
    records = saved.records
    return SavedRun(
        session=saved.id,
        path=saved.path,
        header=saved.header,
        messages=list(saved.history),
        last_turn=saved.last_turn,
        last_stop=saved.last_stop,
        outcome=saved.outcome,
        tool_results={r.tool_use_id: r for r in records if isinstance(r, ToolResultRecord)},
        warnings=saved.warnings,
        size=saved.size,
        measured=recorded_sizes(records),
    )


def recorded_sizes(records: Sequence[Record]) -> dict[int, int]:
    """What each recorded response reported of its prompt (`request.reported_size`), by the
    number of messages its request carried: a resumed run steers on them as the run did."""
    sizes: dict[int, int] = {}
    sent: RequestRecord | None = None
    for record in records:
        if isinstance(record, RequestRecord):
            sent = record
        elif isinstance(record, ResponseRecord) and sent and sent.turn == record.turn:
            size = response_size(sent.request, record.message)
            if size is not None and sent.messages_count is not None:
                sizes[sent.messages_count] = size
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


def resumable_history(run: SavedRun) -> list[dict[str, Any]]:
    """The history to continue from.

    A trailing answer with tool calls (the run stopped while running them) gets its tool
    results from the transcript, so calls that ran are not run twice; a call with no recorded
    result is answered with an is_error "interrupted" result. A trailing answer cut by
    max_tokens (or any other that is not resent as is) is dropped: the model redoes that turn.
    """
    messages = list(run.messages)
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
        raise UsageError(f"session {run.session}: the transcript holds no messages to resume from")
    return messages


def _result(use: dict[str, Any], run: SavedRun) -> dict[str, Any]:
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
