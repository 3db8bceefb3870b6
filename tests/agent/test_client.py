"""The SDK client against the emulator over real HTTP: streaming, our types, every fault kind."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentctl.agent.client import AnthropicClient
from agentctl.agent.model import ModelResponse, Progress
from agentctl.agent.request import build_request
from agentctl.agent.retry import RetryPolicy
from agentctl.emulator import Script, ScriptTurn, ToolCall, running
from agentctl.errors import ApiError
from agentctl.profile.settings import ClearThinking, Profile, ThinkingSettings

MEMORY = {"type": "memory_20250818", "name": "memory"}
LONG_TEXT = "word " * 400


def make_client(base_url: str, sleeps: list[float], **kw: Any) -> AnthropicClient:
    retry = RetryPolicy(
        max_retries=kw.pop("max_retries", 3),
        base_delay=0.001,
        sleep=kw.pop("sleep", sleeps.append),
        jitter=lambda: 1.0,
    )
    return AnthropicClient(
        api_key="test-key", base_url=base_url, timeout_s=kw.pop("timeout_s", 5.0), retry=retry
    )


def a_request() -> dict[str, Any]:
    return build_request(Profile(), [{"role": "user", "content": "hi"}], [MEMORY])


def final(items: list[Any]) -> ModelResponse:
    assert isinstance(items[-1], ModelResponse)
    assert all(isinstance(i, Progress) for i in items[:-1])
    return items[-1]


SCRIPT = Script(
    (
        ScriptTurn(
            text=LONG_TEXT,
            tool_calls=(ToolCall("memory", {"command": "view", "path": "/memories"}),),
        ),
    )
)


def test_stream_gives_progress_then_our_response() -> None:
    sleeps: list[float] = []
    with running(script=SCRIPT) as emu:
        items = list(make_client(emu.base_url, sleeps).stream(a_request()))
    response = final(items)
    assert response.stop_reason == "tool_use"
    assert response.content[0] == {"type": "text", "text": LONG_TEXT}
    tool = response.content[1]
    assert tool["type"] == "tool_use" and tool["name"] == "memory"
    assert tool["input"] == {"command": "view", "path": "/memories"}
    assert response.request_id.startswith("req_")
    assert response.usage.output_tokens > 0
    assert response.raw["content"] == list(response.content)
    kinds = {(p.kind, p.tool_name) for p in items[:-1]}
    assert ("text", "") in kinds and ("tool_input", "memory") in kinds
    assert max(p.chars for p in items[:-1]) >= 400
    assert sleeps == []


def test_the_emulator_receives_the_request_as_built() -> None:
    with running(script=SCRIPT) as emu:
        list(make_client(emu.base_url, []).stream(a_request()))
        received = emu.requests[0]
    assert received.path == "/v1/messages"
    assert "context-management-2025-06-27" in received.headers.get("anthropic-beta", "")
    headers = {k.lower(): v for k, v in received.headers.items()}
    assert "REDACTED" in (headers.get("x-api-key"), headers.get("authorization"))
    body = received.body
    assert body["stream"] is True
    assert body["tools"] == [{**MEMORY, "cache_control": {"type": "ephemeral", "ttl": "5m"}}]
    assert body["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919"
    assert "betas" not in body


@pytest.mark.parametrize(
    "fault", ["429:0.01@1", "529@1", "500@1", "drop@1", "drop:0@1", "malformed@1"]
)
def test_each_transient_fault_is_retried_then_succeeds(fault: str) -> None:
    sleeps: list[float] = []
    with running(script=SCRIPT, faults=fault) as emu:
        response = final(list(make_client(emu.base_url, sleeps).stream(a_request())))
        assert len(emu.requests) == 2
    assert response.stop_reason == "tool_use"
    assert len(sleeps) == 1
    if fault.startswith("429"):
        assert sleeps == [0.01]  # retry-after honoured


def test_a_hanging_request_times_out_and_is_retried() -> None:
    # The hang lasts until close(), so the first attempt times out by construction. Its short
    # timeout is the SDK's per-request option, which the retry policy's sleep (called between
    # attempts) removes: the retry has the client's generous timeout, whatever the machine.
    request = {**a_request(), "timeout": 0.3}
    sleeps: list[float] = []

    def between_attempts(seconds: float) -> None:
        sleeps.append(seconds)
        del request["timeout"]

    with running(script=SCRIPT, faults="hang:3600@1") as emu:
        client = make_client(emu.base_url, [], timeout_s=60.0, sleep=between_attempts)
        assert final(list(client.stream(request))).stop_reason == "tool_use"
        assert len(emu.requests) == 2
    assert sleeps == [0.001]


def test_the_client_timeout_applies_and_is_named() -> None:
    with running(script=SCRIPT, faults="hang:3600@1") as emu, pytest.raises(ApiError) as info:
        list(make_client(emu.base_url, [], timeout_s=0.3, max_retries=0).stream(a_request()))
    assert "timed out after 0.3s (api.timeout_s)" in str(info.value)


def test_gives_up_after_max_retries_naming_status_and_request_id() -> None:
    sleeps: list[float] = []
    with running(script=SCRIPT, faults="529@1-9") as emu:
        with pytest.raises(ApiError) as info:
            list(make_client(emu.base_url, sleeps, max_retries=2).stream(a_request()))
        assert len(emu.requests) == 3
    err = info.value
    assert err.status == 529 and err.request_id and err.request_id.startswith("req_")
    assert (
        "529" in str(err) and "gave up after 3 attempts" in str(err) and err.request_id in str(err)
    )
    assert sleeps == [0.001, 0.002]


def test_bad_requests_fail_at_once_with_the_api_message() -> None:
    request = a_request()
    request["max_tokens"] = 0
    with running(script=SCRIPT) as emu:
        with pytest.raises(ApiError) as info:
            list(make_client(emu.base_url, []).stream(request))
        assert len(emu.requests) == 1
    assert info.value.status == 400 and "max_tokens" in str(info.value)


@contextmanager
def fixed_status(status: int, error_type: str, message: str) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering every request with one error."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps({"type": "error", "error": {"type": error_type, "message": message}})
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("request-id", "req_fixed")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "kind", "hint"),
    [
        (401, "authentication_error", "check ANTHROPIC_API_KEY"),
        (403, "permission_error", "request id req_fixed"),
        (404, "not_found_error", "request id req_fixed"),
    ],
)
def test_auth_and_not_found_are_not_retried(status: int, kind: str, hint: str) -> None:
    sleeps: list[float] = []
    with fixed_status(status, kind, "nope, says the API") as url, pytest.raises(ApiError) as info:
        list(make_client(url, sleeps).stream(a_request()))
    assert sleeps == []
    assert info.value.status == status
    assert "nope, says the API" in str(info.value) and hint in str(info.value)


def test_unreachable_api_is_retried_then_reported() -> None:
    sleeps: list[float] = []
    with pytest.raises(ApiError, match="connection failed"):
        list(make_client("http://127.0.0.1:9", sleeps, max_retries=1).stream(a_request()))
    assert len(sleeps) == 1


@contextmanager
def stream_error(error_type: str) -> Iterator[tuple[str, list[int]]]:
    """A 200 event stream that starts a message, then sends an in-stream `error` event."""
    hits: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            hits.append(1)
            start = {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 0},
                },
            }
            error = {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}
            body = (
                f"event: message_start\ndata: {json.dumps(start)}\n\n"
                f"event: error\ndata: {json.dumps(error)}\n\n"
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("request-id", "req_stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_in_stream_errors_retry_by_their_type() -> None:
    with stream_error("overloaded_error") as (url, hits), pytest.raises(ApiError) as info:
        list(make_client(url, [], max_retries=2).stream(a_request()))
    assert len(hits) == 3 and "overloaded_error" in str(info.value)
    with stream_error("invalid_request_error") as (url, hits), pytest.raises(ApiError):
        list(make_client(url, [], max_retries=2).stream(a_request()))
    assert len(hits) == 1


def test_adaptive_thinking_with_clear_thinking_is_accepted_and_thinks() -> None:
    """The emulator takes `thinking: {"type": "adaptive"}` as thinking on: the scripted
    thinking comes back, and clear_thinking (which needs thinking) is accepted."""
    base = Profile()
    profile = dataclasses.replace(
        base,
        thinking=ThinkingSettings(enabled=True, adaptive=True),
        context_editing=dataclasses.replace(
            base.context_editing, thinking=ClearThinking(enabled=True, keep=1)
        ),
    )
    script = Script((ScriptTurn(thinking="Consider the notes.", text="done"),))
    request = build_request(profile, [{"role": "user", "content": "hi"}], [MEMORY])
    with running(script=script) as emu:
        response = final(list(make_client(emu.base_url, []).stream(request)))
        received = emu.requests[0].body
    assert received["thinking"] == {"type": "adaptive"}
    assert received["context_management"]["edits"][0]["type"] == "clear_thinking_20251015"
    assert response.stop_reason == "end_turn"
    assert [b["type"] for b in response.content] == ["thinking", "text"]
    assert response.content[0]["thinking"] == "Consider the notes."
