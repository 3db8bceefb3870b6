"""The tools a run offers the model, and the one place a tool call is dispatched and capped."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentctl.errors import ToolError, ToolFailure

# What a cut result ends with, so the model knows it did not see everything.
TRUNCATION_MARKER = "\n[truncated: result cut at {cap} of {total} characters]"
MAX_ERROR_CHARS = 2_000
_SURROGATE = re.compile("[\ud800-\udfff]")


class Tool(Protocol):
    """A client-side tool: its request definition and how to answer one call."""

    # True when the tool cuts its own long results (with a way to read on); the ToolBox then
    # leaves them whole instead of capping them at max_result_chars.
    self_limited: bool

    @property
    def name(self) -> str: ...

    def definition(self) -> dict[str, Any]:
        """The entry of the request's `tools` list."""
        ...

    def call(self, tool_input: Mapping[str, Any]) -> str:
        """The result text; raises ToolError for a failure the model should see."""
        ...


@runtime_checkable
class TracedTool(Protocol):
    """A tool that records which turn and tool_use id each call came from (memory history)."""

    def call_traced(self, tool_input: Mapping[str, Any], *, turn: int, tool_use_id: str) -> str:
        """As `call`, for the model's call `tool_use_id` in turn `turn`."""
        ...


@dataclass(frozen=True)
class ToolOutcome:
    """What one call produced: the tool_result content and whether it is an error."""

    content: str
    is_error: bool


def sendable(text: str) -> str:
    """`text` with each lone surrogate written out: a byte of a name that is not UTF-8 (as
    Python decodes it) as `\\xNN`, any other as `\\udNNN`. No request, transcript or
    terminal can carry a lone surrogate; the workspace tools read `\\xNN` back as the byte."""
    return text if text.isascii() else _SURROGATE.sub(_written_out, text)


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def cap_text(text: str, cap: int) -> str:
    """`text` cut to `cap` characters with a marker saying how much was cut (cap <= 0: no cap)."""
    if cap <= 0 or len(text) <= cap:
        return text
    return text[:cap] + TRUNCATION_MARKER.format(cap=cap, total=len(text))


class ToolBox:
    """The client-side tools of a run plus pass-through server tools (web search, web fetch)."""

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        max_result_chars: int,
        server_tools: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self._tools = {t.name: t for t in tools}
        self._server_tools = [dict(t) for t in server_tools]
        self.max_result_chars = max_result_chars
        # Calls that failed for a reason that is not the model's (ToolFailure, OSError).
        self.failures = 0

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def definitions(self) -> list[dict[str, Any]]:
        """The request's `tools` list: client tools in registration order, then server tools."""
        return [t.definition() for t in self._tools.values()] + [
            dict(t) for t in self._server_tools
        ]

    def dispatch(
        self, name: str, tool_input: Mapping[str, Any], *, turn: int = 0, tool_use_id: str = ""
    ) -> ToolOutcome:
        """Run one call; every failure becomes an is_error outcome, never an exception.

        `turn` and `tool_use_id` go to a tool that records where its calls came from.
        """
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolOutcome(f"Error: unknown tool '{name}'; available tools: {known}", True)
        try:
            cap = 0 if tool.self_limited else self.max_result_chars
            if isinstance(tool, TracedTool) and tool_use_id:
                text = tool.call_traced(tool_input, turn=turn, tool_use_id=tool_use_id)
            else:
                text = tool.call(tool_input)
            return ToolOutcome(cap_text(sendable(text), cap), False)
        except ToolError as err:
            self.failures += isinstance(err, ToolFailure)
            return ToolOutcome(cap_text(str(err), MAX_ERROR_CHARS), True)
        except OSError as err:
            self.failures += 1
            # strerror only: the full message would leak host paths to the model.
            return ToolOutcome(f"Error: {err.strerror or type(err).__name__}", True)
        except Exception as err:  # a tool bug must not end the run; the model sees what broke
            return ToolOutcome(cap_text(f"Error: {err!r}", MAX_ERROR_CHARS), True)
