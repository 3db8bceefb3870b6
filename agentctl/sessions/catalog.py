"""Recorded sessions as values: load a transcript, list, summarise, export and remove them."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentctl.agent.model import usage_from
from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.settings import Profile
from agentctl.sessions.transcript import find_session, list_sessions, read_records
from agentctl.types import AppliedEdit, MemoryOp, ToolCall, TurnEvent, Usage

EXPORT_FORMAT = "agentctl-session-export"
EXPORT_VERSION = 1
# Cheap pre-filter on a line's start (the type comes right after "v"); json decides.
_LISTED_TYPES = ('"session"', '"event"')


@dataclass(frozen=True)
class TurnRecord:
    """One request/response round as recorded: what was sent, what came back, when."""

    turn: int
    ts: float  # when the request was recorded (the cache clock of a replay)
    body: dict[str, Any]  # the request without `messages`
    messages: tuple[dict[str, Any], ...]  # the unedited history this request carried
    response: dict[str, Any]  # the API's message object
    event: TurnEvent
    segment: int = 0  # how many times the run had been resumed before this turn

    @property
    def usage(self) -> Usage:
        return self.event.usage

    @property
    def cleared_input_tokens(self) -> int:
        return self.event.cleared_input_tokens


@dataclass(frozen=True)
class Session:
    """A whole transcript, parsed: header, turns (in order), final history and outcome."""

    id: str
    path: Path
    header: dict[str, Any]
    turns: tuple[TurnRecord, ...]
    history: tuple[dict[str, Any], ...]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    records: tuple[dict[str, Any], ...]

    @property
    def model(self) -> str:
        return str(self.header.get("model") or "")

    @property
    def offline(self) -> bool:
        return bool(self.header.get("offline"))

    @property
    def status(self) -> str:
        """The stop reason of a finished run, the error kind of a failed one, else "incomplete"."""
        if self.result is not None:
            return str(self.result.get("stop_reason") or "done")
        if self.error is not None:
            return str(self.error.get("kind") or "error")
        return "incomplete"

    @property
    def answer(self) -> str:
        return str((self.result or {}).get("text") or "")

    @property
    def memory_ops(self) -> list[tuple[int, MemoryOp]]:
        return [(t.turn, op) for t in self.turns for op in t.event.memory_ops]


def turn_event_from_json(data: Mapping[str, Any]) -> TurnEvent:
    """A TurnEvent back from its NDJSON/transcript form (`TurnEvent.to_json`)."""
    calls = tuple(
        ToolCall("", str(c.get("name", "")), dict(c.get("input") or {}), bool(c.get("is_error")))
        for c in data.get("tool_calls") or ()
    )
    distance = data.get("trigger_distance")
    return TurnEvent(
        turn=int(data.get("turn", 0)),
        stop_reason=str(data.get("stop_reason") or ""),
        usage=usage_from(data.get("usage")),
        applied_edits=tuple(
            AppliedEdit.from_json(dict(e)) for e in data.get("applied_edits") or ()
        ),
        tool_calls=calls,
        trigger_distance=int(distance) if isinstance(distance, int) else None,
        request_id=str(data.get("request_id") or ""),
    )


def _event_from_response(turn: int, response: Mapping[str, Any]) -> TurnEvent:
    """A TurnEvent for a turn whose event record is missing (a run cut mid-turn)."""
    cm = response.get("context_management") or {}
    edits = tuple(AppliedEdit.from_json(dict(e)) for e in cm.get("applied_edits") or ())
    stop = str(response.get("stop_reason") or "")
    return TurnEvent(turn, stop, usage_from(response.get("usage")), edits)


class _Builder:
    """Walks the records once, keeping the history as it stood at each request."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None
        self.turns: list[TurnRecord] = []
        self.events: dict[int, TurnEvent] = {}
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.segment = 0

    def add(self, record: Mapping[str, Any]) -> None:
        kind = record.get("type")
        if kind == "message":
            del self.messages[int(record["index"]) :]
            self.messages.append(dict(record["message"]))
        elif kind == "request":
            self.pending = dict(record)
            count = record.get("messages_count")
            size = count if isinstance(count, int) else len(self.messages)
            self.pending["_messages"] = tuple(self.messages[:size])
        elif kind == "response" and self.pending is not None:
            self._close_turn(record)
        elif kind == "event":
            self._event(record.get("event") or {})
        elif kind == "resume":
            self.segment += 1
            self.result = self.error = None

    def _close_turn(self, record: Mapping[str, Any]) -> None:
        assert self.pending is not None
        turn, response = int(record.get("turn", 0)), dict(record.get("message") or {})
        request = self.pending
        self.pending = None
        event = _event_from_response(turn, response)
        body = dict(request.get("request") or {})
        ts = float(request.get("ts") or 0.0)
        messages = request["_messages"]
        self.turns.append(TurnRecord(turn, ts, body, messages, response, event, self.segment))

    def _event(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "turn":
            self.events[int(event.get("turn", 0))] = turn_event_from_json(event)
        elif name == "result":
            self.result, self.error = dict(event), None
        elif name == "error":
            self.error = dict(event)

    def finish(self) -> tuple[TurnRecord, ...]:
        """Turns with their recorded events (which carry tool calls and memory ops)."""
        return tuple(replace(t, event=self.events.get(t.turn, t.event)) for t in self.turns)


def parse_session(path: Path, records: Sequence[Mapping[str, Any]]) -> Session:
    """A Session from already-read records; UsageError when there is no session header."""
    header = next((dict(r) for r in records if r.get("type") == "session"), None)
    if header is None:
        raise UsageError(f"session {path.stem}: {path} has no session header record")
    builder = _Builder()
    for record in records:
        builder.add(record)
    return Session(
        id=str(header.get("session") or path.stem),
        path=path,
        header=header,
        turns=builder.finish(),
        history=tuple(builder.messages),
        result=builder.result,
        error=builder.error,
        records=tuple(dict(r) for r in records),
    )


def load_session(ref: str) -> Session:
    """The session named by id, unique prefix or `last` (UsageError, exit 2, otherwise)."""
    path = find_session(ref)
    return parse_session(path, read_records(path))


def session_profile(session: Session) -> Profile:
    """The profile the run used, rebuilt from the header (validated like any profile)."""
    return session_profile_of(session.header)


def session_profile_of(header: Mapping[str, Any]) -> Profile:
    """The profile recorded in a session header; UsageError/ConfigError if it cannot be used."""
    from agentctl.profile.loader import build_profile

    data = header.get("profile")
    session = header.get("session")
    if not isinstance(data, dict):
        raise UsageError(f"session {session}: the header records no profile")
    source = f"session {session}"
    profile, _ = build_profile(data, source=source, base_dir=Path(header.get("cwd", ".")))
    return profile


@dataclass(frozen=True)
class SessionSummary:
    """One row of `sessions list`."""

    id: str
    started: float
    task: str  # the first line of the prompt
    task_source: str
    model: str
    turns: int
    status: str
    prompt_tokens: int
    output_tokens: int
    cost_usd: float | None

    def to_json(self) -> dict[str, Any]:
        cost = self.cost_usd
        return {
            "session": self.id,
            "started": self.started,
            "task": self.task,
            "task_source": self.task_source,
            "model": self.model,
            "turns": self.turns,
            "status": self.status,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(cost, 6) if cost is not None and math.isfinite(cost) else None,
        }


def _light_records(path: Path) -> Iterator[dict[str, Any]]:
    """Only the header and event records: all `sessions list` needs, without parsing bodies."""
    for line in _raw_lines(path):
        if any(marker in line[:40] for marker in _LISTED_TYPES):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash
            if record.get("type") in ("session", "event"):
                yield record


def _raw_lines(path: Path) -> Iterator[str]:
    try:
        with path.open(encoding="utf-8") as f:
            yield from f
    except OSError as err:
        raise UsageError(f"session {path}: cannot read: {err.strerror or err}") from None


def summarize(path: Path) -> SessionSummary | None:
    """The list row of one transcript, or None for a file that is not a session."""
    records = list(_light_records(path))
    header = next((r for r in records if r.get("type") == "session"), None)
    if header is None:
        return None
    events = [r["event"] for r in records if r.get("type") == "event"]
    turns = [turn_event_from_json(e) for e in events if e.get("event") == "turn"]
    usage = sum((t.usage for t in turns), Usage())
    status = _status(events)
    return SessionSummary(
        id=str(header.get("session") or path.stem),
        started=float(header.get("ts") or 0.0),
        task=_first_line(str(header.get("task", ""))) or str(header.get("task_source") or ""),
        task_source=str(header.get("task_source") or ""),
        model=str(header.get("model") or ""),
        turns=len(turns),
        status=status,
        prompt_tokens=usage.prompt_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=_summary_cost(header, turns),
    )


def _status(events: Sequence[Mapping[str, Any]]) -> str:
    for event in reversed(events):
        if event.get("event") == "result":
            return str(event.get("stop_reason") or "done")
        if event.get("event") == "error":
            return str(event.get("kind") or "error")
    return "incomplete"


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line.lstrip("# ")[:60]


def _summary_cost(header: Mapping[str, Any], turns: Sequence[TurnEvent]) -> float | None:
    """Summed per-turn cost under the recorded profile's pricing (None when unknown)."""
    try:
        profile = session_profile_of(header)
    except AgentctlError:  # a header this version cannot read: the list stays readable
        return None
    pricing = profile.pricing(str(header.get("model") or profile.model))
    costs = [pricing.usd(turn.usage) for turn in turns]
    return None if None in costs else sum(c or 0.0 for c in costs)


def list_summaries() -> list[SessionSummary]:
    """Every recorded session, oldest first."""
    rows = (summarize(path) for path in list_sessions())
    return [row for row in rows if row is not None]


def remove_session(session: Session) -> Path:
    """Delete the transcript file; the memory the run wrote is left alone."""
    try:
        os.unlink(session.path)
    except OSError as err:
        raise UsageError(f"session {session.id}: cannot remove {session.path}: {err}") from None
    return session.path


def export_session(session: Session) -> dict[str, Any]:
    """The transcript as one JSON document for other tools: header, turns, history, outcome."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session": session.id,
        "status": session.status,
        "header": session.header,
        "turns": [_turn_json(t) for t in session.turns],
        "messages": list(session.history),
        "result": session.result,
        "error": session.error,
    }


def _turn_json(turn: TurnRecord) -> dict[str, Any]:
    return {
        "turn": turn.turn,
        "ts": turn.ts,
        "messages_count": len(turn.messages),
        "request": turn.body,
        "response": turn.response,
        "event": turn.event.to_json(),
    }
