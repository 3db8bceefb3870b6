"""Reading transcripts: one walk over a file's lines gives its `Transcript` (header, turns,
final history, outcome); `sessions` commands, resume, fork, replay and simulate all take it.
What a line means is `transcript.records`; the writer is `transcript.writer`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentctl.agent.request import is_summary
from agentctl.errors import UsageError, os_reason
from agentctl.home import TRANSCRIPT_SUFFIX, sessions_dir
from agentctl.sessions.transcript.records import (
    LIST_PRICE,
    EventRecord,
    FollowUpRecord,
    MalformedRecord,
    MessageRecord,
    Record,
    RequestRecord,
    ResponseRecord,
    ResumeRecord,
    SessionHeader,
    ToolResultRecord,
    apply_message,
    from_json,
    loads,
    pricing_label,
    resolve_results,
    to_json,
)
from agentctl.types import CACHE_CREATION, AppliedEdit, MemoryOp, Turn, Usage, usage_fields

__all__ = [
    "MessagesView",
    "Transcript",
    "TurnRecord",
    "find_session",
    "list_sessions",
    "load_session",
    "read_kinds",
    "read_records",
    "read_transcript",
]

LAST = "last"


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
    messages_count: int | None = None  # the request's `messages_count` (None: all of them)

    @property
    def usage(self) -> Usage:
        return self.event.usage

    @property
    def cleared_input_tokens(self) -> int:
        return self.event.cleared_input_tokens


@dataclass(frozen=True)
class Transcript:
    """One transcript file, read: header, turns (in order), final history and outcome."""

    id: str  # the file's name: a copied transcript is its own session
    path: Path
    header: SessionHeader
    turns: tuple[TurnRecord, ...]
    history: tuple[dict[str, Any], ...]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    records: tuple[Record, ...]  # every record in order, tool results put back in messages
    warnings: tuple[str, ...] = ()
    size: int = 0  # the bytes read (a writer checks nobody appended since)
    last_turn: int = 0  # the number of the last answered request
    last_stop: str = ""  # the last response's stop reason
    # how the last segment ended: "result", an error kind ("limit", "interrupted", "api",
    # ...), or "unknown" (no outcome recorded since the run or its last resume began)
    outcome: str = "unknown"
    # Each follow-up (`run --continue`): the number of its first turn and its text.
    follow_ups: tuple[tuple[int, str], ...] = ()
    # tool_use id -> its (last) tool_result record: what a resume answers a cut turn with
    tool_results: Mapping[str, ToolResultRecord] = field(default_factory=dict)

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


class MessagesView(Sequence[dict[str, Any]]):
    """Messages `start` to `stop` of a list that only grows: what one request carried,
    without a copy of the history for every turn."""

    __slots__ = ("_items", "_start", "_stop")

    def __init__(self, items: list[dict[str, Any]], start: int, stop: int) -> None:
        self._items, self._start, self._stop = items, start, stop

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):  # a slice of the slice: at C speed
            return self._items[self._start : self._stop][index]
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
    """The history rule (`format.apply_message`) with views of what each request sent that
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
    """Takes the records one by one as they are read, keeping the history as it stood at
    each request; `add` gives the record as kept (a message with its tool results put back)."""

    def __init__(self) -> None:
        self.header: SessionHeader | None = None
        self.pricing = LIST_PRICE
        self.history = _History()
        self.pending: tuple[RequestRecord, MessagesView] | None = None
        self.turns: list[TurnRecord] = []
        self.events: dict[int, Turn] = {}
        self.tool_results: dict[str, ToolResultRecord] = {}
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.segment = 0
        self.last_turn, self.last_stop, self.outcome = 0, "", "unknown"
        self.follow_ups: list[tuple[int, str]] = []

    def add(self, record: Record) -> Record:
        if isinstance(record, MessageRecord):
            record = resolve_results(record, self.tool_results)
            self.history.apply(record)
        elif isinstance(record, ToolResultRecord):
            self.tool_results[record.tool_use_id] = record
        elif isinstance(record, RequestRecord):
            # from an on-demand summary on, as the request sent it
            self.pending = (record, self.history.sent(record.messages_count))
        elif isinstance(record, ResponseRecord):
            self._response(record)
        elif isinstance(record, EventRecord):
            self._event(record.event)
        elif isinstance(record, ResumeRecord | FollowUpRecord):
            self._continued(record)
        elif self.header is None:
            self.header, self.pricing = record, record.pricing
        return record

    def _response(self, record: ResponseRecord) -> None:
        # A request that got no response (interrupted, failed) is no turn: resume reuses its
        # number, so turns stay 1, 2, 3, ... and each number names one answered request.
        self.last_turn = max(self.last_turn, record.turn)
        self.last_stop = str(record.message.get("stop_reason") or "")
        if self.pending is None:
            return
        (request, messages), self.pending = self.pending, None
        event = _event_from_response(record.turn, record.message)
        turn = TurnRecord(
            record.turn, request.ts, dict(request.request), messages, record.message, event,
            self.segment, self.pricing, request.messages_count,
        )  # fmt: skip
        self.turns.append(turn)

    def _continued(self, record: ResumeRecord | FollowUpRecord) -> None:
        # A follow-up from the process that answered the turn before keeps its client
        # (offline: the same emulator and its cache); a resume never does.
        self.segment += not isinstance(record, FollowUpRecord) or record.new_client
        self.pricing = record.pricing
        self.result = self.error = None
        self.outcome = "unknown"
        if isinstance(record, FollowUpRecord):
            self.follow_ups.append((record.from_turn + 1, record.text))

    def _event(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == "turn":
            self.events[int(event.get("turn", 0))] = Turn.from_json(event)
        elif name == "result":
            self.result, self.error, self.outcome = dict(event), None, "result"
        elif name == "error":
            self.error, self.outcome = dict(event), str(event.get("kind", "error"))

    def finish(
        self, path: Path, records: list[Record], warnings: list[str], size: int
    ) -> Transcript:
        if self.header is None:
            raise UsageError(f"session {path.stem}: {path} has no session header record")
        # the turns with their recorded events (which carry tool calls and memory ops)
        turns = tuple(
            replace(t, event=_with_split(self.events.get(t.turn, t.event), t.event))
            for t in self.turns
        )
        return Transcript(
            id=path.stem,
            path=path,
            header=self.header,
            turns=turns,
            history=tuple(self.history.items),
            result=self.result,
            error=self.error,
            records=tuple(records),
            warnings=tuple(warnings),
            size=size,
            last_turn=self.last_turn,
            last_stop=self.last_stop,
            outcome=self.outcome,
            follow_ups=tuple(self.follow_ups),
            tool_results=self.tool_results,
        )


def _event_from_response(turn: int, response: Mapping[str, Any]) -> Turn:
    """A Turn for a turn whose event record is missing (a run cut mid-turn)."""
    cm = response.get("context_management") or {}
    edits = tuple(AppliedEdit.from_json(dict(e)) for e in cm.get("applied_edits") or ())
    stop = str(response.get("stop_reason") or "")
    return Turn(turn, stop, Usage.from_json(response.get("usage")), edits)


def _with_split(event: Turn, response: Turn) -> Turn:
    """`event` with the split of cache writes by TTL from its response when the event has
    none (an agentctl before the split was kept wrote it; the response is the API's own)."""
    mine, theirs = event.usage, response.usage
    same = mine.cache_creation_input_tokens == theirs.cache_creation_input_tokens
    if mine.cache_split_known or not (same and theirs.cache_split_known):
        return event
    split = {name: getattr(theirs, name) for name in usage_fields(CACHE_CREATION)}
    return replace(event, usage=replace(mine, **split))


def read_transcript(path: Path) -> Transcript:
    """The transcript in `path`, in one walk over its lines (UsageError naming file and line
    for anything malformed; a line cut by a crash at the end is skipped with a warning)."""
    builder, records, warnings, size = _walk(path, stored=False)
    return builder.finish(path, records, warnings, size)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every record of a transcript as its JSON object, as stored (a message refers to its
    tool results by id), checked like `read_transcript`, with or without a header."""
    _, records, _, _ = _walk(path, stored=True)
    return [to_json(record) for record in records]


def _walk(path: Path, *, stored: bool) -> tuple[_Builder, list[Record], list[str], int]:
    """The one walk: each line decoded and given to the builder as it is read; the records
    as `stored`, or as kept (a message with its tool results put back)."""
    builder = _Builder()
    records: list[Record] = []
    warnings: list[str] = []
    size = 0
    for number, line, record in _decoded(path, (), warnings):
        size += len(line)
        if record is not None:
            try:
                kept = builder.add(record)
            except MalformedRecord as err:
                raise UsageError(_malformed(path, number, err)) from None
            records.append(record if stored else kept)
    return builder, records, warnings, size


def read_kinds(path: Path, kinds: Collection[str]) -> list[Record]:
    """Just the records of types `kinds`, skipping other lines undecoded (a cheap read for a
    list row: no history, no turns)."""
    found: list[Record] = []
    for _, _, record in _decoded(path, kinds, []):
        if record is not None and record.TYPE in kinds:
            found.append(record)
    return found


def load_session(ref: str) -> Transcript:
    """The transcript of the session named by id, unique prefix or `last` (UsageError, exit
    2, otherwise)."""
    return read_transcript(find_session(ref))


def _decoded(
    path: Path, kinds: Collection[str], warnings: list[str]
) -> Iterator[tuple[int, bytes, Record | None]]:
    """(number, line, record or None) for each line; with `kinds`, a line that cannot hold
    one of those types is not decoded (its record is None)."""
    markers = tuple(f'"{kind}"'.encode() for kind in kinds)
    for number, line, last in _lines(path):
        if markers and not any(m in line[:40] for m in markers):
            yield number, line, None
            continue
        try:
            record = from_json(loads(line))
        except ValueError as err:
            if last and not line.endswith(b"\n") and not isinstance(err, MalformedRecord):
                warnings.append(_cut_warning(path, number))
                yield number, line, None  # its bytes count: a writer checks the file's size
                return
            raise UsageError(_malformed(path, number, err)) from None
        yield number, line, record


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line, is last) for each line, split on b"\\n" only."""
    try:
        with path.open("rb") as f:
            previous = f.readline()
            number = 1
            while previous:
                line = f.readline()
                yield number, previous, not line
                previous, number = line, number + 1
    except OSError as err:
        raise UsageError(f"session {path}: cannot read: {os_reason(err)}") from None


def _cut_warning(path: Path, number: int) -> str:
    return (
        f"session {path.stem}: line {number} of {path} was cut (by a crash or a full disk) "
        "and is ignored"
    )


def _malformed(path: Path, number: int, err: ValueError) -> str:
    if isinstance(err, MalformedRecord):
        return f"session {path}: line {number}: {err}"
    return f"session {path}: line {number} is not a JSON record"


def list_sessions() -> list[Path]:
    """Transcript files, oldest first by modification time."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"*{TRANSCRIPT_SUFFIX}"), key=lambda p: (p.stat().st_mtime, p.name))


def find_session(ref: str) -> Path:
    """A transcript by session id, unique id prefix or `last` (most recently written)."""
    sessions = list_sessions()
    if not sessions:
        raise UsageError(f"session {ref}: no sessions yet in {sessions_dir()}")
    if ref == LAST:
        return sessions[-1]
    exact = [p for p in sessions if p.stem == ref]
    matches = exact or [p for p in sessions if p.stem.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"session {ref}: no such session (see `agentctl sessions list`)")
    names = ", ".join(p.stem for p in matches[:5])
    raise UsageError(f"session {ref}: ambiguous prefix, matches {names}")
