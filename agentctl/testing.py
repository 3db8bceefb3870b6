"""Test doubles shipped for users' own tests: a scripted model client and reply builders.

    from agentctl.testing import ScriptedClient, reply, tool_use
    client = ScriptedClient(reply(tool_use("memory", {"command": "view", "path": "/memories"}),
                                  stop="tool_use"), "All done.")
    result = agentctl.run("Check memory.", client=client, record=False)

No network, no key: the run's loop, tools and memory are real; only the model is scripted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentctl.agent.model import ModelResponse, Progress, StreamItem
from agentctl.errors import ApiError
from agentctl.types import AppliedEdit, Usage

__all__ = ["ScriptedClient", "reply", "text", "tool_use"]


def tool_use(name: str, tool_input: dict[str, Any], block_id: str = "") -> dict[str, Any]:
    """A `tool_use` content block."""
    block_id = block_id or f"toolu_{name}"
    return {"type": "tool_use", "id": block_id, "name": name, "input": tool_input}


def text(value: str) -> dict[str, Any]:
    """A `text` content block."""
    return {"type": "text", "text": value}


def reply(
    *blocks: dict[str, Any],
    stop: str = "end_turn",
    usage: Usage | None = None,
    edits: tuple[dict[str, Any], ...] = (),
) -> ModelResponse:
    """One model response: content blocks, stop reason, usage, applied context edits."""
    return ModelResponse(
        content=tuple(blocks),
        stop_reason=stop,
        usage=usage or Usage(input_tokens=100, output_tokens=10),
        applied_edits=tuple(AppliedEdit.from_json(e) for e in edits),
        request_id=f"req_{stop}",
    )


class ScriptedClient:
    """A ModelClient answering each request with the next scripted reply (a string is a final
    text answer); `requests` keeps every request it got. Out of replies: ApiError."""

    def __init__(self, *replies: ModelResponse | str) -> None:
        self.responses = [reply(text(r)) if isinstance(r, str) else r for r in replies]
        self.requests: list[dict[str, Any]] = []

    def stream(self, request: Mapping[str, Any]) -> Iterator[StreamItem]:
        self.requests.append(dict(request))
        yield Progress("text", 0)
        if not self.responses:
            raise ApiError("ScriptedClient: no more scripted replies")
        yield self.responses.pop(0)
