"""Batched clearing: the request sequence it steers, and what the server does with it.

Hand-computed sizes (agentctl's estimator): the opening user message is 7 tokens, each turn
adds one tool use and its result, 1,036 tokens, of which clearing the result frees 992 (a
1,000-word result becomes the placeholder). With trigger 4,500, low_water 2,500 and keep 1:
turn 5 reaches 5,187 > 4,500; two pairs free 1,984, short of the 2,687 above the low mark,
three free 2,976, so B = 3 (edited prompt 2,211). The edited prompt then grows by 1,036 a
turn and passes 4,500 again at turn 8 (5,319): three more, B = 6; then turn 11 (5,451): B = 9.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentctl.context.cache import PromptCache
from agentctl.context.edits import ClearToolUses, ContextEditing, build_context_management
from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import PRESETS, TRIGGER_BASES, TriggerBasis
from agentctl.context.tokens import estimate_request_tokens

EXPECTED_BOUNDARY = [0, 0, 0, 0, 3, 3, 3, 6, 6, 6, 9]  # turns 1..11
BATCHED = ClearToolUses(
    strategy="batched", trigger=4_500, low_water=2_500, keep=1, clear_at_least=0
)
MARKER = {"type": "ephemeral", "ttl": "5m"}


def history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * 1000}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return messages


def request(turns: int, tool_uses: ClearToolUses = BATCHED) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-sonnet-5", "max_tokens": 100}
    body["messages"] = history(turns)
    cm = build_context_management(ContextEditing(tool_uses), body)
    assert cm is not None
    body["context_management"] = cm
    last = body["messages"][-1]
    if isinstance(last["content"], list):  # the breakpoint a run puts on the last block
        last["content"] = [*last["content"][:-1], {**last["content"][-1], "cache_control": MARKER}]
    return body


def test_the_hand_computed_sizes_hold() -> None:
    assert estimate_request_tokens({"messages": history(0)}) == 7
    assert estimate_request_tokens({"messages": history(5)}) == 7 + 5 * 1036


def test_the_client_sends_the_profile_edit_until_the_first_clearing_then_holds_the_boundary() -> (
    None
):
    sent = [request(n)["context_management"]["edits"][0] for n in range(1, 12)]
    for turn, (edit, cleared) in enumerate(zip(sent, EXPECTED_BOUNDARY, strict=True), 1):
        if cleared == 0:
            assert edit["trigger"] == {"type": "input_tokens", "value": 4_500}, turn
            assert edit["keep"] == {"type": "tool_uses", "value": 1}, turn
        else:
            assert edit["trigger"] == {"type": "tool_uses", "value": cleared}, turn
            assert edit["keep"] == {"type": "tool_uses", "value": turn - cleared}, turn


@pytest.mark.parametrize("basis", TRIGGER_BASES)
def test_the_server_clears_in_batches_and_the_cache_holds_between_them(basis: TriggerBasis) -> None:
    cache = PromptCache(clock=lambda: 0.0)
    previous = 0
    for turn, cleared in enumerate(EXPECTED_BOUNDARY, 1):
        body = request(turn)
        out = apply_context_edits(body, body["context_management"]["edits"], server=PRESETS[basis])
        got = out.applied_edits[0]["cleared_tool_uses"] if out.applied_edits else 0
        assert got == cleared, turn
        usage = cache.account(out.request, "claude-sonnet-5")
        moved = turn > 1 and cleared != EXPECTED_BOUNDARY[turn - 2]
        if turn > 1 and not moved:  # the whole earlier prompt is read from the cache
            assert usage.cache_read_input_tokens == previous, turn
        if moved:
            assert usage.cache_read_input_tokens < previous, turn
        previous = out.input_tokens


def test_the_server_strategy_rewrites_the_cache_on_every_turn_past_the_trigger() -> None:
    """Under the unedited trigger basis (a setting of the default server model)."""
    server = dataclasses.replace(BATCHED, strategy="server", low_water=0)
    cache = PromptCache(clock=lambda: 0.0)
    reads_of_whole_prompt = 0
    previous = 0
    for turn in range(1, 12):
        body = request(turn, server)
        edits = body["context_management"]["edits"]
        out = apply_context_edits(body, edits, server=PRESETS["unedited-basis"])
        usage = cache.account(out.request, "claude-sonnet-5")
        reads_of_whole_prompt += turn > 1 and usage.cache_read_input_tokens == previous
        previous = out.input_tokens
    assert reads_of_whole_prompt == 3  # turns 2-4 only: from turn 5 on, one more clearing a turn


@pytest.mark.parametrize(
    ("basis", "cleared"),
    [("unedited", [0, 0, 0, 0, 4, 5, 6, 7, 8]), ("edited", [0, 0, 0, 0, 4, 4, 4, 4, 8])],
)
def test_the_server_models_differ_on_a_token_trigger(
    basis: TriggerBasis, cleared: list[int]
) -> None:
    """keep 1, trigger 4,500: unedited, every turn past it clears one more; edited, turn 5
    clears 4 (edited 1,219 tokens), which stays under the trigger until turn 9 (5,363)."""
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 4_500},
            "keep": {"type": "tool_uses", "value": 1}}  # fmt: skip
    for turn, expected in enumerate(cleared, 1):
        out = apply_context_edits({"messages": history(turn)}, [edit], server=PRESETS[basis])
        got = out.applied_edits[0]["cleared_tool_uses"] if out.applied_edits else 0
        assert got == expected, turn


def test_the_edited_model_skips_a_batch_below_clear_at_least() -> None:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 4_500},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": 2_500}}  # fmt: skip
    # turn 5: 2 clearable (1,982 < 2,500) -> nothing; turn 6: 3 (2,973) -> cleared.
    got = []
    for turn in (5, 6):
        out = apply_context_edits({"messages": history(turn)}, [edit], server=PRESETS["edited"])
        got.append(out.applied_edits[0]["cleared_tool_uses"] if out.applied_edits else 0)
    assert got == [0, 3]
