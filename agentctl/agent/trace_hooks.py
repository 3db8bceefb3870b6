"""What the loop tells a trace of its run: each model request and each tool call, from start
to end. The loop knows only this Protocol; the OpenTelemetry spans are runner/trace.py's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

from agentctl.agent.model import ModelResponse
from agentctl.types import ToolCall

# What a step's context manager yields: called once with how the step ended (not called when
# it raised: the exception is its outcome).
OnResponse = Callable[[ModelResponse], None]
OnToolCall = Callable[[ToolCall], None]


class Trace(Protocol):
    """Told of each step of a run as it happens; never changes what the run does."""

    def request(
        self, turn: int, request: Mapping[str, Any]
    ) -> AbstractContextManager[OnResponse]: ...

    def tool(
        self, turn: int, name: str, tool_input: Mapping[str, Any]
    ) -> AbstractContextManager[OnToolCall]: ...


def _ignore(value: object) -> None:
    del value


class NullTrace:
    """No trace (the default): each step costs one `nullcontext`."""

    def request(self, turn: int, request: Mapping[str, Any]) -> AbstractContextManager[OnResponse]:
        del turn, request
        return nullcontext(_ignore)

    def tool(
        self, turn: int, name: str, tool_input: Mapping[str, Any]
    ) -> AbstractContextManager[OnToolCall]:
        del turn, name, tool_input
        return nullcontext(_ignore)
