"""A streamed Messages API response read from its bytes: SSE frames -> events -> the message
(the client's side of emulator/sse.py, which writes the events of a message).

The SDK's `BetaMessageStream` builds a pydantic model of every event, a model of the message
from them, and agentctl then turned that model back into JSON: six times the CPU of reading
the same bytes here, and a quarter of a turn's instructions (docs/bench.md, "Long runs"). Here
each event is one `json.loads`, and the message is built from the events as plain JSON the
way the SDK's `accumulate_event` builds its model (anthropic/lib/streaming/_beta_messages.py):
the same fields from the same events, the same precedence on `message_delta`, tool inputs
parsed as the SDK parses them (jiter, partial mode: an input cut short by max_tokens keeps
what arrived whole), and `null` fields left out as its `to_dict(exclude_none=True)` leaves
them. What the events say is not trusted: a value of the wrong shape raises AttributeError,
TypeError, KeyError or IndexError (the client refuses the response); `message_stop` marks
the message complete.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from jiter import from_json

from agentctl.agent.wire import MAX_JSON_DEPTH

# Blocks whose input arrives as `input_json_delta` pieces (the SDK's TRACKS_TOOL_INPUT).
TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
# With this beta, a string cut short is kept as far as it came (the SDK's "trailing-strings").
FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
_LINE_ENDS = (b"\n", b"\r")


class ErrorEvent(Exception):
    """The server sent an `error` event: `body` is its data, parsed when it is JSON."""

    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.body = body


def frames(chunks: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """(event name, data) of each server-sent event in `chunks`, as the SDK's SSEDecoder reads
    them: lines end at CR, LF or CRLF (also across chunks), a blank line ends an event (one
    without it at the end of the body is dropped), data lines are joined with LF, comments
    and other fields are skipped. Strict UTF-8."""
    line: list[bytes] = []  # the pieces of a line that has not ended yet
    event: str | None = None
    data: list[str] = []
    after_cr = False  # the last chunk ended with CR: an LF opening the next one ends no line
    for chunk in chunks:
        if not chunk:
            continue
        pieces = chunk.splitlines(keepends=True)
        if after_cr and pieces[0] == b"\n":
            pieces = pieces[1:]
        after_cr = chunk.endswith(b"\r")
        for piece in pieces:
            if not piece.endswith(_LINE_ENDS):
                line.append(piece)
                continue
            if line:
                line.append(piece)
                piece = b"".join(line)
                line = []
            text = piece.rstrip(b"\r\n").decode("utf-8")
            if text:
                name, _, value = text.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    event = value or None  # an empty name is none (the SDK's reading)
                elif name == "data":
                    data.append(value)
            elif event is not None or data:
                yield event, "\n".join(data)
                event, data = None, []


def events(chunks: Iterable[bytes]) -> Iterator[Any]:
    """The JSON of each event the SDK's `Stream` passes on (not `ping`, not unnamed, not
    empty); an `error` event raises ErrorEvent."""
    for name, data in frames(chunks):
        if name is None or name == "ping":
            continue
        if name == "error":
            try:
                body: object = json.loads(data)
                message = f"{body}"
            except ValueError:
                body, message = data, data or "error event"
            raise ErrorEvent(message, body)
        if data:
            yield json.loads(data)


class Message:
    """The message the events of one response build (plain JSON), event by event."""

    def __init__(self, counts: Iterable[str], betas: Iterable[str] = ()) -> None:
        """`counts`: the usage counts a `message_delta` carries (the SDK's
        BetaMessageDeltaUsage fields); `betas`: the request's."""
        self.snapshot: dict[str, Any] | None = None
        self._counts = tuple(counts)
        self.complete = False  # message_stop arrived
        self._inputs: dict[int, list[str]] = {}  # partial_json pieces by block index
        self._trailing = FINE_GRAINED_TOOL_STREAMING in betas

    def add(self, event: Any) -> None:
        """Take one event into the message (before `message_start`, events are not kept)."""
        kind = event.get("type")
        snapshot = self.snapshot
        if kind == "message_stop":
            self.complete = True
        elif snapshot is None:
            if kind == "message_start":
                message = event["message"]
                message.get("content")  # an object, or AttributeError
                self.snapshot = message
        elif kind == "content_block_start":
            block = event["content_block"]
            if block.get("type") == "fallback":  # the model that served the reply
                snapshot["model"] = block["to"]["model"]
            snapshot["content"].append(block)
        elif kind == "content_block_delta":
            self._delta(snapshot["content"][event["index"]], event["index"], event["delta"])
        elif kind == "message_delta":
            _message_delta(snapshot, event, self._counts)

    def _delta(self, block: Any, index: int, delta: Any) -> None:
        kind, block_type = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_type == "text":
            block["text"] += delta["text"]
        elif kind == "input_json_delta" and block_type in TOOL_INPUT_BLOCKS:
            piece = delta["partial_json"]
            if not isinstance(piece, str):
                raise TypeError(f"partial_json is {type(piece).__name__}, not a string")
            self._inputs.setdefault(index, []).append(piece)
        elif kind == "citations_delta" and block_type == "text":
            if block.get("citations"):
                block["citations"].append(delta["citation"])
            else:
                block["citations"] = [delta["citation"]]
        elif kind == "thinking_delta" and block_type == "thinking":
            block["thinking"] += delta["thinking"]
        elif kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta["signature"]
        elif kind == "compaction_delta" and block_type == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")

    def final(self) -> dict[str, Any]:
        """The whole message: tool inputs parsed, null fields left out. RuntimeError when
        no `message_start` came; ValueError when a tool input is not JSON."""
        if self.snapshot is None:
            raise RuntimeError("unexpected event order: no message_start")
        content = self.snapshot["content"]
        mode: Any = "trailing-strings" if self._trailing else True
        for index, pieces in self._inputs.items():
            text = "".join(pieces)
            if text:
                try:
                    content[index]["input"] = from_json(text.encode(), partial_mode=mode)
                except ValueError as err:
                    raise ValueError(f"tool input is not JSON: {err}") from None
        message: dict[str, Any] = without_nulls(self.snapshot)
        return message


def _message_delta(snapshot: dict[str, Any], event: Any, counts: tuple[str, ...]) -> None:
    delta, usage = event["delta"], event["usage"]
    snapshot["stop_reason"] = delta.get("stop_reason")
    snapshot["stop_sequence"] = delta.get("stop_sequence")
    snapshot["stop_details"] = delta.get("stop_details")
    if delta.get("container") is not None:
        snapshot["container"] = delta["container"]
    for name in ("context_management", "input_transformations"):
        if event.get(name) is not None:
            snapshot[name] = event[name]
    # Cumulative counts: each one sent replaces the message_start count (output_tokens always).
    new = {name: usage.get(name) for name in counts}
    new = {name: value for name, value in new.items() if value is not None}
    snapshot["usage"].update({**new, "output_tokens": usage.get("output_tokens")})


def without_nulls(value: Any, depth: int = 0) -> Any:
    """`value` without the null fields of its objects (a tool's `input` is kept as sent: it
    is the tool's arguments, not the API's fields), in new containers. Past MAX_JSON_DEPTH
    levels left as it is: such a message is refused anyway (`wire.check_message`)."""
    if depth > MAX_JSON_DEPTH:
        return value
    if isinstance(value, list):
        return [without_nulls(v, depth + 1) if _nests(v) else v for v in value]
    if not isinstance(value, dict):
        return value
    keep = "input" if value.get("type") in TOOL_INPUT_BLOCKS else None
    return {
        k: without_nulls(v, depth + 1) if k != keep and _nests(v) else v
        for k, v in value.items()
        if v is not None
    }


def _nests(value: Any) -> bool:
    return isinstance(value, dict | list)
