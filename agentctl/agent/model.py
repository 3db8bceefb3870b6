"""One model round trip in our own small types, and the ModelClient seam the loop takes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentctl.types import AppliedEdit, ToolCall, Usage

ProgressKind = Literal["thinking", "text", "tool_input"]


@dataclass(frozen=True)
class Progress:
    """Something arrived while a response streams: `chars` so far in the current block."""

    kind: ProgressKind
    chars: int
    tool_name: str = ""
    # kind "text": the text delta, at offset `at` of this response's text (all its text blocks)
    text: str = ""
    at: int = 0


@dataclass(frozen=True)
class ModelResponse:
    """A complete response: content blocks as plain API dicts, ready to resend as history."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str
    usage: Usage
    applied_edits: tuple[AppliedEdit, ...] = ()
    request_id: str = ""
    # The whole message as the API sent it (for the transcript).
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return text_of(self.content)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def server_tool_calls(self) -> tuple[ToolCall, ...]:
        """The server tools the API ran in this response, each failed if its result is an
        error (`*_tool_result_error`) or missing."""
        failed = {
            str(b.get("tool_use_id")): _result_failed(b)
            for b in self.content
            if str(b.get("type", "")).endswith("_tool_result")
        }
        return tuple(
            ToolCall(
                str(b.get("id", "")),
                str(b.get("name", "")),
                dict(b["input"]) if isinstance(b.get("input"), Mapping) else {},
                failed.get(str(b.get("id")), True),
            )
            for b in self.content
            if b.get("type") == "server_tool_use"
        )


StreamItem = Progress | ModelResponse


class ModelClient(Protocol):
    """Sends one request; yields Progress while it streams, then exactly one ModelResponse.

    Raises agentctl.errors.ApiError when the request fails for good (after its retries).
    """

    def stream(self, request: Mapping[str, Any]) -> Iterator[StreamItem]: ...


def _result_failed(block: Mapping[str, Any]) -> bool:
    content = block.get("content")
    return isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error")


def text_of(content: Sequence[Mapping[str, Any]]) -> str:
    """The text blocks of a response, joined: the answer a user sees."""
    return "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def resendable(block: Mapping[str, Any]) -> dict[str, Any]:
    """A content block as history: a compaction block keeps `content` even when null (a
    failed compaction, a no-op to the server; the key is required) and nothing else that is
    null (the API refuses extra null fields)."""
    out = dict(block)
    if out.get("type") == "compaction":
        out = {k: v for k, v in out.items() if v is not None}
        out.setdefault("content", None)
    return out


def response_from_message(message: Mapping[str, Any], request_id: str = "") -> ModelResponse:
    """A ModelResponse from a Messages API message object (a plain dict)."""
    cm = message.get("context_management") or {}
    edits = tuple(AppliedEdit.from_json(dict(e)) for e in cm.get("applied_edits") or ())
    return ModelResponse(
        content=tuple(resendable(b) for b in message.get("content") or ()),
        stop_reason=str(message.get("stop_reason") or ""),
        usage=Usage.from_json(message.get("usage")),
        applied_edits=edits,
        request_id=request_id,
        raw=dict(message),
    )
