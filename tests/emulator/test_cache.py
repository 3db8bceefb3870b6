"""Prompt-cache accounting across requests, before and after a clearing (figures by hand).

Blocks (estimator rule, see test_editing): system "word " * 1100 = 1100 + 110 + 2 = 1212
(over the 1,024 minimum of claude-sonnet-5); user task 9; each tool round = tool_use 37 +
tool_result "word " * 400 = 440 + 30 = 470, so 507 per round. A cleared result becomes 38
(was 470): -432.
"""

from __future__ import annotations

from typing import Any

from agentctl.emulator.model import Script
from agentctl.emulator.server import running

from .helpers import BETA, conversation, make_client, request

EPHEMERAL = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "word " * 1100, "cache_control": EPHEMERAL}]
EDIT = {
    "type": "clear_tool_uses_20250919",
    "trigger": {"type": "input_tokens", "value": 3500},
    "keep": {"type": "tool_uses", "value": 3},
}


class Clock:
    """A settable clock for TTLs."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def body(rounds: int) -> dict[str, Any]:
    messages = conversation(rounds, words=400)
    messages[-1]["content"][-1]["cache_control"] = EPHEMERAL  # breakpoint on the newest block
    out = request(messages=messages, system=SYSTEM, betas=[BETA])
    out["context_management"] = {"edits": [EDIT]}
    return out


def usage(message: Any) -> tuple[int, int, int]:
    u = message.usage
    return u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens


def test_writes_then_reads_then_a_clearing_invalidates_from_the_cleared_block() -> None:
    with running(script=Script(), clock=Clock()) as emu:
        client = make_client(emu.base_url)
        first = client.beta.messages.create(**body(3))
        second = client.beta.messages.create(**body(4))
        third = client.beta.messages.create(**body(5))
    assert usage(first) == (0, 1212 + 9 + 3 * 507, 0)  # 2742 written, at both breakpoints
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == 2742
    assert first.context_management.applied_edits == []
    assert usage(second) == (0, 507, 2742)  # the previous prefix is read, the new round written
    # 5 rounds = 3756 > 3500 (4 rounds: 3249): the two oldest results are cleared
    # (2 x 432 = 864), so the prefix changes at the first tool_result: only the system prompt
    # is still cached.
    assert third.context_management.applied_edits[0].cleared_input_tokens == 864
    assert usage(third) == (0, 3756 - 864 - 1212, 1212)


def test_entries_expire_after_five_minutes() -> None:
    clock = Clock()
    with running(script=Script(), clock=clock) as emu:
        client = make_client(emu.base_url)
        client.beta.messages.create(**body(3))
        clock.now += 299
        warm = client.beta.messages.create(**body(3))
        clock.now += 301  # 301 s after the refresh of the read above
        cold = client.beta.messages.create(**body(3))
    assert usage(warm) == (0, 0, 2742)
    assert usage(cold) == (0, 2742, 0)


def test_below_minimum_nothing_is_cached() -> None:
    small = request(system=[{"type": "text", "text": "short", "cache_control": EPHEMERAL}])
    with running(script=Script()) as emu:
        client = make_client(emu.base_url)
        client.beta.messages.create(**small)
        again = client.beta.messages.create(**small)
    assert again.usage.cache_read_input_tokens == 0
    assert again.usage.cache_creation_input_tokens == 0
    assert again.usage.input_tokens > 0
