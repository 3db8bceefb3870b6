"""A message -> the API's server-sent event sequence (message_start ... message_stop)."""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]
Event = tuple[str, Json]

CHUNK_CHARS = 48  # text deltas carry a few words each, like the API's
MAX_CHUNKS = 64  # long texts get fewer, larger deltas (keeps big replies cheap)


def message_events(message: Json) -> list[Event]:
    """The full event sequence whose accumulation gives back `message`."""
    events: list[Event] = [("message_start", _start(message))]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block))
    # The API pings once early, after the first content_block_start.
    events.insert(2 if message["content"] else 1, ("ping", {"type": "ping"}))
    events.append(("message_delta", _delta(message)))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(name: str, data: Json) -> bytes:
    """One SSE frame."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


_INPUT_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
)


def _start(message: Json) -> Json:
    usage = {**message["usage"], "output_tokens": 1}  # the API sends a small placeholder here
    usage.pop("iterations", None)
    first = (message["usage"].get("iterations") or [{}])[0]
    if first.get("type") == "compaction":  # message_start carries the summarising call's
        usage.update({k: first[k] for k in _INPUT_KEYS if k in usage})  # input (observed)
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    start.pop("context_management", None)  # it rides on the final message_delta
    return {"type": "message_start", "message": start}


_DELTA_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _delta(message: Json) -> Json:
    usage = message["usage"]
    delta: Json = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        "usage": {k: usage[k] for k in _DELTA_KEYS if k in usage},
    }
    if "server_tool_use" in usage:
        delta["usage"]["server_tool_use"] = usage["server_tool_use"]
    if "iterations" in usage:  # the SDK takes them from the final delta
        delta["usage"]["iterations"] = usage["iterations"]
    if "context_management" in message:
        delta["context_management"] = message["context_management"]
    return delta


def _block_events(index: int, block: Json) -> list[Event]:
    kind = block["type"]
    if kind == "text":
        start: Json = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": part} for part in split_text(block["text"])]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in split_text(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "compaction":  # the whole summary in ONE delta [DOC S5]
        start = {"type": "compaction", "content": None}
        if "signature" in block:  # the delta type has no signature: it rides on the start
            start["signature"] = block["signature"]
        deltas = [{"type": "compaction_delta", "content": block["content"]}]
    elif kind in ("tool_use", "server_tool_use"):
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        text = json.dumps(block["input"], ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in split_text(text, 3)]
    else:  # a server tool's result arrives whole in its content_block_start, as the API's
        start, deltas = block, []
    events: list[Event] = [("content_block_start", _wrap("content_block_start", index, start))]
    events.extend(("content_block_delta", _delta_event(index, d)) for d in deltas)
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _wrap(kind: str, index: int, block: Json) -> Json:
    return {"type": kind, "index": index, "content_block": block}


def _delta_event(index: int, delta: Json) -> Json:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def split_text(text: str, pieces: int | None = None) -> list[str]:
    """Cut text into consecutive chunks (at least one, possibly empty) that join back to it."""
    if pieces is None:
        pieces = min(MAX_CHUNKS, max(1, -(-len(text) // CHUNK_CHARS)))
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
