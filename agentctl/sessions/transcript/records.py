"""What a transcript line means: the typed header and records, their JSON both ways, the
history rule, and how a message refers to the tool results recorded before it.

The writer (`transcript.writer`) and the reader (`transcript.reader`) sit beside this module;
everything else works on the `Transcript` the reader gives. The record types and their fields
are documented in docs/run.md ("Transcript format").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from agentctl.types import USAGE_OBJECTS, USAGE_TOKENS, usage_fields

__all__ = [
    "BATCH_PRICE",
    "LIST_PRICE",
    "EventRecord",
    "FollowUpRecord",
    "MalformedRecord",
    "MessageRecord",
    "Record",
    "RequestRecord",
    "ResponseRecord",
    "ResumeRecord",
    "SessionHeader",
    "ToolResultRecord",
    "apply_message",
    "from_json",
    "pricing_label",
    "to_json",
    "with_history",
]

# The newest version of the format, which only message records have reached: a message whose
# tool results are left to their `tool_result` records is version 2 (an agentctl that reads
# version 1 refuses it instead of taking the results for empty); every other record, and a
# message without references, is written as version 1, the newest of its type.
FORMAT_VERSION = 2
_NEWEST = {"message": 2}  # by record type; 1 for the others
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
    # A JSON Schema given as a dict from Python (`output_schema=`), which no profile file holds:
    # a continuation that names no schema of its own goes on checking answers against it.
    output_schema: dict[str, Any] | None = None
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
            output_schema=_dict(data, "output_schema") or None,
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
    """A history message; one at index i replaces everything from i on.

    `result_refs`: the tool_use ids of its tool_result blocks written without `content`,
    which is the `content` of the `tool_result` record of that id before it (`refer_results`
    writes so, `resolve_results` reads so); empty once read."""

    TYPE: ClassVar[str] = "message"
    index: int
    message: dict[str, Any]
    ts: float = 0.0
    result_refs: tuple[str, ...] = ()

    @classmethod
    def from_fields(cls, data: Mapping[str, Any]) -> MessageRecord:
        index = _int(data, "index")
        if index < 0:
            raise MalformedRecord("`index` must not be negative")
        message = _dict(data, "message", required=True)
        _str(message, "role", where="message")
        _check_content(message, "message", required=True)
        refs: list[Any] = _get(data, "result_refs", list, [], "a list of strings")
        if not all(isinstance(ref, str) for ref in refs):
            raise MalformedRecord("`result_refs` must be a list of strings")
        return cls(index, message, result_refs=tuple(refs))


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
    version = 1
    if isinstance(record, MessageRecord):
        refs = fields.pop("result_refs")
        if refs:
            fields["result_refs"], version = list(refs), _NEWEST[record.TYPE]
    return {"v": version, "type": record.TYPE, "ts": record.ts, **fields}


def from_json(data: object) -> Record | None:
    """The record of one decoded line; None for a type this version does not know.

    MalformedRecord (saying which key is wrong) for anything that is not a record.
    """
    if not isinstance(data, dict):
        raise MalformedRecord("not a JSON object")
    version = data.get("v", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise MalformedRecord("`v` must be an integer")
    kind = data.get("type")
    if version > (_NEWEST.get(kind, 1) if isinstance(kind, str) else FORMAT_VERSION):
        raise MalformedRecord(f"format version {version} is newer than this agentctl reads")
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


def refer_results(record: MessageRecord, recorded: Mapping[str, str]) -> MessageRecord:
    """`record` as written: each tool_result block whose content is the string `recorded`
    holds for its tool_use id (a `tool_result` record already written) without that content,
    and its id in `result_refs` (a tool result is stored once)."""
    content = record.message.get("content")
    if not isinstance(content, list):
        return record
    blocks, refs = [], []
    for block in content:
        ref = _result_id(block)
        if ref is not None and ref in recorded and block.get("content") == recorded[ref]:
            block = {k: v for k, v in block.items() if k != "content"}
            refs.append(ref)
        blocks.append(block)
    if not refs:
        return record
    return replace(record, message={**record.message, "content": blocks}, result_refs=tuple(refs))


def resolve_results(
    record: MessageRecord, recorded: Mapping[str, ToolResultRecord]
) -> MessageRecord:
    """The inverse of `refer_results`: `record` with each referred content put back from the
    `tool_result` record of its id (MalformedRecord when there is none)."""
    if not record.result_refs:
        return record
    missing = [ref for ref in record.result_refs if ref not in recorded]
    if missing:
        raise MalformedRecord(f"`result_refs`: no tool_result record for {missing[0]!r} before it")
    refs = set(record.result_refs)
    blocks = [
        {**block, "content": recorded[ref].content} if (ref := _result_id(block)) in refs else block
        for block in record.message["content"]
    ]
    return replace(record, message={**record.message, "content": blocks}, result_refs=())


def _result_id(block: Any) -> str | None:
    """The tool_use id of a tool_result block, None for any other block."""
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return None
    ref = block.get("tool_use_id")
    return ref if isinstance(ref, str) else None


def pricing_label(pricings: Iterable[str]) -> str:
    """ "list" or "batch" when every turn agrees, else "mixed"."""
    kinds = set(pricings)
    return kinds.pop() if len(kinds) == 1 else "mixed"


def loads(line: bytes) -> Any:
    """One line's JSON; ValueError (not RecursionError) when it nests too deeply."""
    try:
        return json.loads(line)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


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
