"""Batched clearing: the request sequence it steers, and what the server does with it.

Hand-computed sizes (agentctl's estimator): the opening user message is 7 tokens, each turn
adds one tool use and its result, 1,168 tokens, of which clearing the result frees 1,092 (a
1,000-word result, 1,100 tokens, becomes the placeholder). With trigger 5,500, low_water 3,100
and keep 1: turn 5 reaches 5,847 > 5,500; two pairs free 2,184, short of the 2,747 above the
low mark, three free 3,276, so B = 3 (edited prompt 2,571). The edited prompt then grows by
1,168 a turn and passes 5,500 again at turn 8 (6,075): three more, B = 6 (2,799); then turn
11 (6,303): B = 9.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from agentctl.agent.request import build_context_management, tool_uses_edit
from agentctl.context.batching import _move
from agentctl.context.cache import PromptCache
from agentctl.context.engine import apply_context_edits
from agentctl.context.pairs import Pair
from agentctl.context.server_model import PRESETS, TRIGGER_BASES, TriggerBasis
from agentctl.context.tokens import estimate_request_tokens
from agentctl.profile.settings import ClearToolUses, ContextEditing

EXPECTED_BOUNDARY = [0, 0, 0, 0, 3, 3, 3, 6, 6, 6, 9]  # turns 1..11
BATCHED = ClearToolUses(
    strategy="batched", trigger=5_500, low_water=3_100, keep=1, clear_at_least=0
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
    assert estimate_request_tokens({"messages": history(5)}) == 7 + 5 * 1168


def test_the_client_sends_the_profile_edit_until_the_first_clearing_then_holds_the_boundary() -> (
    None
):
    sent = [request(n)["context_management"]["edits"][0] for n in range(1, 12)]
    for turn, (edit, cleared) in enumerate(zip(sent, EXPECTED_BOUNDARY, strict=True), 1):
        if cleared == 0:
            assert edit["trigger"] == {"type": "input_tokens", "value": 5_500}, turn
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
    """keep 1, trigger 5,500: unedited, every turn past it clears one more; edited, turn 5
    clears 4 (edited 1,479 tokens), which stays under the trigger until turn 9 (6,151)."""
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 5_500},
            "keep": {"type": "tool_uses", "value": 1}}  # fmt: skip
    for turn, expected in enumerate(cleared, 1):
        out = apply_context_edits({"messages": history(turn)}, [edit], server=PRESETS[basis])
        got = out.applied_edits[0]["cleared_tool_uses"] if out.applied_edits else 0
        assert got == expected, turn


def test_the_edited_model_skips_a_batch_below_clear_at_least() -> None:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 4_500},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": 2_500}}  # fmt: skip
    # turn 5: 2 clearable (2,184 < 2,500) -> nothing; turn 6: 3 (3,276) -> cleared.
    got = []
    for turn in (5, 6):
        out = apply_context_edits({"messages": history(turn)}, [edit], server=PRESETS["edited"])
        got.append(out.applied_edits[0]["cleared_tool_uses"] if out.applied_edits else 0)
    assert got == [0, 3]


def test_real_prompt_sizes_decide_where_the_server_reported_them() -> None:
    """`measured` (message count -> the prompt the server reported for that request): the
    walk adds the estimate of what came since to the latest real figure instead of using the
    estimate alone. Turn 4 is under the trigger by the estimate (4,679); a real 5,000 for the
    turn-3 request (7 messages, 3,511 estimated) puts it at 6,168: three pairs to clear. Turn
    5 is over it by the estimate (5,847); a real 4,000 for turn 4 puts it at 5,168: none."""
    assert tool_uses_edit(BATCHED, {"messages": history(4)})["trigger"]["type"] == "input_tokens"
    over = tool_uses_edit(BATCHED, {"messages": history(4)}, measured={7: 5_000})
    assert over["trigger"] == {"type": "tool_uses", "value": 3}
    assert tool_uses_edit(BATCHED, {"messages": history(5)})["trigger"]["value"] == 3
    under = tool_uses_edit(BATCHED, {"messages": history(5)}, measured={9: 4_000})
    assert under["trigger"] == {"type": "input_tokens", "value": 5_500}
    context = build_context_management(
        ContextEditing(BATCHED), {"messages": history(4)}, measured={7: 5_000}
    )
    assert context is not None and context["edits"][0] == over


def _naive_move(
    pairs: list[Pair], freed: list[int], view: int, start: int, limit: int, excess: int
) -> tuple[int, int]:
    end, gain = start, 0
    while end < limit and gain < excess:
        if pairs[end].ready_at >= view:
            gain += freed[end]
        end += 1
    return end, gain


def test_a_move_goes_on_from_where_a_move_that_fell_short_stopped() -> None:
    """`_move` told where an earlier move from the same start ran out of pairs (`tried`)
    ends where walking them all again ends (1,000 drawn cases, growing limits)."""
    draw = random.Random(11)
    resumed = 0
    for _ in range(1000):
        count = draw.randint(0, 30)
        pairs = [Pair({"id": str(i)}, {}, draw.randint(0, 40)) for i in range(count)]
        freed = [draw.randint(0, 50) for _ in range(count)]
        view, start = draw.randint(0, 40), draw.randint(0, count)
        limit, tried = start, None
        for _ in range(4):
            limit, excess = draw.randint(limit, count), draw.randint(-5, 400)
            got = _move(pairs, freed, view, start, limit, excess, tried)
            assert got == _naive_move(pairs, freed, view, start, limit, excess)
            resumed += tried is not None and tried[1] < excess
            if got[0] >= limit and got[1] < excess:
                tried = got
    assert resumed > 300
