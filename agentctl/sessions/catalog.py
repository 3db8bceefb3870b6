"""Recorded sessions as values: load a transcript, list, summarise, export and remove them."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentctl.agent.request import is_summary
from agentctl.context.prices import Pricing
from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.settings import Profile
from agentctl.sessions.record import (
    BATCH_PRICE,
    LIST_PRICE,
    EventRecord,
    FollowUpRecord,
    MessageRecord,
    Record,
    RequestRecord,
    ResponseRecord,
    ResumeRecord,
    SessionHeader,
    Transcript,
    apply_message,
    to_json,
)
from agentctl.sessions.summary import SessionSummary as SessionSummary
from agentctl.sessions.transcript import find_session, in_use, list_sessions, read_transcript
from agentctl.types import CACHE_CREATION, AppliedEdit, MemoryOp, Totals, Turn, Usage, usage_fields

EXPORT_FORMAT = "agentctl-session-export"
EXPORT_VERSION = 1


@dataclass(frozen=True)
class TurnRecord:
    """One request/response round as recorded: what was sent, what came back, when."""

    turn: int
    ts: float  # when the request was recorded (the cache clock of a replay)
    body: dict[str, Any]  # the request without `messages`
    messages: Sequence[dict[str, Any]]  # the unedited history this request carried (a view)
    response: dict[str, Any]  # the API's message object
    event: Turn
    # how many times the run had been continued by a new client before this turn (each
    # resume; each follow-up from a new process)
    segment: int = 0
    pricing: str = LIST_PRICE  # how it was billed: its segment's header or resume record

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
    header: SessionHeader
    turns: tuple[TurnRecord, ...]
    history: tuple[dict[str, Any], ...]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    records: tuple[Record, ...]
    warnings: tuple[str, ...] = ()
    size: int = 0  # the bytes read (a writer checks nobody appended since)
    last_turn: int = 0  # the number of the last answered request
    last_stop: str = ""  # the last response's stop reason
    # how the last segment ended: "result", an error kind ("limit", "interrupted", "api",
    # ...), or "unknown" (no outcome recorded since the run or its last resume began)
    outcome: str = "unknown"
    # Each follow-up (`run --continue`): the number of its first turn and its text.
    follow_ups: tuple[tuple[int, str], ...] = ()

    @property
    def model(self) -> str:
        return self.header.model

    @property
    def offline(self) -> bool:
        return self.header.offline

    @property
    def pricing(self) -> str:
        """How the session was billed: "list", "batch", or "mixed" (a batch run resumed)."""
        return pricing_label([t.pricing for t in self.turns] or [self.header.pricing])

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


def _event_from_response(turn: int, response: Mapping[str, Any]) -> Turn:
    """A Turn for a turn whose event record is missing (a run cut mid-turn)."""
    cm = response.get("context_management") or {}
    edits = tuple(AppliedEdit.from_json(dict(e)) for e in cm.get("applied_edits") or ())
    stop = str(response.get("stop_reason") or "")
    return Turn(turn, stop, Usage.from_json(response.get("usage")), edits)


def priced(prices: Profile, model: str, pricing: str = LIST_PRICE) -> Pricing:
    """The one way a recorded turn is priced: the recorded profile's prices for `model`, at
    the Message Batches discount when its segment (the header, or the resume record before
    it) says `pricing: "batch"`."""
    return dataclasses.replace(prices.pricing(model), batch=pricing == BATCH_PRICE)


def turn_pricing(session: Session, prices: Profile, turn: TurnRecord) -> Pricing:
    """How `turn` of `session` is priced, recorded or replayed: `priced` at its pricing."""
    return priced(prices, session.model, turn.pricing)


def pricing_label(pricings: Sequence[str]) -> str:
    """ "list" or "batch" when every turn agrees, else "mixed"."""
    kinds = set(pricings)
    return kinds.pop() if len(kinds) == 1 else "mixed"


class MessagesView(Sequence[dict[str, Any]]):
    """Messages `start` to `stop` of a list that only grows: what one request carried,
    without a copy of the history for every turn."""

    __slots__ = ("_items", "_start", "_stop")

    def __init__(self, items: list[dict[str, Any]], start: int, stop: int) -> None:
        self._items, self._start, self._stop = items, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._items[i] for i in range(self._start, self._stop)[index]]
        return self._items[range(self._start, self._stop)[index]]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for index in range(self._start, self._stop):
            yield self._items[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessagesView({list(self)!r})"


class _History:
    """The history rule (`record.apply_message`) with views of what each request sent that
    stay valid: a message that rewrites the history (a resume going back) starts a new list,
    so the old views keep the messages they had; the last summary is tracked as it comes."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.summaries: list[int] = []  # indexes of on-demand summaries, ascending

    def apply(self, record: MessageRecord) -> None:
        index, items = record.index, self.items
        if index > len(items):
            apply_message(items, record)  # raises MalformedRecord, naming the gap
        if index < len(items):
            self.items = items[:index]
            self.summaries = [i for i in self.summaries if i < index]
        self.items.append(record.message)
        if is_summary(record.message):
            self.summaries.append(index)

    def sent(self, count: int | None) -> MessagesView:
        """The first `count` messages (all without one) from the last summary among them on."""
        stop = len(self.items) if count is None else min(count, len(self.items))
        start = next((i for i in reversed(self.summaries) if i < stop), 0)
        return MessagesView(self.items, start, stop)


class _Builder:
    """Walks the records once, keeping the history as it stood at each request."""

    def __init__(self, pricing: str = LIST_PRICE) -> None:
        self.pricing = pricing
        self.pending: tuple[RequestRecord, MessagesView] | None = None
        self.turns: list[TurnRecord] = []
        self.events: dict[int, Turn] = {}
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.segment = 0
        self.last_turn, self.last_stop, self.outcome = 0, "", "unknown"
        self.follow_ups: list[tuple[int, str]] = []

    def add(self, record: Record, history: _History) -> None:
        if isinstance(record, MessageRecord):
            history.apply(record)
        elif isinstance(record, RequestRecord):
            # from an on-demand summary on, as the request sent it
            self.pending = (record, history.sent(record.messages_count))
        elif isinstance(record, ResponseRecord):
            # A request that got no response (interrupted, failed) is no turn: resume reuses
            # its number, so turns stay 1, 2, 3, ... and each number names one answered request.
            self.last_turn = max(self.last_turn, record.turn)
            self.last_stop = str(record.message.get("stop_reason") or "")
            if self.pending is not None:
                self._close_turn(record)
        elif isinstance(record, EventRecord):
            self._event(record.event)
        elif isinstance(record, ResumeRecord | FollowUpRecord):
            # A follow-up from the process that answered the turn before keeps its client
            # (offline: the same emulator and its cache); a resume never does.
            self.segment += not isinstance(record, FollowUpRecord) or record.new_client
            self.pricing = record.pricing
            self.result = self.error = None
            self.outcome = "unknown"
            if isinstance(record, FollowUpRecord):
                self.follow_ups.append((record.from_turn + 1, record.text))

    def _close_turn(self, record: ResponseRecord) -> None:
        assert self.pending is not None
        (request, messages), self.pending = self.pending, None
        event = _event_from_response(record.turn, record.message)
        body = dict(request.request)
        turn = TurnRecord(
            record.turn, request.ts, body, messages, record.message, event, self.segment,
            self.pricing,
        )  # fmt: skip
        self.turns.append(turn)

    def _event(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "turn":
            self.events[int(event.get("turn", 0))] = Turn.from_json(event)
        elif name == "result":
            self.result, self.error, self.outcome = dict(event), None, "result"
        elif name == "error":
            self.error, self.outcome = dict(event), str(event.get("kind", "error"))

    def finish(self) -> tuple[TurnRecord, ...]:
        """Turns with their recorded events (which carry tool calls and memory ops)."""
        return tuple(
            replace(t, event=_with_split(self.events.get(t.turn, t.event), t.event))
            for t in self.turns
        )


def _with_split(event: Turn, response: Turn) -> Turn:
    """`event` with the split of cache writes by TTL from its response when the event has
    none (an agentctl before the split was kept wrote it; the response is the API's own)."""
    mine, theirs = event.usage, response.usage
    same = mine.cache_creation_input_tokens == theirs.cache_creation_input_tokens
    if mine.cache_split_known or not (same and theirs.cache_split_known):
        return event
    split = {name: getattr(theirs, name) for name in usage_fields(CACHE_CREATION)}
    return replace(event, usage=replace(mine, **split))


def parse_session(transcript: Transcript) -> Session:
    """The Session of a transcript: its turns, final history and outcome. The one walk over
    a transcript's records: `sessions` commands, resume, replay and simulate all read it."""
    builder = _Builder(transcript.header.pricing)
    history = _History()
    for record in transcript.records:
        builder.add(record, history)
    return Session(
        id=transcript.id,
        path=transcript.path,
        header=transcript.header,
        turns=builder.finish(),
        history=tuple(history.items),
        result=builder.result,
        error=builder.error,
        records=transcript.records,
        warnings=transcript.warnings,
        size=transcript.size,
        last_turn=builder.last_turn,
        last_stop=builder.last_stop,
        outcome=builder.outcome,
        follow_ups=tuple(builder.follow_ups),
    )


def load_session(ref: str) -> Session:
    """The session named by id, unique prefix or `last` (UsageError, exit 2, otherwise)."""
    return parse_session(read_transcript(find_session(ref)))


def session_profile(session: Session) -> Profile:
    """The profile the run used, rebuilt from the header (validated like any profile)."""
    return session_profile_of(session.header, session.id)


def session_profile_of(header: SessionHeader, name: str) -> Profile:
    """The profile recorded in a session header; UsageError/ConfigError if it cannot be used."""
    from agentctl.profile.loader import build_profile

    data = header.profile
    if not data:
        raise UsageError(f"session {name}: the header records no profile")
    source = f"session {name}"
    profile, _ = build_profile(data, source=source, base_dir=Path(header.cwd))
    return profile


class SummaryTally:
    """A list row built record by record: from a file's header, resume and event records
    (`summarize`), or as a writer appends them (the sessions index)."""

    ONLY = (SessionHeader.TYPE, EventRecord.TYPE, ResumeRecord.TYPE, FollowUpRecord.TYPE)

    def __init__(self) -> None:
        self.header: SessionHeader | None = None
        self.pricing = LIST_PRICE
        self.turns: list[tuple[Turn, str]] = []  # each turn event with its segment's pricing
        self.status = "incomplete"
        self.follow_ups = 0  # user turns after the first (`run --continue`)

    def add(self, record: Record) -> None:
        if isinstance(record, SessionHeader):
            if self.header is None:
                self.header, self.pricing = record, record.pricing
        elif isinstance(record, ResumeRecord | FollowUpRecord):
            self.pricing = record.pricing
            self.follow_ups += isinstance(record, FollowUpRecord)
        elif isinstance(record, EventRecord):
            self._event(record)

    def _event(self, record: EventRecord) -> None:
        name = record.name
        if name == "turn":
            self.turns.append((Turn.from_json(record.event), self.pricing))
        elif name == "result":
            self.status = str(record.event.get("stop_reason") or "done")
        elif name == "error":
            self.status = str(record.event.get("kind") or "error")

    def summary(self, session: str) -> SessionSummary | None:
        """The row of session `session` (None before its header)."""
        header = self.header
        if header is None:
            return None
        return SessionSummary(
            id=session,
            started=header.ts,
            task=_first_line(header.task) or header.task_source,
            task_source=header.task_source,
            model=header.model,
            turns=len(self.turns),
            status=self.status,
            totals=_summary_totals(header, self.turns),
            pricing=pricing_label([p for _, p in self.turns] or [header.pricing]),
            forked_from=header.forked_from,
            forked_at=header.forked_at,
            follow_ups=self.follow_ups,
        )


def summarize(path: Path) -> SessionSummary | None:
    """The list row of one transcript (header, resume and event records only), None for a
    file without one."""
    try:
        transcript = read_transcript(path, only=SummaryTally.ONLY)
    except UsageError:
        return _unreadable(path)
    tally = SummaryTally()
    for record in transcript.records:
        tally.add(record)
    return tally.summary(transcript.id)


def _unreadable(path: Path) -> SessionSummary | None:
    """A row saying the file cannot be read (`sessions show` names the line), if it is a file."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    started = path.stat().st_mtime
    return SessionSummary(path.stem, started, "", "", "", 0, "unreadable", UNKNOWN_COST)


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line.lstrip("# ")[:60]


UNKNOWN_COST = Totals(cost_usd=math.nan)


def _summary_totals(header: SessionHeader, turns: Sequence[tuple[Turn, str]]) -> Totals:
    """The sum of the turns, each priced at its segment's pricing under the recorded
    profile's prices (cost NaN when unknown)."""
    events = [turn for turn, _ in turns]
    profile = _prices_of(json.dumps(header.profile, sort_keys=True), header.cwd)
    if profile is None:  # a header this version cannot read: the list stays readable
        return Totals.of(events, [None] * len(events)) + UNKNOWN_COST
    model = header.model or profile.model
    return Totals.of(events, [priced(profile, model, p).usd(t.usage) for t, p in turns])


@functools.lru_cache(maxsize=32)
def _prices_of(profile: str, cwd: str) -> Profile | None:
    """The profile of a header (as JSON, and its cwd), None if it cannot be built. Kept: the
    sessions of one machine mostly share a few profiles, and building one is most of the
    cost of reading a transcript's list row."""
    header = SessionHeader(profile=json.loads(profile), cwd=cwd)
    try:
        return session_profile_of(header, "list")
    except AgentctlError:
        return None


def list_summaries() -> list[SessionSummary]:
    """Every recorded session, oldest first, read from the files (`sessions.index.listing`
    serves the same rows from the index)."""
    rows = (summarize(path) for path in list_sessions())
    return [row for row in rows if row is not None]


def remove_session(session: Session) -> Path:
    """Delete the transcript file; the memory the run wrote is left alone."""
    if in_use(session.path):
        raise UsageError(f"session {session.id}: a run is using it; wait for that run to end")
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
        "header": to_json(session.header),
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
