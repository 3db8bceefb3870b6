"""The bottom layer: usage, the events a run yields, and the error tree; imports only errors.

Every package may import this module; it imports nothing of agentctl but `agentctl.errors`.
`to_json()` of each event is its NDJSON line (`agentctl run --json`) and its transcript record;
the schema is documented in the README. Add fields, never rename them (schema_version 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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
    "TurnEvent",
    "Usage",
    "UsageError",
]
SCHEMA_VERSION = 1
MEMORY_TOOL = "memory"  # the memory tool's name in requests (memory_20250818)


@dataclass(frozen=True)
class Usage:
    """Token usage of one response (or a sum of them), as the API bills it: with compaction,
    the summarisation call (a `compaction` entry of `usage.iterations`) is added to the
    top-level figures, and `compactions` counts those calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # `usage.server_tool_use`: server tool requests (web search is billed per search).
    web_search_requests: int = 0
    web_fetch_requests: int = 0
    compactions: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.web_search_requests + other.web_search_requests,
            self.web_fetch_requests + other.web_fetch_requests,
            self.compactions + other.compactions,
        )

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: uncached input + cache writes + cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_json(self) -> dict[str, Any]:
        """The API's field names; `server_tool_use` only when a server tool ran."""
        data: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "compactions": self.compactions,
        }
        if self.web_search_requests or self.web_fetch_requests:
            data["server_tool_use"] = {
                "web_search_requests": self.web_search_requests,
                "web_fetch_requests": self.web_fetch_requests,
            }
        return data


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

    @classmethod
    def from_call(cls, call: ToolCall) -> MemoryOp:
        """The memory command of one `memory` tool call and the path it named."""
        path = call.input.get("path", call.input.get("old_path", ""))
        return cls(str(call.input.get("command", "?")), str(path), not call.is_error)

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "path": self.path, "ok": self.ok}


@dataclass(frozen=True)
class ToolCall:
    """One client-side tool call of a turn and how it went."""

    id: str
    name: str
    input: dict[str, Any]
    is_error: bool
    result_chars: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "input": self.input, "is_error": self.is_error}


@dataclass(frozen=True)
class StartEvent:
    session: str
    model: str
    context_management: dict[str, Any] | None
    profile: str = "<built-in>"
    task: str = ""

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


@dataclass(frozen=True)
class TurnEvent:
    """One completed request/response round and the tool calls answered after it."""

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

    @property
    def cleared_input_tokens(self) -> int:
        return sum(e.cleared_input_tokens for e in self.applied_edits)

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
        }


@dataclass(frozen=True)
class Totals:
    """Sums over a run, for the summary table and the result event."""

    usage: Usage = field(default_factory=Usage)
    cleared_input_tokens: int = 0
    cleared_tool_uses: int = 0
    cleared_thinking_turns: int = 0
    cost_usd: float = 0.0
    # Tool calls that failed for a reason that is not the model's (a full disk, a memory root
    # that became read-only): the model only sees error results, so the run says it.
    tool_failures: int = 0

    def add_turn(self, turn: TurnEvent, cost_usd: float) -> Totals:
        edits = turn.applied_edits
        return Totals(
            usage=self.usage + turn.usage,
            cleared_input_tokens=self.cleared_input_tokens + turn.cleared_input_tokens,
            cleared_tool_uses=self.cleared_tool_uses + sum(e.cleared_tool_uses for e in edits),
            cleared_thinking_turns=self.cleared_thinking_turns
            + sum(e.cleared_thinking_turns for e in edits),
            cost_usd=self.cost_usd + cost_usd,
            tool_failures=self.tool_failures,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.usage.to_json(),
            "cleared_input_tokens": self.cleared_input_tokens,
            "cleared_tool_uses": self.cleared_tool_uses,
            "cleared_thinking_turns": self.cleared_thinking_turns,
            # null when the price is unknown (NaN): NaN is not JSON.
            "cost_usd": round(self.cost_usd, 6) if math.isfinite(self.cost_usd) else None,
            "tool_failures": self.tool_failures,
        }


@dataclass(frozen=True)
class ResultEvent:
    session: str
    turns: int
    stop_reason: str
    text: str
    totals: Totals

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "result",
            "session": self.session,
            "turns": self.turns,
            "stop_reason": self.stop_reason,
            "text": self.text,
            "totals": self.totals.to_json(),
        }


@dataclass(frozen=True)
class ErrorEvent:
    kind: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "error", "kind": self.kind, "message": self.message}


Event = StartEvent | ProgressEvent | TurnEvent | ResultEvent | ErrorEvent
