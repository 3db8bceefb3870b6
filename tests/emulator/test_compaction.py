"""compact_20260112 through the emulator with the real SDK over HTTP: the compaction block,
usage.iterations, the paused stop, the streamed compaction_delta, the 400s and the beta.

`conversation(100, words=500)` is 61,709 tokens (tests/context/test_compaction.py).
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agentctl.context.compaction import summarize
from agentctl.context.tokens import estimate_request_tokens
from agentctl.emulator.model import Script, ScriptTurn
from agentctl.emulator.server import running

from .helpers import BETA, conversation, make_client, request
from .test_editing import SpyModel

COMPACT_BETA = "compact-2026-01-12"
BIG = 61_709


def compact_edit(trigger: int = 50_000, **extra: Any) -> dict[str, Any]:
    return {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": trigger},
        **extra,
    }


def body(messages: list[dict[str, Any]] | None = None, **edit: Any) -> dict[str, Any]:
    return request(
        messages=messages or conversation(100, words=500),
        betas=[COMPACT_BETA],
        context_management={"edits": [compact_edit(**edit)]},
    )


def fixed_clock() -> float:
    return 0.0


def test_compaction_block_opens_the_reply_and_the_model_continues() -> None:
    spy = SpyModel()
    with running(model=spy, clock=fixed_clock) as emu:
        message = make_client(emu.base_url).beta.messages.create(**body())
    summary = summarize(conversation(100, words=500))
    assert message.content[0].type == "compaction"
    assert message.content[0].content == summary
    assert message.content[1].type == "text" and message.content[1].text == "ok"
    assert message.stop_reason == "end_turn"
    # The model answered from the compacted prompt alone.
    block = {"type": "compaction", "content": summary}
    assert spy.seen[0]["messages"] == [{"role": "user", "content": [block]}]
    kinds = [i.type for i in message.usage.iterations or []]
    assert kinds == ["compaction", "message"]
    squeeze, reply = message.usage.iterations  # type: ignore[misc]
    assert squeeze.input_tokens + squeeze.cache_read_input_tokens > BIG  # the closed prompt
    assert (reply.input_tokens, reply.output_tokens) == (
        message.usage.input_tokens,
        message.usage.output_tokens,
    )
    compacted_prompt = estimate_request_tokens({"messages": spy.seen[0]["messages"]})
    assert message.usage.input_tokens == compacted_prompt  # no breakpoints: all uncached


def test_paused_compaction_returns_only_the_block() -> None:
    spy = SpyModel()
    with running(model=spy, clock=fixed_clock) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            **body(pause_after_compaction=True)
        )
    assert [b.type for b in message.content] == ["compaction"]
    assert message.stop_reason == "compaction"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (0, 0)
    assert [i.type for i in message.usage.iterations or []] == ["compaction"]
    assert spy.seen == []  # no sampling after a paused compaction


def test_below_the_trigger_every_response_still_has_iterations() -> None:
    with running(script=Script()) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            **body(conversation(3), trigger=BIG + 1)
        )
    assert [b.type for b in message.content] == ["text"]
    assert [i.type for i in message.usage.iterations or []] == ["message"]


@pytest.mark.parametrize("paused", [False, True])
def test_streamed_final_message_equals_the_created_one(paused: bool) -> None:
    messages = []
    for stream in (False, True):
        with running(model=SpyModel(), clock=fixed_clock) as emu:
            client = make_client(emu.base_url)
            if stream:
                with client.beta.messages.stream(**body(pause_after_compaction=paused)) as s:
                    events = list(s)
                    messages.append(s.get_final_message())
            else:
                messages.append(client.beta.messages.create(**body(pause_after_compaction=paused)))
    created, streamed = (m.model_dump(exclude={"id"}) for m in messages)
    assert streamed == created
    deltas = [e for e in events if e.type == "content_block_delta" and e.index == 0]
    assert [d.delta.type for d in deltas] == ["compaction_delta"]  # one delta, whole summary


def test_resent_summary_replaces_what_came_before_and_the_script_continues() -> None:
    script = Script(tuple(ScriptTurn(text=f"t{i}") for i in range(103)))
    with running(script=script) as emu:
        client = make_client(emu.base_url)
        first = client.beta.messages.create(**body())
        assert first.content[1].text == "t100"  # 100 turns summarised, then turn 100
        history = [
            *conversation(100, words=500),
            {"role": "assistant", "content": [b.to_dict() for b in first.content]},
            {"role": "user", "content": "go on"},
        ]
        second = client.beta.messages.create(**body(history))
        count = client.beta.messages.count_tokens(
            **{k: v for k, v in body(history).items() if k != "max_tokens"}
        )
    assert [b.type for b in second.content] == ["text"]
    assert second.content[0].text == "t101"
    assert [i.type for i in second.usage.iterations or []] == ["message"]
    view = [{"role": "user", "content": [history[-2]["content"][0]]}, *history[-2:]]
    view[1] = {"role": "assistant", "content": history[-2]["content"][1:]}
    assert second.usage.input_tokens == estimate_request_tokens({"messages": view})
    assert count.input_tokens == second.usage.input_tokens  # applies the block, never compacts


def test_compaction_block_without_the_strategy_is_refused() -> None:
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "compaction", "content": "s"}]},
        {"role": "user", "content": "go"},
    ]
    with running(script=Script()) as emu:
        client = make_client(emu.base_url)
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.beta.messages.create(**request(messages=history))
        ok = client.beta.messages.create(**body(history))
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "messages.1.content.0: `compaction` blocks require a `compact_20260112` strategy in "
        "`context_management.edits`."
    )
    assert ok.stop_reason == "end_turn"


def test_null_extras_of_a_dumped_block_are_refused() -> None:
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "compaction", "content": "s", "text": None}]},
        {"role": "user", "content": "go"},
    ]
    with running(script=Script()) as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).beta.messages.create(**body(history))
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "messages.1.content.0.compaction.text: Extra inputs are not permitted"
    )


@pytest.mark.parametrize(
    ("betas", "edit", "error"),
    [
        ([COMPACT_BETA], compact_edit(), None),
        ([BETA, COMPACT_BETA], compact_edit(), None),
        (
            [BETA],
            compact_edit(),
            "context_management.edits.0: `compact_20260112` requires the `anthropic-beta: "
            "compact-2026-01-12` header",
        ),
        ([], compact_edit(), "context_management: Extra inputs are not permitted"),
        (
            [COMPACT_BETA],
            compact_edit(49_999),
            "context_management.edits.0.compact_20260112: trigger.value must be at least 50000",
        ),
    ],
)
def test_betas_and_trigger_minimum(
    betas: list[str], edit: dict[str, Any], error: str | None
) -> None:
    payload = request(betas=betas, context_management={"edits": [edit]})
    with running(script=Script()) as emu:
        client = make_client(emu.base_url)
        if error is None:
            assert client.beta.messages.create(**payload).stop_reason == "end_turn"
            return
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.beta.messages.create(**payload)
    assert caught.value.body["error"]["message"] == error  # type: ignore[index]
