"""The bottom layer: usage, the events a run yields, and the error tree; imports only errors.

Every package may import this module; it imports nothing of agentctl but `agentctl.errors`.
`to_json()` of each event is its NDJSON line (`agentctl run --json`) and its transcript record;
the schema is documented in the README. Add fields, never rename them (schema_version 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from agentctl.errors import (
    AgentctlError,
    ApiError,
    ConfigError,
    InterruptedRunError,
    LimitError,
    ToolError,
    UsageError,
)

__all__ = [
    "SCHEMA_VERSION",
    "USAGE_OBJECTS",
    "USAGE_TOKENS",
    "AgentctlError",
    "ApiError",
    "AppliedEdit",
    "ConfigError",
    "ErrorEvent",
    "Event",
    "InterruptedRunError",
    "LimitError",
    "MemoryOp",
    "ProgressEvent",
    "ResultEvent",
    "StartEvent",
    "ToolCall",
    "ToolError",
    "Totals",
    "Turn",
    "TurnEvent",
    "Usage",
    "UsageError",
    "usd_json",
]
SCHEMA_VERSION = 1
MEMORY_TOOL = "memory"  # the memory tool's name in requests (memory_20250818)


# Where each count of `Usage` sits in the API's `usage` object: the top level, one of its
# objects of counts, or nowhere (ours).
TOP, CACHE_CREATION, SERVER_TOOL_USE, OURS = "", "cache_creation", "server_tool_use", "ours"


def _count(where: str) -> Any:
    return field(default=0, metadata={"in": where})


@dataclass(frozen=True)
class Usage:
    """Token usage of one response (or a sum of them), as the API bills it: with compaction,
    the summarisation call (a `compaction` entry of `usage.iterations`) is added to the
    top-level figures, and `compactions` counts those calls. Each count is defined here once,
    with where the API puts it; `to_json`, `from_json`, `+`, the cache hit ratio,
    `USAGE_TOKENS`, `USAGE_OBJECTS` and the checks of a response's and a transcript's `usage`
    (agent/wire.py, sessions/transcript/records.py) follow from it: a new count is one line here."""

    input_tokens: int = _count(TOP)
    output_tokens: int = _count(TOP)
    cache_creation_input_tokens: int = _count(TOP)
    cache_read_input_tokens: int = _count(TOP)
    # `usage.server_tool_use`: server tool requests (web search is billed per search).
    web_search_requests: int = _count(SERVER_TOOL_USE)
    web_fetch_requests: int = _count(SERVER_TOOL_USE)
    compactions: int = _count(OURS)
    # `usage.cache_creation`: the cache writes by TTL (they are priced apart). Transcripts
    # written before agentctl kept the split have neither: see `cache_split_known`.
    ephemeral_5m_input_tokens: int = _count(CACHE_CREATION)
    ephemeral_1h_input_tokens: int = _count(CACHE_CREATION)

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(a + b for a, b in zip(_values(self), _values(other), strict=True)))

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: uncached input + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def tokens(self) -> int:
        """Every token counted at the top level: the prompt's and the output."""
        return self.prompt_tokens + self.output_tokens

    @property
    def cache_split_known(self) -> bool:
        """Whether the 5-minute and 1-hour writes add up to the cache writes (the API reports
        them; an older transcript or a server that leaves them out does not)."""
        split = self.ephemeral_5m_input_tokens + self.ephemeral_1h_input_tokens
        return split == self.cache_creation_input_tokens

    @property
    def cache_hit_ratio(self) -> float | None:
        """cache_read / (input + cache_read + cache_write); None when nothing was read at all."""
        prompt = self.prompt_tokens
        return self.cache_read_input_tokens / prompt if prompt else None

    def to_json(self) -> dict[str, Any]:
        """The API's field names (`cache_creation` holds the split of cache writes by TTL);
        `server_tool_use` only when a server tool ran. `from_json` is its inverse."""
        data: dict[str, Any] = {name: getattr(self, name) for name in USAGE_TOKENS}
        data.update({name: getattr(self, name) for name in usage_fields(OURS)})
        # `cache_creation` always (without it the split is not known), then the other objects
        # of counts, each when one of its counts is not 0.
        for where in sorted(USAGE_OBJECTS, key=lambda where: where != CACHE_CREATION):
            counts = {name: getattr(self, name) for name in usage_fields(where)}
            if where == CACHE_CREATION or any(counts.values()):
                data[where] = counts
        return data

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> Usage:
        """Usage from the API's `usage` object (or `to_json`'s); absent or null counts are 0.
        The top level leaves out compaction iterations; billing counts them, so each
        `compaction` entry of `iterations` is added and counted."""
        raw = raw or {}
        usage = _counts(raw, int(raw.get("compactions") or 0))
        for entry in raw.get("iterations") or ():
            if isinstance(entry, Mapping) and entry.get("type") == "compaction":
                usage = usage + _counts(entry, 1)
        return usage


def usage_fields(where: str) -> tuple[str, ...]:
    """The names of the `Usage` counts the API puts `where` (TOP, CACHE_CREATION, ...)."""
    return tuple(f.name for f in fields(Usage) if f.metadata["in"] == where)


USAGE_TOKENS = usage_fields(TOP)  # the token counts at the top level of `usage`
# The API's objects of counts inside `usage` (SERVER_TOOL_USE, CACHE_CREATION), in field order.
USAGE_OBJECTS = tuple(
    dict.fromkeys(f.metadata["in"] for f in fields(Usage) if f.metadata["in"] not in (TOP, OURS))
)


_SPLIT = usage_fields(CACHE_CREATION)


def _values(sums: Usage | Totals) -> tuple[Any, ...]:
    """The fields of a sum in order, for `+`."""
    return tuple(getattr(sums, f.name) for f in fields(sums))


def _counts(raw: Mapping[str, Any], compactions: int) -> Usage:
    values: dict[str, int] = {"compactions": compactions}
    for f in fields(Usage):
        where = f.metadata["in"]
        if where == OURS:
            continue
        counts = raw if where == TOP else raw.get(where)
        counts = counts if isinstance(counts, Mapping) else {}
        values[f.name] = int(counts.get(f.name) or 0)
    usage = Usage(**values)
    # A split that does not add up to the writes is not theirs: in a stream with compaction
    # the SDK keeps `message_start`'s, which is the summarising call's (its iteration has it).
    return usage if usage.cache_split_known else replace(usage, **dict.fromkeys(_SPLIT, 0))


@dataclass(frozen=True)
class AppliedEdit:
    """One entry of `context_management.applied_edits`; `raw` is exactly what the API sent."""

    type: str
    cleared_input_tokens: int = 0
    cleared_tool_uses: int = 0
    cleared_thinking_turns: int = 0
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> AppliedEdit:
        return cls(
            type=str(raw.get("type", "")),
            cleared_input_tokens=int(raw.get("cleared_input_tokens") or 0),
            cleared_tool_uses=int(raw.get("cleared_tool_uses") or 0),
            cleared_thinking_turns=int(raw.get("cleared_thinking_turns") or 0),
            raw=dict(raw),
        )


@dataclass(frozen=True)
class MemoryOp:
    """One memory tool command the model made in a turn."""

    command: str
    path: str
    ok: bool
    denied: bool = False  # refused by the approval rules: never ran

    @classmethod
    def from_call(cls, call: ToolCall) -> MemoryOp:
        """The memory command of one `memory` tool call and the path it named."""
        path = call.input.get("path", call.input.get("old_path", ""))
        command = str(call.input.get("command", "?"))
        return cls(command, str(path), not call.is_error, call.denied)

    def to_json(self) -> dict[str, Any]:
        data = {"command": self.command, "path": self.path, "ok": self.ok}
        return {**data, "denied": True} if self.denied else data


@dataclass(frozen=True)
class ToolCall:
    """One client-side tool call of a turn and how it went."""

    id: str
    name: str
    input: dict[str, Any]
    is_error: bool
    result_chars: int = 0
    # Refused by the user's approval rules (or at the prompt): never run, an is_error result.
    denied: bool = False

    def to_json(self) -> dict[str, Any]:
        """`denied` only on a denied call (the lines of older runs stay as they were)."""
        data = {"name": self.name, "input": self.input, "is_error": self.is_error}
        return {**data, "denied": True} if self.denied else data


@dataclass(frozen=True)
class StartEvent:
    session: str
    model: str
    context_management: dict[str, Any] | None
    profile: str = "<built-in>"
    task: str = ""
    # The clear_tool_uses input-token trigger, from the run's settings (not in the NDJSON
    # line, which carries it inside context_management); None: read it from there.
    trigger: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "start",
            "schema_version": SCHEMA_VERSION,
            "session": self.session,
            "model": self.model,
            "context_management": self.context_management,
            "profile": self.profile,
            "task": self.task,
        }


@dataclass(frozen=True)
class ProgressEvent:
    """While a turn streams, what is arriving; while a tool runs, its progress (for the status
    line; not written as NDJSON)."""

    turn: int
    kind: Literal["thinking", "text", "tool_input", "tool_progress"]
    chars: int
    tool_name: str = ""
    message: str = ""  # tool_progress: what a running tool last said of its progress
    # kind "text": the text that arrived, starting at offset `at` of the turn's answer text
    # (a retried request streams from 0 again: `--stream` writes each offset once).
    text: str = ""
    at: int = 0


@dataclass(frozen=True)
class Turn:
    """One completed request/response round and the tool calls answered after it: the one
    type of a turn, whether the loop just ran it (its `turn` event), a transcript recorded it
    or a what-if replay simulated it. Figures of a view (the chart's, the ledger's) are
    functions of it, computed where they are shown."""

    turn: int
    stop_reason: str
    usage: Usage
    applied_edits: tuple[AppliedEdit, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    # prompt tokens minus the clear_tool_uses trigger (negative = below it); None without one.
    trigger_distance: int | None = None
    request_id: str = ""
    # Server tools the API ran inside this response (web_search, web_fetch, ...).
    server_tool_calls: tuple[ToolCall, ...] = ()
    # The tool results answering this turn carried the save-before-clear notice (once a run).
    checkpoint: bool = False

    @property
    def cleared_input_tokens(self) -> int:
        return sum(e.cleared_input_tokens for e in self.applied_edits)

    @property
    def cleared_tool_uses(self) -> int:
        """Tool uses cleared in this request (the server clears from the whole history, so a
        use cleared earlier is counted again: see Totals)."""
        return sum(e.cleared_tool_uses for e in self.applied_edits)

    @property
    def cleared_thinking_turns(self) -> int:
        return sum(e.cleared_thinking_turns for e in self.applied_edits)

    @property
    def every_tool_call(self) -> tuple[ToolCall, ...]:
        """Server tool calls (run by the API inside the response), then client ones."""
        return (*self.server_tool_calls, *self.tool_calls)

    @property
    def memory_ops(self) -> tuple[MemoryOp, ...]:
        """The `memory` tool calls among `tool_calls`, as commands and paths."""
        return tuple(MemoryOp.from_call(c) for c in self.tool_calls if c.name == MEMORY_TOOL)

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "turn",
            "turn": self.turn,
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_json(),
            "applied_edits": [e.raw for e in self.applied_edits],
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "memory_ops": [m.to_json() for m in self.memory_ops],
            "trigger_distance": self.trigger_distance,
            "request_id": self.request_id,
            "server_tool_calls": [c.to_json() for c in self.server_tool_calls],
            "checkpoint": self.checkpoint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Turn:
        """A Turn back from its NDJSON/transcript form (`to_json`); tool calls keep no id."""
        distance = data.get("trigger_distance")
        return cls(
            turn=int(data.get("turn", 0)),
            stop_reason=str(data.get("stop_reason") or ""),
            usage=Usage.from_json(data.get("usage")),
            applied_edits=tuple(
                AppliedEdit.from_json(dict(e)) for e in data.get("applied_edits") or ()
            ),
            tool_calls=_calls_from_json(data.get("tool_calls")),
            trigger_distance=int(distance) if isinstance(distance, int) else None,
            request_id=str(data.get("request_id") or ""),
            server_tool_calls=_calls_from_json(data.get("server_tool_calls")),
            checkpoint=data.get("checkpoint") is True,
        )


TurnEvent = Turn  # the name the public API has always had for it (docs/python.md)


def _calls_from_json(calls: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(
            "",
            str(c.get("name", "")),
            dict(c.get("input") or {}),
            bool(c.get("is_error")),
            denied=bool(c.get("denied")),
        )
        for c in calls or ()
    )


@dataclass(frozen=True)
class Totals:
    """The sum of a run's turns (`Totals.of`), for the summary table, the result event, a
    batch's result lines and a `sessions list` row: every other figure of a run is a function
    of its turns and these, computed where it is shown. Counts summed over turns count a
    block as often as a request cleared it (clearings), not distinct blocks."""

    usage: Usage = field(default_factory=Usage)
    cleared_input_tokens: int = 0
    cleared_tool_uses: int = 0
    cleared_thinking_turns: int = 0
    cost_usd: float = 0.0  # NaN: some turn had no price
    # Tool calls that failed for a reason that is not the model's (a full disk, a memory root
    # that became read-only): the model only sees error results, so the run says it. Not a
    # count of turns: the loop's tools keep it (0 in a sum of recorded turns).
    tool_failures: int = 0
    # Tool calls the user's approval rules (or the user, asked) refused.
    tool_denials: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(*(a + b for a, b in zip(_values(self), _values(other), strict=True)))

    def __eq__(self, other: object) -> bool:
        """Field by field, an unknown cost (NaN) equal to another unknown cost."""
        if not isinstance(other, Totals):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def _compared(self) -> tuple[Any, ...]:
        return tuple(None if isinstance(v, float) and math.isnan(v) else v for v in _values(self))

    @classmethod
    def of_turn(cls, turn: Turn, cost_usd: float) -> Totals:
        """One turn's totals, at the cost its caller priced it (NaN: unknown)."""
        denials = sum(c.denied for c in turn.tool_calls)
        return cls(
            turn.usage,
            turn.cleared_input_tokens,
            turn.cleared_tool_uses,
            turn.cleared_thinking_turns,
            cost_usd,
            tool_denials=denials,
        )

    @classmethod
    def of(cls, turns: Iterable[Turn], costs: Iterable[float | None]) -> Totals:
        """The sum of `turns`, each at its cost in `costs` (None: no price, so NaN)."""
        each = zip(turns, costs, strict=True)
        return sum((cls.of_turn(t, math.nan if c is None else c) for t, c in each), cls())

    def add_turn(self, turn: Turn, cost_usd: float) -> Totals:
        return self + Totals.of_turn(turn, cost_usd)

    @property
    def known_cost(self) -> float | None:
        """The cost, None when some turn had no price."""
        return None if math.isnan(self.cost_usd) else self.cost_usd

    @property
    def cost_json(self) -> float | None:
        """The cost as JSON carries it: rounded, null when unknown (NaN is not JSON)."""
        return usd_json(self.cost_usd)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.usage.to_json(),
            "cleared_input_tokens": self.cleared_input_tokens,
            "cleared_tool_uses": self.cleared_tool_uses,
            "cleared_thinking_turns": self.cleared_thinking_turns,
            "cost_usd": self.cost_json,
            "tool_failures": self.tool_failures,
            "tool_denials": self.tool_denials,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Totals:
        """Totals back from `to_json` (a result event's, a batch result line's); absent or
        null counts are 0, an unknown cost NaN."""
        cost = data.get("cost_usd")
        return cls(
            usage=Usage.from_json(data),
            cleared_input_tokens=int(data.get("cleared_input_tokens") or 0),
            cleared_tool_uses=int(data.get("cleared_tool_uses") or 0),
            cleared_thinking_turns=int(data.get("cleared_thinking_turns") or 0),
            cost_usd=float(cost) if isinstance(cost, int | float) else math.nan,
            tool_failures=int(data.get("tool_failures") or 0),
            tool_denials=int(data.get("tool_denials") or 0),
        )


def usd_json(usd: float | None) -> float | None:
    """A dollar figure as JSON carries it: rounded to 6 places, null when unknown (None,
    NaN: no price)."""
    return round(usd, 6) if usd is not None and math.isfinite(usd) else None


@dataclass(frozen=True)
class ResultEvent:
    session: str
    turns: int
    stop_reason: str
    text: str
    totals: Totals
    # The answer parsed and checked against the run's output schema (None: no schema).
    output: Any = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "event": "result",
            "session": self.session,
            "turns": self.turns,
            "stop_reason": self.stop_reason,
            "text": self.text,
            "totals": self.totals.to_json(),
        }
        return data if self.output is None else {**data, "output": self.output}


@dataclass(frozen=True)
class ErrorEvent:
    kind: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "error", "kind": self.kind, "message": self.message}


Event = StartEvent | ProgressEvent | Turn | ResultEvent | ErrorEvent
