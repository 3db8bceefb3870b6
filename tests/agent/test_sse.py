"""The response stream read from its bytes (agent/sse.py) against the SDK's own reading.

The SDK is the oracle: its `SSEDecoder` for the frames, and its `BetaMessageStream` (through
`client.beta.messages.stream`, over real HTTP from a tiny server written here) for the message
the events build. The client must build the same message from the same bytes, however they
are cut into chunks, and refuse what the SDK cannot read.
"""

from __future__ import annotations

import itertools
import json
import threading
import typing
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import pytest
from anthropic._streaming import SSEDecoder
from hypothesis import given
from hypothesis import strategies as st

from agentctl.agent import sse
from agentctl.agent.client import AnthropicClient
from agentctl.agent.model import ModelResponse, Progress
from agentctl.agent.retry import RetryPolicy
from agentctl.errors import ApiError

REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}


def frame(data: dict[str, Any], name: str | None = None) -> bytes:
    return f"event: {name or data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def start(**over: Any) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 4,
             "cache_creation_input_tokens": None, "service_tier": "standard"}  # fmt: skip
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5",
               "content": [], "stop_reason": None, "stop_sequence": None, "container": None,
               "usage": usage}  # fmt: skip
    return {"type": "message_start", "message": {**message, **over}}


def block(index: int, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **content: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": content}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str = "end_turn", **over: Any) -> list[dict[str, Any]]:
    usage = {"output_tokens": 7, **over.pop("usage", {})}
    body = {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": usage, **over}  # fmt: skip
    return [body, {"type": "message_stop"}]


TOOL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
CITATION = {"type": "char_location", "cited_text": "x", "document_index": 0,
            "document_title": None, "start_char_index": 0, "end_char_index": 1}  # fmt: skip
EDITS = {"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2,
                            "cleared_input_tokens": 900}]}  # fmt: skip
# fmt: off
CASES: dict[str, list[dict[str, Any]]] = {
    "text and a tool call in pieces": [
        start(), block(0, {"type": "text", "text": ""}), {"type": "ping"},
        delta(0, type="text_delta", text="reading "), delta(0, type="text_delta", text="é ✓"),
        stop(0), block(1, TOOL),
        delta(1, type="input_json_delta", partial_json='{"path": "f'),
        delta(1, type="input_json_delta", partial_json='0.txt", "opt'),
        delta(1, type="input_json_delta", partial_json='": null, "n": [1, {"a": null}]}'),
        stop(1), *end("tool_use"),
    ],
    "thinking, signature, citations": [
        start(), block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="signature_delta", signature="sig=="), stop(0),
        block(1, {"type": "text", "text": "", "citations": None}),
        delta(1, type="text_delta", text="so"),
        delta(1, type="citations_delta", citation=CITATION),
        delta(1, type="citations_delta", citation={**CITATION, "cited_text": "y"}),
        stop(1), *end(),
    ],
    "a compaction block and the usage of its iterations": [
        start(), block(0, {"type": "compaction", "content": None}),
        delta(0, type="compaction_delta", content="summary", encrypted_content="enc"),
        stop(0), block(1, {"type": "text", "text": "ok"}), stop(1),
        *end(usage={"input_tokens": 50, "cache_read_input_tokens": 30,
                    "iterations": [{"type": "compaction", "input_tokens": 40,
                                    "output_tokens": 5}]},
             context_management=EDITS),
    ],
    "a fallback block relabels the model": [
        start(), block(0, {"type": "fallback", "from": {"model": "claude-sonnet-5"},
                           "to": {"model": "claude-opus-5-5"},
                           "trigger": {"type": "refusal"}}),
        stop(0), block(1, {"type": "text", "text": "hi"}), stop(1),
        *end(usage={"server_tool_use": {"web_search_requests": 1}}),
    ],
    "a tool call cut short by max_tokens": [
        start(), block(0, TOOL),
        delta(0, type="input_json_delta", partial_json='{"a": 1, "b": "x'),
        *end("max_tokens"),
    ],
    "events before message_start, unknown events and deltas": [
        block(0, {"type": "text", "text": ""}), delta(0, type="text_delta", text="lost"),
        start(content=[{"type": "text", "text": "kept "}]),
        {"type": "something_new", "x": 1}, delta(0, type="text_delta", text="and more"),
        delta(0, type="unknown_delta", text="?"), block(1, {"type": "server_tool_use",
        "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        delta(1, type="input_json_delta", partial_json=""),
        delta(1, type="input_json_delta", partial_json='{"query": "q"}'), stop(1),
        *end(container={"id": "c1", "expires_at": "2026-12-04T00:00:00Z"}),
    ],
}
# fmt: on


class Bytes:
    """A server answering every POST with `body`, written in `cuts` pieces (flushed each)."""

    def __init__(self) -> None:
        self.body = b""
        self.cuts: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("request-id", "req_sse")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                body, at = outer.body, 0
                for cut in [*outer.cuts, len(body)]:
                    if cut > at:
                        piece = body[at:cut]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                        at = cut
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def serve(self, body: bytes, cuts: list[int] | None = None) -> str:
        self.body, self.cuts = body, cuts or []
        return self.url


@pytest.fixture(scope="module")
def server() -> Iterator[Bytes]:
    served = Bytes()
    thread = threading.Thread(target=served.server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
        thread.join()


def ours(url: str, request: dict[str, Any] = REQUEST) -> list[Progress | ModelResponse]:
    retry = RetryPolicy(max_retries=0)
    client = AnthropicClient(api_key="k", base_url=url, timeout_s=20, retry=retry)
    return list(client.stream(request))


def the_sdks(url: str, request: dict[str, Any] = REQUEST) -> dict[str, Any]:
    client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
    with client.beta.messages.stream(**request) as stream:
        message = stream.get_final_message()
    return message.to_dict(mode="json", exclude_unset=False, exclude_none=True, warnings=False)


@pytest.mark.parametrize("case", list(CASES))
def test_the_message_is_the_one_the_sdk_builds(server: Bytes, case: str) -> None:
    body = b"".join(frame(event) for event in CASES[case])
    url = server.serve(body)
    expected = the_sdks(url)
    response = ours(url)[-1]
    assert isinstance(response, ModelResponse)
    assert response.raw == expected
    assert response.request_id == "req_sse"


def test_the_message_is_the_same_however_the_bytes_are_cut(server: Bytes) -> None:
    body = b"".join(frame(e) for e in CASES["text and a tool call in pieces"])
    body = body.replace(b"\n", b"\r\n")  # CRLF lines, cut between CR and LF below
    cuts = [i + 1 for i in range(len(body)) if body[i : i + 1] == b"\r"][::3]
    cuts += list(range(7, len(body), 97))  # and inside lines, inside UTF-8 characters
    url = server.serve(body, sorted(set(cuts)))
    expected = the_sdks(url)
    assert ours(url)[-1].raw == expected  # type: ignore[union-attr]


def test_a_streamed_fine_grained_input_keeps_a_string_cut_short(server: Bytes) -> None:
    events = CASES["a tool call cut short by max_tokens"]
    request = {**REQUEST, "betas": [sse.FINE_GRAINED_TOOL_STREAMING]}
    url = server.serve(b"".join(frame(e) for e in events))
    expected = the_sdks(url, request)
    response = ours(url, request)[-1]
    assert isinstance(response, ModelResponse) and response.raw == expected
    assert response.tool_uses[0]["input"] == {"a": 1, "b": "x"}
    plain = ours(url)[-1]
    assert isinstance(plain, ModelResponse) and plain.tool_uses[0]["input"] == {"a": 1}


def test_progress_reports_blocks_and_each_text_delta(server: Bytes) -> None:
    url = server.serve(b"".join(frame(e) for e in CASES["thinking, signature, citations"]))
    items = ours(url)
    progress = [(p.kind, p.chars, p.text, p.at) for p in items if isinstance(p, Progress)]
    assert progress == [("thinking", 0, "", 0), ("text", 0, "", 0), ("text", 2, "so", 0)]


def refused(server: Bytes, body: bytes) -> str:
    url = server.serve(body)
    with pytest.raises(ApiError) as info:
        ours(url)
    return str(info.value)


def test_a_tool_input_that_is_not_json_is_a_malformed_response(server: Bytes) -> None:
    events = [start(), block(0, TOOL), delta(0, type="input_json_delta", partial_json="{]"),
              stop(0), *end("tool_use")]  # fmt: skip
    assert "malformed response: tool input is not JSON" in refused(
        server, b"".join(frame(e) for e in events)
    )


def test_a_stream_without_message_start_is_a_malformed_response(server: Bytes) -> None:
    events = [block(0, {"type": "text", "text": "x"}), stop(0), *end()]
    text = refused(server, b"".join(frame(e) for e in events))
    assert "malformed response: unexpected event order: no message_start" in text


def test_a_last_event_without_its_blank_line_is_not_read(server: Bytes) -> None:
    body = b"".join(frame(e) for e in [start(), *end()])
    text = refused(server, body[:-1])  # message_stop ends without the blank line
    assert "the response stream ended before message_stop" in text


def test_an_event_that_is_not_an_object_is_refused(server: Bytes) -> None:
    body = frame(start()) + b"event: content_block_start\ndata: [1, 2]\n\n"
    assert "malformed stream event (AttributeError: " in refused(server, body)


# -- the frames, against the SDK's SSEDecoder ------------------------------------------------

LINES = st.lists(
    st.tuples(
        st.sampled_from(["event: ", "event:", "data: ", "data:", ": ", "id: ", "", "data"]),
        st.sampled_from(["", "ping", "error", "message_stop", "{}", " x", "é", "a:b"]),
        st.sampled_from(["\n", "\r\n", "\r"]),
    ),
    max_size=30,
)


def passed_on(found: Iterator[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """What `sse.events` (and the SDK's Stream) go on to read: named, not ping, with data."""
    return [(name, data) for name, data in found if name not in (None, "ping") and data]


@given(LINES, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_frames_are_the_sdks_however_the_bytes_are_cut(
    lines: list[tuple[str, str, str]], cuts: list[int]
) -> None:
    body = "".join(f"{field}{value}{eol}" for field, value, eol in lines).encode() + b"\n\n"
    edges = sorted({0, *[c % (len(body) + 1) for c in cuts], len(body)})
    chunks = [body[a:b] for a, b in itertools.pairwise(edges)]
    expected = passed_on((e.event, e.data) for e in SSEDecoder().iter_bytes(iter([body])))
    assert passed_on(sse.frames(chunks)) == expected


def _literal_types(union: Any) -> set[str]:
    """The `type` values of the models in one of the SDK's discriminated unions."""
    members = typing.get_args(typing.get_args(union)[0])
    return {typing.get_args(m.model_fields["type"].annotation)[0] for m in members}


def test_the_cases_cover_every_event_and_delta_the_sdk_knows() -> None:
    """A new event or delta type in an SDK upgrade fails here (then add a case: the oracle test
    shows whether agent/sse.py builds it as the SDK does) instead of being dropped unseen."""
    from anthropic.types.beta import BetaRawContentBlockDelta, BetaRawMessageStreamEvent

    events = [event for case in CASES.values() for event in case]
    seen_events = {event.get("type") for event in events}
    seen_deltas = {event["delta"].get("type") for event in events if "index" in event and
                   event.get("type") == "content_block_delta"}  # fmt: skip
    assert _literal_types(BetaRawMessageStreamEvent) <= seen_events
    assert _literal_types(BetaRawContentBlockDelta) <= seen_deltas
