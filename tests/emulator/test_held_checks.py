"""The emulator keeps, per conversation, what it checked of the last request (the messages'
shapes and tool pairs, compaction blocks and signatures, the script's place) and checks only
what a request adds: a request that adds a malformed message, or that changes an earlier one,
is still refused with the 400 a fresh emulator gives; the script plays the same turns."""

from __future__ import annotations

import copy
import random
from typing import Any

import anthropic
import pytest

from agentctl.emulator.conversations import CONVERSATIONS, Held
from agentctl.emulator.model import Script, ScriptTurn, assistant_turns, script_position
from agentctl.emulator.protocol import BETA_COMPACT
from agentctl.emulator.server import running
from agentctl.emulator.validation import sign_summary

from .helpers import conversation, make_client, request, tool_result, tool_use, user

CLOCK = lambda: 0.0  # noqa: E731  (no wall clock: the prompt cache is not under test here)


def _refusal(client: anthropic.Anthropic, body: dict[str, Any], **headers: str) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.post("/v1/messages", cast_to=object, body=body, options={"headers": headers})
    return str(caught.value.body["error"]["message"])  # type: ignore[index]


def _fresh_refusal(body: dict[str, Any], **headers: str) -> str:
    with running(script=Script(), clock=CLOCK) as emu:
        return _refusal(make_client(emu.base_url), body, **headers)


def _accepted(client: anthropic.Anthropic, body: dict[str, Any], **headers: str) -> None:
    client.post("/v1/messages", cast_to=object, body=body, options={"headers": headers})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "added", "message"),
    [
        ("block without type", [user("x"), {"role": "user", "content": [{"text": "x"}]}],
         "messages.8.content.0.type: Field required"),
        ("orphan tool_result", [{"role": "assistant", "content": "none"},
                                {"role": "user", "content": [tool_result(9)]}],
         "messages.8.content.0: unexpected `tool_use_id`"),
        ("bad role", [{"role": "tool", "content": "x"}],
         "messages.7.role: Input should be"),
    ],
)  # fmt: skip
def test_a_malformed_message_in_an_extension_is_refused(
    name: str, added: list[dict[str, Any]], message: str
) -> None:
    held = conversation(3)
    body = request(messages=[*held, *added])
    assert _fresh_refusal(body).startswith(message)
    with running(script=Script(), clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        _accepted(client, request(messages=held))
        _accepted(client, request(messages=[*held, user("and more")]))
        assert _refusal(client, body).startswith(message)


@pytest.mark.slow
def test_an_open_tool_use_held_last_must_be_answered_in_the_extension() -> None:
    prefill = [*conversation(2), {"role": "assistant", "content": [tool_use(3)]}]
    body = request(messages=[*prefill, user("I ignore your call")])
    message = "messages.5: `tool_use` ids were found without `tool_result` blocks"
    assert _fresh_refusal(body).startswith(message)
    with running(script=Script(), clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        _accepted(client, request(messages=prefill))  # a prefill may leave it open
        assert _refusal(client, body).startswith(message)


def _signed() -> list[dict[str, Any]]:
    block = {
        "type": "compaction",
        "content": "the summary",
        "signature": sign_summary("the summary"),
    }
    return [user("go"), {"role": "assistant", "content": [block]}, user("go on")]


@pytest.mark.slow
def test_an_edited_earlier_message_is_checked_again() -> None:
    held = conversation(3)
    edited = copy.deepcopy(held)
    edited[4]["content"][0]["tool_use_id"] = "t9"  # the second result answers no call now
    body = request(messages=[*edited, {"role": "assistant", "content": "x"}, user("more")])
    message = (
        "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after: t2"
    )
    assert _fresh_refusal(body).startswith(message)
    signed = _signed()
    tampered = copy.deepcopy(signed)
    tampered[1]["content"][0]["content"] = "another summary"
    tampered_body = request(messages=[*tampered, {"role": "assistant", "content": "x"}, user("y")])
    mismatch = "messages.1.content.0: `compaction` block `content` does not match its `signature`"
    assert _fresh_refusal(tampered_body) == mismatch
    with running(script=Script(), clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        _accepted(client, request(messages=held))
        assert _refusal(client, body).startswith(message)
        _accepted(client, request(messages=signed))
        assert _refusal(client, tampered_body) == mismatch


@pytest.mark.slow
def test_a_count_does_not_vouch_for_signatures() -> None:
    tampered = _signed()
    tampered[1]["content"][0]["content"] = "another summary"
    with running(script=Script(), clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        counted = client.beta.messages.count_tokens(model=request()["model"], messages=tampered)  # type: ignore[arg-type]
        assert counted.input_tokens > 0  # counting does not check signatures
        assert "does not match its `signature`" in _refusal(client, request(messages=tampered))


@pytest.mark.slow
def test_held_compaction_blocks_are_checked_again_without_the_strategy() -> None:
    block = {"type": "compaction", "content": "the summary"}  # unsigned: needs the strategy
    messages = [user("go"), {"role": "assistant", "content": [block]}, user("go on")]
    edits = {"edits": [{"type": "compact_20260112"}]}
    body = request(messages=[*messages, {"role": "assistant", "content": "x"}, user("y")])
    message = "messages.1.content.0: `compaction` blocks require a `compact_20260112` strategy"
    beta = {"anthropic-beta": BETA_COMPACT}
    assert _fresh_refusal(body, **beta).startswith(message)
    with running(script=Script(), clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        _accepted(client, request(messages=messages, context_management=edits), **beta)
        assert _refusal(client, body, **beta).startswith(message)


@pytest.mark.slow
def test_the_script_plays_from_the_request_when_the_history_goes_back() -> None:
    script = Script(tuple(ScriptTurn(text=f"turn {n}") for n in range(4)))
    histories = [2, 3, 1, 3, 0, 2]  # assistant turns in each request, going back and forth
    with running(script=script, clock=CLOCK) as emu:
        client = make_client(emu.base_url)
        texts = []
        for turns in histories:
            messages: list[dict[str, Any]] = [user("go")]
            for n in range(turns):
                messages += [{"role": "assistant", "content": f"turn {n}"}, user("next")]
            reply = client.beta.messages.create(**request(messages=messages))
            texts.append(reply.content[0].text)  # type: ignore[union-attr]
        # as long as the last request, but one assistant turn fewer: the place is counted again
        messages = [user("go"), {"role": "assistant", "content": "turn 0"}, user("next")]
        messages += [user("x"), user("y")]
        reply = client.beta.messages.create(**request(messages=messages))
        texts.append(reply.content[0].text)  # type: ignore[union-attr]
    assert texts == [*(f"turn {n}" for n in histories), "turn 1"]


def test_counts_kept_per_conversation_equal_counts_from_scratch() -> None:
    rng = random.Random(7)
    held: Held[list[int]] = Held()
    history = [user("go"), {"role": "assistant", "content": "a"}]
    for _ in range(200):
        cut = rng.randrange(2, len(history) + 1)
        added = [{"role": rng.choice(["user", "assistant", "system"]), "content": "x"}]
        history = [*history[:cut], *added * rng.randrange(0, 3)]
        body = {"model": "claude-sonnet-5", "messages": copy.deepcopy(history)}
        assert assistant_turns(body) == sum(m["role"] == "assistant" for m in history)
        assert script_position(body, held) == script_position(body)


def test_tallies_kept_in_place_follow_interleaved_edited_and_forgotten_conversations() -> None:
    """A conversation's kept tally is cut and extended in place: requests of more
    conversations than are kept, in random turn, some editing an earlier message or going
    back, each count what a count from scratch does."""
    rng = random.Random(11)
    held: Held[list[int]] = Held()
    histories = [[user(f"go {n}"), {"role": "assistant", "content": "a"}] for n in range(70)]
    assert len(histories) > CONVERSATIONS  # some are forgotten and counted again
    edits = 0
    for _ in range(1500):
        history = histories[rng.randrange(len(histories))]
        roll = rng.random()
        if roll < 0.15 and len(history) > 3:  # an earlier message changed
            history[rng.randrange(2, len(history) - 1)] = {"role": "assistant", "content": "b"}
            edits += 1
        elif roll < 0.25:
            del history[rng.randrange(2, len(history) + 1) :]  # back to an earlier point
        history += [user("x"), {"role": "assistant", "content": "y"}] * rng.randrange(0, 3)
        body = {"model": "claude-sonnet-5", "messages": copy.deepcopy(history)}
        assert script_position(body, held) == script_position(body)
        assert assistant_turns(body) == sum(m["role"] == "assistant" for m in history)
    assert edits > 50
