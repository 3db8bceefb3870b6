"""Every request validation error, over HTTP with the SDK, in the API's envelope and style."""

from __future__ import annotations

import http.client
import json
from typing import Any

import anthropic
import pytest

from agentctl.emulator.model import Script
from agentctl.emulator.server import running

from .helpers import make_client, request

TOOL_USE = {"type": "tool_use", "id": "t1", "name": "rf", "input": {}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def _without(key: str) -> dict[str, Any]:
    body = request()
    del body[key]
    return body


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("no model", _without("model"), "model: Field required"),
    ("no max_tokens", _without("max_tokens"), "max_tokens: Field required"),
    ("no messages", _without("messages"), "messages: Field required"),
    ("zero max_tokens", request(max_tokens=0), "max_tokens: Input should be greater than"),
    ("empty messages", request(messages=[]), "messages: at least one message is required"),
    (
        "bad role",
        request(messages=[{"role": "tool", "content": "x"}]),
        "messages.0.role: Input should be 'user', 'assistant' or 'system'",
    ),
    (
        "only system messages",
        request(messages=[{"role": "system", "content": "x"}]),
        "messages: at least one user or assistant message is required",
    ),
    (
        "assistant first",
        request(messages=[{"role": "assistant", "content": "x"}]),
        'messages: first message must use the "user" role',
    ),
    (
        "block without type",
        request(messages=[{"role": "user", "content": [{"text": "x"}]}]),
        "messages.0.content.0.type: Field required",
    ),
    (
        "orphan tool_result",
        request(
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "no tools here"},
                {"role": "user", "content": [TOOL_RESULT]},
            ]
        ),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t1. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
        "message.",
    ),
    (
        "unanswered tool_use",
        request(
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [TOOL_USE]},
                {"role": "user", "content": "I ignore your tool call"},
            ]
        ),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "t1. Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message.",
    ),
    (
        "budget too small",
        request(thinking={"type": "enabled", "budget_tokens": 100}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    ),
    (
        "budget over max_tokens",
        request(max_tokens=1024, thinking={"type": "enabled", "budget_tokens": 1024}),
        f"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
        f"documentation at {THINKING_DOCS}",
    ),
    (
        "stop_sequences not strings",
        request(stop_sequences=[1]),
        "stop_sequences: Input should be a valid list of strings",
    ),
    (
        "custom tool without schema",
        request(tools=[{"name": "rf"}]),
        "tools.0.custom.input_schema: Field required",
    ),
    (
        "memory tool renamed",
        request(tools=[{"type": "memory_20250818", "name": "notes"}]),
        "tools.0.memory_20250818.name: Input should be 'memory'",
    ),
]


@pytest.mark.parametrize(("name", "body", "message"), CASES, ids=[c[0] for c in CASES])
def test_invalid_request_is_400(name: str, body: dict[str, Any], message: str) -> None:
    with running(script=Script()) as emu, pytest.raises(anthropic.BadRequestError) as caught:
        # the SDK's low-level post: .create() refuses to send a body missing required fields
        make_client(emu.base_url).post("/v1/messages", cast_to=object, body=body)
    error = caught.value.body  # type: ignore[assignment]
    assert error["type"] == "error"  # type: ignore[index]
    assert error["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert error["error"]["message"].startswith(message)  # type: ignore[index]
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")


def test_unknown_model_is_404() -> None:
    with running() as emu, pytest.raises(anthropic.NotFoundError) as caught:
        make_client(emu.base_url).beta.messages.create(**request(model="gpt-4o"))
    assert caught.value.body["error"]["message"] == "model: gpt-4o"  # type: ignore[index]


def test_any_claude_model_id_is_accepted() -> None:
    with running(script=Script()) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(model="claude-future-9"))
    assert message.model == "claude-future-9"


def test_prefilled_assistant_turn_may_hold_an_open_tool_use() -> None:
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [TOOL_USE]}]
    with running(script=Script()) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(messages=messages))
    assert message.stop_reason == "end_turn"


def _post(base_url: str, raw: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.request("POST", "/v1/messages", raw, headers)
    response = conn.getresponse()
    status, data = response.status, json.loads(response.read())
    conn.close()
    return status, data


def test_missing_version_header_and_broken_json() -> None:
    with running() as emu:
        no_version = _post(emu.base_url, json.dumps(request()).encode(), {"x-api-key": "k"})
        broken = _post(
            emu.base_url, b"{not json", {"x-api-key": "k", "anthropic-version": "2023-06-01"}
        )
    assert no_version == (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "anthropic-version: header is required",
            },
            "request_id": no_version[1]["request_id"],
        },
    )
    assert broken[0] == 400 and "invalid JSON" in broken[1]["error"]["message"]


def test_too_many_cache_breakpoints_is_400() -> None:
    marker = {"type": "ephemeral"}
    system = [{"type": "text", "text": f"part {i}", "cache_control": marker} for i in range(5)]
    with running() as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).beta.messages.create(**request(system=system))
    assert "A maximum of 4 blocks with cache_control" in str(caught.value)
