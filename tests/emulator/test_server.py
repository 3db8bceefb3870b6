"""The emulator over real HTTP with the real SDK: shapes, streaming, routes, auth."""

from __future__ import annotations

import http.client
import json
from typing import Any

import anthropic
import pytest

from agentctl.emulator.model import Script, ScriptTurn, ToolCall
from agentctl.emulator.server import running

from .helpers import BETA, MODEL, make_client, request

SCRIPT = Script(
    (
        ScriptTurn(
            thinking="I should look at my memory first.",
            text="Checking memory.",
            tool_calls=(ToolCall("memory", {"command": "view", "path": "/memories"}),),
        ),
    ),
    final_text="All done.",
)
THINKING = {"type": "enabled", "budget_tokens": 1024}
MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}


def _blocks(content: list[Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.to_dict().items() if k != "parsed_output"} for b in content]


def test_create_parses_into_beta_message_with_all_blocks() -> None:
    with running(script=SCRIPT) as emu:
        client = make_client(emu.base_url)
        message = client.beta.messages.create(
            **request(max_tokens=2000, thinking=THINKING, tools=[MEMORY_TOOL])
        )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature  # type: ignore[union-attr]
    assert message.content[2].input == {"command": "view", "path": "/memories"}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"
    assert message.id.startswith("msg_")
    assert message.model == MODEL
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message.usage.cache_read_input_tokens == 0
    assert message.context_management is None  # no edits requested


def test_stream_final_message_equals_non_streamed() -> None:
    body = request(max_tokens=2000, thinking=THINKING, tools=[MEMORY_TOOL], betas=[BETA])
    body["context_management"] = {"edits": [{"type": "clear_tool_uses_20250919"}]}
    with running(script=SCRIPT) as emu:
        client = make_client(emu.base_url)
        plain = client.beta.messages.create(**body)
        with client.beta.messages.stream(**body) as stream:
            final = stream.get_final_message()
    assert _blocks(final.content) == _blocks(plain.content)
    assert final.stop_reason == plain.stop_reason == "tool_use"
    assert final.usage.output_tokens == plain.usage.output_tokens
    assert final.usage.input_tokens == plain.usage.input_tokens
    assert final.context_management is not None
    assert final.context_management.applied_edits == []


def test_stream_event_sequence() -> None:
    with running(script=SCRIPT) as emu:
        client = make_client(emu.base_url)
        body = request(max_tokens=2000, thinking=THINKING, tools=[MEMORY_TOOL], stream=True)
        kinds = [event.type for event in client.beta.messages.create(**body)]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == 3 == kinds.count("content_block_stop")


def test_raw_sse_is_chunked_event_stream_with_ping() -> None:
    with running(script=SCRIPT) as emu:
        status, headers, text = _raw_text(emu.base_url, request(stream=True))
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"
    names = [
        line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event:")
    ]
    assert names[:2] == ["message_start", "content_block_start"]
    assert "ping" in names and names[-1] == "message_stop"


def _raw_text(base_url: str, body: Any) -> tuple[int, dict[str, str], str]:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    conn.request("POST", "/v1/messages", json.dumps(body), headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def test_script_runs_out_into_final_text() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
    ]
    with running(script=SCRIPT) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(messages=messages))
    assert message.content[0].text == "All done."  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"


def test_count_tokens_reports_original_with_edits() -> None:
    with running(script=SCRIPT) as emu:
        client = make_client(emu.base_url)
        plain = client.beta.messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
        edited = client.beta.messages.count_tokens(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            betas=[BETA],
            context_management={"edits": [{"type": "clear_tool_uses_20250919"}]},
        )
    assert plain.input_tokens > 0 and plain.context_management is None
    assert edited.context_management is not None
    assert edited.context_management.original_input_tokens == edited.input_tokens


def _raw(
    base_url: str, method: str, path: str, body: Any, headers: dict[str, str]
) -> tuple[int, dict[str, str], Any]:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def test_unknown_route_is_404_in_the_error_envelope() -> None:
    with running() as emu:
        status, headers, data = _raw(emu.base_url, "GET", "/v1/models", None, {})
    assert status == 404
    assert data["type"] == "error" and data["error"]["type"] == "not_found_error"
    assert headers["request-id"].startswith("req_")


def test_missing_key_is_401() -> None:
    with running() as emu:
        status, _, data = _raw(
            emu.base_url, "POST", "/v1/messages", request(), {"anthropic-version": "2023-06-01"}
        )
    assert status == 401
    assert data["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }


def test_requests_are_recorded_with_credentials_redacted() -> None:
    with running() as emu:
        make_client(emu.base_url).beta.messages.create(**request())
        received = emu.requests
    assert len(received) == 1
    assert received[0].path.startswith("/v1/messages")
    assert received[0].body["messages"] == [{"role": "user", "content": "hello"}]
    secrets = [v for k, v in received[0].headers.items() if k in ("x-api-key", "authorization")]
    assert secrets and all(v == "REDACTED" for v in secrets)


def test_with_raw_response_has_request_id_and_keeps_alive() -> None:
    with running() as emu:
        client = make_client(emu.base_url)
        raw = client.beta.messages.with_raw_response.create(**request())
        again = client.beta.messages.with_raw_response.create(**request())
    assert raw.headers["request-id"].startswith("req_")
    assert raw.headers["request-id"] != again.headers["request-id"]
    assert raw.parse().content[0].text  # type: ignore[union-attr]


def test_api_error_reaches_the_sdk_as_its_exception() -> None:
    with running() as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).beta.messages.create(**request(max_tokens=0))
    assert "max_tokens" in str(caught.value)


class BrokenModel:
    """A model with a bug."""

    def reply(self, request: dict[str, Any]) -> Any:
        raise KeyError("oops")


def test_a_bug_in_the_model_is_a_500_and_its_trace_is_kept() -> None:
    with running(model=BrokenModel()) as emu:
        with pytest.raises(anthropic.InternalServerError) as caught:
            make_client(emu.base_url).beta.messages.create(**request())
        errors = list(emu.errors)
    assert "emulator: KeyError" in str(caught.value)
    assert len(errors) == 1 and "KeyError: 'oops'" in errors[0]


def test_http_keep_alive_serves_many_requests_on_one_connection() -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    with running(script=Script()) as emu:
        host, port = emu.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        sockets = []
        for body in (request(), request(stream=True), request()):
            conn.request("POST", "/v1/messages", json.dumps(body), headers)
            response = conn.getresponse()
            response.read()
            sockets.append(conn.sock)
            assert response.status == 200 and not response.will_close
        conn.close()
    assert sockets[0] is not None and sockets[0] is sockets[1] is sockets[2]


def test_json_and_every_sse_event_validate_strictly_against_the_sdk_types() -> None:
    import pydantic
    from anthropic.types.beta import (
        BetaMessage,
        BetaMessageTokensCount,
        BetaRawMessageStreamEvent,
    )

    body = request(max_tokens=2000, thinking=THINKING, tools=[MEMORY_TOOL], betas=[BETA])
    body["context_management"] = {"edits": [{"type": "clear_tool_uses_20250919"}]}
    with running(script=SCRIPT) as emu:
        client = make_client(emu.base_url)
        raw = client.beta.messages.with_raw_response.create(**body).http_response.json()
        counted = client.beta.messages.with_raw_response.count_tokens(
            model=MODEL, messages=body["messages"], betas=[BETA]
        ).http_response.json()
        streamed = request(max_tokens=2000, thinking=THINKING, stream=True)
        _, _, text = _raw_text(emu.base_url, streamed)
    message = BetaMessage.model_validate(raw)  # strict: every field's type is checked
    assert message.usage.cache_creation is not None
    assert BetaMessageTokensCount.model_validate(counted).input_tokens > 0
    adapter: Any = pydantic.TypeAdapter(BetaRawMessageStreamEvent)
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    kinds = [adapter.validate_python(e).type for e in events if e["type"] != "ping"]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert any(e.get("delta", {}).get("type") == "signature_delta" for e in events)


def test_keep_requests_bounds_the_record_but_numbering_goes_on() -> None:
    with running(script=Script(), keep_requests=2) as emu:
        client = make_client(emu.base_url)
        for _ in range(5):
            client.beta.messages.create(**request())
        kept = [r.number for r in emu.requests]
    assert kept == [4, 5]


def _post(base_url: str, body: bytes, length: int | None = None) -> int:
    """POST raw bytes to /v1/messages (declaring `length`); the response status."""
    port = int(base_url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("POST", "/v1/messages")
        connection.putheader("content-type", "application/json")
        connection.putheader("content-length", str(len(body) if length is None else length))
        connection.endheaders(body)
        return connection.getresponse().status
    finally:
        connection.close()


def test_keep_bytes_bounds_the_bodies_kept_and_drops_an_oversized_one() -> None:
    bodies = [json.dumps({"pad": "x" * size}).encode() for size in (300, 300, 300, 5000)]
    with running(script=Script(), keep_requests=50, keep_bytes=1000) as emu:
        for body in bodies:
            _post(emu.base_url, body)
        kept = [(r.number, r.size, r.body is not None) for r in emu.requests]
    sizes = [len(body) for body in bodies]
    # the 5 kB body is recorded without its body; the three small ones fit in 1,000 bytes
    assert kept == [
        (1, sizes[0], True),
        (2, sizes[1], True),
        (3, sizes[2], True),
        (4, sizes[3], False),
    ]
    with running(script=Script(), keep_requests=50, keep_bytes=700) as emu:
        for body in bodies[:3]:
            _post(emu.base_url, body)
        assert [r.number for r in emu.requests] == [2, 3]  # the oldest went to stay in 700 bytes


def test_a_body_over_the_api_limit_is_refused_unread() -> None:
    with running(script=Script()) as emu:
        # 40 MiB declared, 2 bytes sent: reading it would wait for the rest until the timeout
        status = _post(emu.base_url, b"{}", length=40 << 20)
        assert status == 413
        assert emu.requests[-1].body is None and emu.requests[-1].size == 40 << 20
