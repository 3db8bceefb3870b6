"""Request shapes the API accepts (system-role messages, nameless toolsets, a conversation
that opens with a compaction block), `applied_edits: []` under the beta, and on-demand
compaction (top-level `compaction`, beta compact-2026-09-04), with the real SDK over HTTP."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agentctl.emulator.model import Script
from agentctl.emulator.server import running

from .helpers import BETA, MODEL, conversation, make_client, request
from .test_editing import SpyModel

ON_DEMAND = "compact-2026-09-04"
THRESHOLD = "compact-2026-01-12"


def post(emu: Any, body: dict[str, Any], betas: list[str] | None = None) -> Any:
    headers = {"anthropic-beta": ",".join(betas)} if betas else {}
    client = make_client(emu.base_url)
    return client.post("/v1/messages", cast_to=object, body=body, options={"headers": headers})


def test_system_role_messages_are_read_with_the_user_turns() -> None:
    spy = SpyModel()
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "system", "content": "Be terse."},
        {"role": "system", "content": "Gone next turn.", "clear_at": "next_user_message"},
        *conversation(1)[1:],
        {"role": "system", "content": [{"type": "text", "text": "Shown."}]},
    ]
    with running(model=spy) as emu:
        reply = post(emu, request(messages=messages))
    assert reply["stop_reason"] == "end_turn"
    seen = spy.seen[0]["messages"]
    assert [m["role"] for m in seen] == ["user", "assistant", "user"]
    assert seen[0]["content"][1:] == [{"type": "text", "text": "Be terse."}]
    assert seen[2]["content"][-1] == {"type": "text", "text": "Shown."}


def test_nameless_toolsets_are_accepted_and_named_tools_still_need_a_name() -> None:
    tools = [
        {"type": "mcp_toolset", "mcp_server_name": "files"},
        {"type": "computer_toolset_20260801"},
        {"type": "browser_toolset_20260801"},
    ]
    with running(script=Script()) as emu:
        assert post(emu, request(tools=tools))["type"] == "message"
        with pytest.raises(anthropic.BadRequestError, match=r"tools\.0\.name: Field required"):
            post(emu, request(tools=[{"type": "bash_20250124"}]))


def test_a_conversation_may_open_with_a_compaction_block() -> None:
    opening = {"role": "assistant", "content": [{"type": "compaction", "content": "Summary."}]}
    messages = [opening, {"role": "user", "content": "go on"}]
    edits = {"edits": [{"type": "compact_20260112"}]}
    with running(script=Script()) as emu:
        reply = post(emu, request(messages=messages, context_management=edits), [THRESHOLD])
        assert reply["context_management"] == {"applied_edits": []}
        with pytest.raises(anthropic.BadRequestError) as caught:
            post(emu, request(messages=messages))  # no strategy: the path is one index on
    assert str(caught.value.body["error"]["message"]).startswith(  # type: ignore[index]
        "messages.1.content.0: `compaction` blocks require a `compact_20260112` strategy"
    )


@pytest.mark.parametrize(("betas", "present"), [([BETA], True), ([], False)])
def test_applied_edits_appear_under_the_beta_even_without_edits(
    betas: list[str], present: bool
) -> None:
    tools = [{"type": "memory_20250818", "name": "memory"}]
    with running(script=Script()) as emu:
        reply = post(emu, request(tools=tools), betas)
    assert ("context_management" in reply) is present
    if present:
        assert reply["context_management"] == {"applied_edits": []}


def test_on_demand_compaction_answers_with_a_signed_block_alone() -> None:
    body = request(messages=conversation(3), compaction={"type": "summarize"})
    with running(script=Script()) as emu:
        reply = post(emu, body, [ON_DEMAND])
        counted = make_client(emu.base_url).beta.messages.count_tokens(
            model=MODEL, messages=conversation(3), betas=[ON_DEMAND]
        )
    [block] = reply["content"]
    assert block["type"] == "compaction" and block["signature"] and block["content"]
    assert reply["stop_reason"] == "compaction"
    usage = reply["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (0, 0)
    [summarizing] = usage["iterations"]
    assert summarizing["type"] == "compaction"
    # the summarising call reads the conversation plus the default summary prompt
    assert summarizing["input_tokens"] > counted.input_tokens


def test_a_returned_signed_block_is_checked_and_replaces_what_came_before() -> None:
    spy = SpyModel()
    with running(model=spy) as emu:
        body = request(messages=conversation(3), compaction={"type": "summarize"})
        [block] = post(emu, body, [ON_DEMAND])["content"]
        later = [{"role": "assistant", "content": [block]}, {"role": "user", "content": "go"}]
        assert post(emu, request(messages=later), [ON_DEMAND])["type"] == "message"
        tampered = [{"role": "assistant", "content": [{**block, "content": "edited"}]}, later[1]]
        with pytest.raises(anthropic.BadRequestError) as caught:
            post(emu, request(messages=tampered), [ON_DEMAND])
    assert spy.seen[-1]["messages"][0]["content"] == [block]
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["message"] == (
        "messages.0.content.0: `compaction` block `content` does not match its `signature`"
    )
    assert error["details"] == {"error_code": "compaction_content_mismatch"}


@pytest.mark.parametrize(
    ("extra", "betas", "message"),
    [
        ({}, [], "compaction: Extra inputs are not permitted"),
        (
            {"context_management": {"edits": []}},
            [ON_DEMAND, BETA],
            "`compaction` cannot be used together with `context_management`",
        ),
        ({"stop_sequences": ["X"]}, [ON_DEMAND], "`compaction` cannot be used together with"),
        (
            {"tool_choice": {"type": "any"}, "tools": [{"name": "t", "input_schema": {}}]},
            [ON_DEMAND],
            "`compaction` cannot be used together with a forced `tool_choice`",
        ),
    ],
)
def test_on_demand_compaction_refusals(
    extra: dict[str, Any], betas: list[str], message: str
) -> None:
    body = request(compaction={"type": "summarize"}, **extra)
    with running(script=Script()) as emu, pytest.raises(anthropic.BadRequestError) as caught:
        post(emu, body, betas)
    assert str(caught.value.body["error"]["message"]).startswith(message)  # type: ignore[index]
