"""Test doubles for the loop: a scripted in-process ModelClient and a fake memory backend."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentctl.agent.model import ModelResponse, Progress, StreamItem
from agentctl.errors import ToolError
from agentctl.types import Usage


def tool_use(name: str, tool_input: dict[str, Any], block_id: str = "") -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": block_id or f"toolu_{name}",
        "name": name,
        "input": tool_input,
    }


def reply(
    *blocks: dict[str, Any],
    stop: str = "end_turn",
    usage: Usage | None = None,
    edits: tuple[dict[str, Any], ...] = (),
) -> ModelResponse:
    from agentctl.types import AppliedEdit

    return ModelResponse(
        content=tuple(blocks),
        stop_reason=stop,
        usage=usage or Usage(input_tokens=100, output_tokens=10),
        applied_edits=tuple(AppliedEdit.from_json(e) for e in edits),
        request_id=f"req_{stop}",
    )


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class ScriptedClient:
    """Answers requests with the next scripted response; keeps every request it got."""

    def __init__(self, *responses: ModelResponse) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def stream(self, request: Mapping[str, Any]) -> Iterator[StreamItem]:
        self.requests.append(dict(request))
        yield Progress("text", 0)
        if not self.responses:
            raise AssertionError("ScriptedClient: no more scripted responses")
        yield self.responses.pop(0)


class FakeMemory:
    """A memory backend recording commands; `fail` names commands that raise ToolError."""

    def __init__(self, fail: tuple[str, ...] = ()) -> None:
        self.commands: list[dict[str, Any]] = []
        self.fail = fail

    def execute(self, command: Mapping[str, Any]) -> str:
        self.commands.append(dict(command))
        if command.get("command") in self.fail:
            raise ToolError(f"Error: The path {command.get('path')} does not exist")
        return "ok"
