"""The transcript format (version 1): typed header and records, their JSON, and the history rule.

The one owner of what a transcript line means; `transcript` reads and writes the lines,
everything else (catalog, resume, replay, stats) works on these types. The record types and
their fields are documented in docs/run.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from agentctl.types import USAGE_OBJECTS, USAGE_TOKENS, usage_fields

FORMAT_VERSION = 1
# How a run's tokens were billed: at list price (the Messages API) or at the Message Batches
# discount. Absent in transcripts written before the field existed: those runs were list.
LIST_PRICE, BATCH_PRICE = "list", "batch"
PRICINGS = (LIST_PRICE, BATCH_PRICE)


class MalformedRecord(ValueError):
    """A line that is JSON but not a record of this format; the reader adds file and line."""


@dataclass(frozen=True)
class SessionHeader:
    """The first record of a transcript: what was run, with which profile, from where."""

    TYPE: ClassVar[str] = "session"
    session: str = ""
    task: str = ""
    task_source: str = ""
    profile: dict[str, Any] = field(default_factory=dict)
    profile_source: str = ""
    model: str = ""
    cwd: str = "."
    offline: bool = False
    workspace: str | None = None
    memory_root: str | None = None
    emulator_script: str | None = None
    agentctl_version: str = ""
    pricing: str = LIST_PRICE  # how this run's turns are billed (LIST_PRICE / BATCH_PRICE)
    # A fork (`run --fork SESSION@TURN`): the session it was started from, and the turn of
    # that session whose answer its history ends with.
    forked_from: str | None = None
    forked_at: int | None = None
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> SessionHeader:
        return cls(
            session=_str(data, "session"),
            task=_str(data, "task"),
            task_source=_str(data, "task_source"),
            profile=_profile(data),
            profile_source=_str(data, "profile_source"),
            model=_str(data, "model"),
            cwd=_str(data, "cwd", "."),
            offline=_bool(data, "offline"),
            workspace=_opt_str(data, "workspace"),
            memory_root=_opt_str(data, "memory_root"),
            emulator_script=_opt_str(data, "emulator_script"),
            agentctl_version=_str(data, "agentctl_version"),
            pricing=_pricing(data),
            forked_from=_opt_str(data, "forked_from"),
            forked_at=_opt_int(data, "forked_at"),
        )


_PROFILE_TABLES = (
    "api",
    "cache",
    "context_editing",
    "limits",
    "memory",
    "prices",
    "thinking",
    "tools",
)


def _profile(data: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded profile; its tables are objects (the values are checked when it is built)."""
    profile = _dict(data, "profile")
    for table in _PROFILE_TABLES:
        _dict(profile, table, where="profile")
    return profile


@dataclass(frozen=True)
class MessageRecord:
    """A history message; one at index i replaces everything from i on."""

    TYPE: ClassVar[str] = "message"
    index: int
    message: dict[str, Any]
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> MessageRecord:
        index = _int(data, "index")
        if index < 0:
            raise MalformedRecord("`index` must not be negative")
        message = _dict(data, "message", required=True)
        _str(message, "role", where="message")
        _check_content(message, "message", required=True)
        return cls(index, message)


@dataclass(frozen=True)
class RequestRecord:
    """A request as built, without its messages (the first `messages_count` of the history)."""

    TYPE: ClassVar[str] = "request"
    turn: int
    messages_count: int | None
    request: dict[str, Any]
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> RequestRecord:
        count = _int(data, "messages_count") if data.get("messages_count") is not None else None
        request = _dict(data, "request")
        editing = _dict(request, "context_management", where="request")
        _list_of_dicts(editing, "edits", "request.context_management")
        _list_of_dicts(request, "tools", "request")
        _check_content(request, "request", key="system")
        return cls(_int(data, "turn"), count, request)


@dataclass(frozen=True)
class ResponseRecord:
    """The API's message object for one turn."""

    TYPE: ClassVar[str] = "response"
    turn: int
    request_id: str
    message: dict[str, Any]
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> ResponseRecord:
        request_id = _opt_str(data, "request_id") or ""
        message = _dict(data, "message")
        _check_content(message, "message")
        _check_figures(message, "message")
        editing = _dict(message, "context_management", where="message")
        _check_edits(editing, "message.context_management")
        return cls(_int(data, "turn"), request_id, message)


@dataclass(frozen=True)
class ToolResultRecord:
    """A tool call the client answered, with the content sent back."""

    TYPE: ClassVar[str] = "tool_result"
    turn: int
    tool_use_id: str
    name: str
    input: dict[str, Any]
    is_error: bool
    content: str
    ts: float = 0.0
    denied: bool = False  # refused by the approval rules: the content says why

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> ToolResultRecord:
        return cls(
            turn=_int(data, "turn", 0),  # nothing reads it back: absent is 0
            tool_use_id=_str(data, "tool_use_id"),
            name=_str(data, "name"),
            input=_dict(data, "input"),
            is_error=_bool(data, "is_error"),
            content=_str(data, "content"),
            denied=_bool(data, "denied"),
        )


@dataclass(frozen=True)
class EventRecord:
    """A start / turn / result / error event in its NDJSON form."""

    TYPE: ClassVar[str] = "event"
    event: dict[str, Any]
    ts: float = 0.0

    @property
    def name(self) -> str:
        return str(self.event.get("event") or "")

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> EventRecord:
        event = _dict(data, "event", required=True)
        name = _str(event, "event", where="event")
        if name == "turn":
            _int(event, "turn", where="event")
            _check_figures(event, "event")
            _check_edits(event, "event")
            for key in ("tool_calls", "server_tool_calls"):
                for call in _list_of_dicts(event, key, "event"):
                    _dict(call, "input", where=f"event.{key}[]")
            _list_of_dicts(event, "memory_ops", "event")
        return cls(event)


@dataclass(frozen=True)
class ResumeRecord:
    """A `--resume` continues the run from here; its turns are billed at `pricing`."""

    TYPE: ClassVar[str] = "resume"
    session: str
    from_turn: int
    pricing: str = LIST_PRICE
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> ResumeRecord:
        return cls(_str(data, "session"), _int(data, "from_turn"), _pricing(data))


@dataclass(frozen=True)
class FollowUpRecord:
    """A follow-up (`run --continue`): a new user turn, `text`, after turn `from_turn` of a
    finished session; its turns are billed at `pricing`. `new_client`: it was sent by a new
    client (offline: a new emulator, whose prompt cache starts empty), not by the one that
    answered the turn before (a conversation held in one process)."""

    TYPE: ClassVar[str] = "follow_up"
    session: str
    from_turn: int
    text: str
    pricing: str = LIST_PRICE
    new_client: bool = True
    ts: float = 0.0

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> FollowUpRecord:
        new_client = data.get("new_client", True)
        if not isinstance(new_client, bool):
            raise MalformedRecord("`new_client` must be true or false")
        return cls(
            _str(data, "session"),
            _int(data, "from_turn"),
            _str(data, "text"),
            _pricing(data),
            new_client,
        )


Record = (
    SessionHeader
    | MessageRecord
    | RequestRecord
    | ResponseRecord
    | ToolResultRecord
    | EventRecord
    | ResumeRecord
    | FollowUpRecord
)
_TYPES: dict[str, Any] = {
    cls.TYPE: cls
    for cls in (
        SessionHeader,
        MessageRecord,
        RequestRecord,
        ResponseRecord,
        ToolResultRecord,
        EventRecord,
        ResumeRecord,
        FollowUpRecord,
    )
}


def to_json(record: Record) -> dict[str, Any]:
    """The line's object: `v`, `type`, `ts`, then the record's own fields."""
    fields = {k: v for k, v in record.__dict__.items() if k != "ts"}
    return {"v": FORMAT_VERSION, "type": record.TYPE, "ts": record.ts, **fields}


def from_json(data: object) -> Record | None:
    """The record of one decoded line; None for a type this version does not know.

    MalformedRecord (saying which key is wrong) for anything that is not a record.
    """
    if not isinstance(data, dict):
        raise MalformedRecord("not a JSON object")
    version = data.get("v", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise MalformedRecord("`v` must be an integer")
    if version > FORMAT_VERSION:
        raise MalformedRecord(f"format version {version} is newer than this agentctl reads")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise MalformedRecord("no `type` string")
    cls = _TYPES.get(kind)
    if cls is None:
        return None
    record: Record = cls.from_fields(data)
    return _with_ts(record, data)


def _with_ts(record: Record, data: Mapping[str, Any]) -> Record:
    ts = data.get("ts", 0.0)
    if not isinstance(ts, int | float) or isinstance(ts, bool):
        raise MalformedRecord("`ts` must be a number")
    return replace(record, ts=float(ts))


def apply_message(history: list[dict[str, Any]], record: MessageRecord) -> None:
    """The history rule: a message at index i truncates the history to i, then is appended."""
    if record.index > len(history):
        raise MalformedRecord(
            f"message index {record.index} skips past the history ({len(history)} messages)"
        )
    del history[record.index :]
    history.append(record.message)


def with_history(
    records: Iterable[Record],
) -> Iterator[tuple[Record, list[dict[str, Any]]]]:
    """Each record with the history as it stands after it (one shared list: copy what you keep)."""
    history: list[dict[str, Any]] = []
    for record in records:
        if isinstance(record, MessageRecord):
            apply_message(history, record)
        yield record, history


_EDIT_COUNTS = ("cleared_input_tokens", "cleared_tool_uses", "cleared_thinking_turns")


def _check_figures(data: Mapping[str, Any], where: str) -> None:
    """The token counts a turn's figures are built from are integers (or absent)."""
    usage = _dict(data, "usage", where=where)
    for key in USAGE_TOKENS:
        _get(usage, key, int, None, "an integer", f"{where}.usage")
    for name in USAGE_OBJECTS:
        counts = _dict(usage, name, where=f"{where}.usage")
        for key in usage_fields(name):
            _get(counts, key, int, None, "an integer", f"{where}.usage.{name}")


def _check_content(
    data: Mapping[str, Any], where: str, key: str = "content", *, required: bool = False
) -> None:
    """Message content or a system prompt: a string or a list of blocks (or absent)."""
    value = data.get(key)
    if isinstance(value, str) or (value is None and not required):
        return
    if not isinstance(value, list):
        raise MalformedRecord(f"`{where}.{key}` must be a string or a list of objects")
    for block in _list_of_dicts(data, key, where):
        _str(block, "type", where=f"{where}.{key}[]")


def _check_edits(data: Mapping[str, Any], where: str) -> None:
    for edit in _list_of_dicts(data, "applied_edits", where):
        for key in _EDIT_COUNTS:
            _get(edit, key, int, None, "an integer", f"{where}.applied_edits[]")


def _list_of_dicts(data: Mapping[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    items: list[Any] = _get(data, key, list, [], "a list", where)
    if not all(isinstance(item, dict) for item in items):
        raise MalformedRecord(f"`{where}.{key}` must be a list of objects")
    return items


_REQUIRED: Any = object()


def _get(
    data: Mapping[str, Any], key: str, types: Any, default: Any, what: str, where: str = ""
) -> Any:
    """data[key] if it has the type; `default` when absent or null (unless it is _REQUIRED)."""
    value = data.get(key)
    if value is None and default is not _REQUIRED:
        return default
    if not isinstance(value, types) or (isinstance(value, bool) and types is not bool):
        raise MalformedRecord(f"`{where + '.' if where else ''}{key}` must be {what}")
    return value


def _int(data: Mapping[str, Any], key: str, default: Any = _REQUIRED, *, where: str = "") -> int:
    value: int = _get(data, key, int, default, "an integer", where)
    return value


def _str(data: Mapping[str, Any], key: str, default: str = "", *, where: str = "") -> str:
    value: str = _get(data, key, str, default, "a string", where)
    return value


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value: str | None = _get(data, key, str, None, "a string or null")
    return value


def _opt_int(data: Mapping[str, Any], key: str) -> int | None:
    value: int | None = _get(data, key, int, None, "an integer or null")
    return value


def _pricing(data: Mapping[str, Any]) -> str:
    """`pricing`: "list" or "batch"; absent or null (an older transcript) is "list"."""
    value = _str(data, "pricing", LIST_PRICE)
    if value not in PRICINGS:
        raise MalformedRecord('`pricing` must be "list" or "batch"')
    return value


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value: bool = _get(data, key, bool, False, "true or false")
    return value


def _dict(
    data: Mapping[str, Any], key: str, *, required: bool = False, where: str = ""
) -> dict[str, Any]:
    value: dict[str, Any] = _get(data, key, dict, _REQUIRED if required else {}, "an object", where)
    return value


@dataclass(frozen=True)
class Transcript:
    """A transcript as read: its header, every record in order, and what the reader noticed."""

    path: Path
    header: SessionHeader
    records: tuple[Record, ...]
    warnings: tuple[str, ...] = ()
    size: int = 0  # the bytes read (a writer checks nobody appended since)

    @property
    def id(self) -> str:
        """The session id is the file's name: a copied transcript is its own session."""
        return self.path.stem
