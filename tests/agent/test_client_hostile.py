"""The SDK client against hostile servers over real HTTP: keys echoed, redirects, endless streams.

Each server is a tiny threaded http.server written here (not the emulator's encoder, so the
client's parsing is checked against independent bytes). Time limits use a stepping clock given
to WireLimits, so no test depends on how fast the machine is.
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentctl.agent.client import AnthropicClient
from agentctl.agent.model import ModelResponse
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.wire import WireLimits
from agentctl.emulator import running
from agentctl.errors import ApiError

# Real servers or whole recorded runs per test: many short tests add up to several
# seconds, so `make test-fast` leaves this module to `make test`.
pytestmark = pytest.mark.slow

KEY = "sk-ant-api03-HOSTILE-test-key-0123456789"
TOKEN = "plain-bearer-token-XYZ-123"
REQUEST = {
    "model": "claude-sonnet-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}
Handler = Callable[[BaseHTTPRequestHandler], None]


def sse(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def usage(**over: Any) -> dict[str, Any]:
    return {"input_tokens": 10, "output_tokens": 3, **over}


def message_frames(final_usage: dict[str, Any], block: dict[str, Any] | None = None) -> bytes:
    start = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5",
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": usage()}  # fmt: skip
    block = block or {"type": "text", "text": ""}
    return b"".join([
        sse("message_start", {"type": "message_start", "message": start}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": block}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "usage": final_usage,
                              "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        sse("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


@contextmanager
def serve(answer: Handler) -> Iterator[tuple[str, list[str], threading.Event]]:
    """A server whose every POST is answered by `answer`; yields (url, paths seen, stop)."""
    seen: list[str] = []
    stop = threading.Event()

    class Server(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.path)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Server)
    server.daemon_threads = True
    server.stop = stop  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen, stop
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def client(url: str, sleeps: list[float], wire: WireLimits | None = None) -> AnthropicClient:
    retry = RetryPolicy(max_retries=2, base_delay=0.001, sleep=sleeps.append, jitter=lambda: 1.0)
    return AnthropicClient(api_key=KEY, base_url=url, timeout_s=20, retry=retry, wire=wire)


def outcome(url: str, wire: WireLimits | None = None) -> tuple[ApiError, list[float]]:
    """The ApiError a request ends with (on a thread, with a generous bound), and the sleeps."""
    sleeps: list[float] = []
    box: list[BaseException | list[Any]] = []

    def go() -> None:
        try:
            box.append(list(client(url, sleeps, wire).stream(REQUEST)))
        except BaseException as err:
            box.append(err)

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the request was not stopped"
    assert isinstance(box[0], ApiError), box[0]
    return box[0], sleeps


def stepping_clock(step: float) -> Callable[[], float]:
    """A clock that moves `step` seconds each time it is read."""
    counter = itertools.count()
    return lambda: next(counter) * step


def head(handler: BaseHTTPRequestHandler, *extra: tuple[str, str]) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("request-id", "req_hostile")
    for name, value in extra:
        handler.send_header(name, value)
    handler.end_headers()


# -- credentials echoed by the server ---------------------------------------------------------


@pytest.mark.parametrize("credential", ["api_key", "auth_token"])
def test_a_key_echoed_in_message_and_request_id_is_redacted(credential: str) -> None:
    secret = KEY if credential == "api_key" else TOKEN  # the token is not sk-ant- shaped
    retry = RetryPolicy(max_retries=0)
    with running(faults="echokey@1") as emu:
        api = AnthropicClient(
            base_url=emu.base_url, timeout_s=5, retry=retry, **{credential: secret}
        )
        with pytest.raises(ApiError) as caught:
            list(api.stream(REQUEST))
    err = caught.value
    assert err.status == 401
    assert secret not in str(err) and secret not in (err.request_id or "")
    assert "invalid x-api-key: " in str(err) and "[REDACTED]" in str(err)
    assert err.request_id is not None and "[REDACTED]" in err.request_id
    assert err.__cause__ is None and err.__context__ is None  # no unredacted SDK error inside


def test_a_key_echoed_in_a_good_response_is_redacted() -> None:
    block = {"type": "text", "text": f"your key is {KEY}"}

    def answer(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("request-id", KEY)
        h.end_headers()
        h.wfile.write(message_frames(usage(), block))

    with serve(answer) as (url, _seen, _stop):
        response = list(client(url, []).stream(REQUEST))[-1]
    assert isinstance(response, ModelResponse)
    assert KEY not in json.dumps(response.raw) and KEY not in response.request_id
    assert response.content[0]["text"] == "your key is [REDACTED]"


# -- redirects --------------------------------------------------------------------------------


def test_a_redirect_to_another_origin_is_not_followed() -> None:
    with serve(lambda h: h.wfile.write(message_frames(usage()))) as (other, reached, _stop):

        def redirect(h: BaseHTTPRequestHandler) -> None:
            h.send_response(307)
            h.send_header("location", f"{other}/v1/messages")
            h.send_header("content-length", "0")
            h.end_headers()

        with serve(redirect) as (url, asked, _):
            err, sleeps = outcome(url)
    assert reached == [] and asked == ["/v1/messages"] and sleeps == []
    assert err.status == 307
    assert f"redirect to {other}/v1/messages not followed" in str(err)


# -- time and size ----------------------------------------------------------------------------


def pings_forever(h: BaseHTTPRequestHandler) -> None:
    head(h)
    h.wfile.write(message_frames(usage()).split(b"event: content_block_start")[0])
    stop = h.server.stop  # type: ignore[attr-defined]
    while not stop.wait(0.01):
        h.wfile.write(sse("ping", {"type": "ping"}))
        h.wfile.flush()


def test_a_stream_that_never_ends_stops_at_the_deadline() -> None:
    with serve(pings_forever) as (url, seen, _stop):
        err, sleeps = outcome(url, WireLimits(deadline_s=5, clock=stepping_clock(0.5)))
    assert "no complete response within 5s (api.deadline_s)" in str(err)
    assert seen == ["/v1/messages"] and sleeps == []  # not retried


def silent(h: BaseHTTPRequestHandler) -> None:
    head(h)
    h.wfile.write(message_frames(usage()).split(b"event: content_block_start")[0])
    h.wfile.flush()
    h.server.stop.wait(60)  # type: ignore[attr-defined]


def trickled_headers(h: BaseHTTPRequestHandler) -> None:
    h.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for n in itertools.count():
        h.wfile.write(b"x-pad-%d: 1\r\n" % n)
        h.wfile.flush()
        if h.server.stop.wait(0.05):  # type: ignore[attr-defined]
            return


@pytest.mark.parametrize("answer", [silent, trickled_headers])
def test_the_watchdog_ends_a_request_at_the_deadline(answer: Handler) -> None:
    """No bytes to check (silence, or headers a line at a time): a timer cuts the connection."""
    with serve(answer) as (url, seen, _stop):
        err, sleeps = outcome(url, WireLimits(deadline_s=0.3))  # api.timeout_s is 20 here
    assert "no complete response within 0.3s (api.deadline_s)" in str(err)
    assert seen == ["/v1/messages"] and sleeps == []


def endless(unit: bytes) -> Handler:
    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        try:
            while True:
                h.wfile.write(unit)
        except OSError:
            return  # the client hung up

    return answer


def test_one_endless_sse_line_is_cut_at_the_event_cap() -> None:
    with serve(endless(b"data: " + b"x" * 65536)) as (url, seen, _stop):
        err, sleeps = outcome(url, WireLimits(max_event_bytes=2**20))
    assert "one stream event larger than 1 MiB" in str(err)
    assert seen == ["/v1/messages"] and sleeps == []


def test_many_small_events_are_cut_at_the_body_cap() -> None:
    with serve(endless(sse("ping", {"type": "ping"}) * 100)) as (url, _seen, _stop):
        err, _ = outcome(url, WireLimits(max_body_bytes=2**20))
    assert "response body larger than 1 MiB" in str(err)


def test_a_compressed_body_is_refused() -> None:
    body = gzip.compress(message_frames(usage()))

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h, ("content-encoding", "gzip"), ("content-length", str(len(body))))
        h.wfile.write(body)

    with serve(answer) as (url, _seen, _stop):
        err, _ = outcome(url)
    assert "compressed response (content-encoding: gzip)" in str(err)


# -- what the stream says ---------------------------------------------------------------------


def test_deeply_nested_json_is_an_api_error() -> None:
    deep = "[" * 50_000 + "]" * 50_000
    tool = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {}}
    frames = message_frames(usage(), tool).replace(
        b'"input": {}', b'"input": {"a": %s}' % deep.encode()
    )

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(frames)

    with serve(answer) as (url, _seen, _stop):
        err, sleeps = outcome(url)
    assert "nested" in str(err) and sleeps == []


def test_moderately_nested_json_past_the_limit_is_refused() -> None:
    tool = {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": {}}
    nested: Any = 1
    for _ in range(200):
        nested = [nested]
    frames = message_frames(usage(), {**tool, "input": {"a": nested}})

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(frames)

    with serve(answer) as (url, _seen, _stop):
        err, _ = outcome(url)
    assert "JSON nested deeper than 128 levels" in str(err)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("input_tokens", -1_000_000),
        ("output_tokens", -1),
        ("cache_read_input_tokens", -5),
        ("cache_creation_input_tokens", 10**15),
        ("input_tokens", 1.5),
        ("output_tokens", "many"),
    ],
)
def test_impossible_usage_is_refused(field: str, value: Any) -> None:
    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(message_frames(usage(**{field: value})))

    with serve(answer) as (url, seen, _stop):
        err, sleeps = outcome(url)
    assert f"usage.{field} = {value!r} is not a token count" in str(err)
    assert len(seen) == 1 and sleeps == []


DELTA = b'"type": "message_delta", '
TEXT_BLOCK = b'"content_block": {"type": "text", "text": ""}'


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (DELTA, DELTA + b'"context_management": {"applied_edits": [5]}, ',
         "context_management.applied_edits is not a list of objects"),
        (DELTA, DELTA + b'"context_management": {"applied_edits": "x"}, ',
         "context_management.applied_edits is not a list of objects"),
        (DELTA, DELTA + b'"context_management": {"applied_edits": [{"type": "clear_tool_uses_'
         b'20250919", "cleared_input_tokens": -5}]}, ',
         "context_management.applied_edits[0].cleared_input_tokens = -5 is not a count"),
        (TEXT_BLOCK, b'"content_block": 5', "malformed stream event (AttributeError: "),
        (b'"message": {', b'"message": 5, "x": {', "malformed stream event (AttributeError: "),
        (b'"usage": {"input_tokens": 10, "output_tokens": 3}}}', b'"usage": null}}',
         "malformed stream event (AttributeError: "),
    ],
)  # fmt: skip
def test_events_of_the_wrong_shape_are_api_errors(old: bytes, new: bytes, reason: str) -> None:
    frames = message_frames(usage())
    assert old in frames
    frames = frames.replace(old, new, 1)

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(frames)

    with serve(answer) as (url, _seen, _stop):
        err, sleeps = outcome(url)
    assert f"response refused: {reason}" in str(err) and sleeps == []
