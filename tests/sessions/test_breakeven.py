"""The per-edit cache ledger on hand-computed runs, and on the recorded research run."""

from __future__ import annotations

import dataclasses

import pytest

from agentctl.context.prices import Price, Pricing
from agentctl.sessions.breakeven import balances_for_run, edit_balances
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.report import ledger, remedies
from agentctl.sessions.simulate import recorded_run, simulate
from agentctl.sessions.transcript import Transcript
from agentctl.types import AppliedEdit, Turn, TurnEvent, Usage

TOOL_USES = "clear_tool_uses_20250919"
PRICE = Price(input=2, output=10, cache_write_5m=2.5, cache_write_1h=4, cache_read=0.2)


def _turn(
    turn: int, read: int, write: int, cleared: int, write_1h: int = 0, kind: str = TOOL_USES
) -> Turn:
    edits = (AppliedEdit.from_json({"type": kind, "cleared_input_tokens": cleared}),)
    split = Usage(ephemeral_5m_input_tokens=write - write_1h, ephemeral_1h_input_tokens=write_1h)
    return Turn(turn, "tool_use", Usage(0, 10, write, read) + split, edits if cleared else ())


def _run(length: int) -> list[Turn]:
    """Turn 3 clears 8,000 tokens; its prefix after the first 1,000 tokens is rewritten."""
    turns = [_turn(1, 0, 10_000, 0), _turn(2, 10_000, 2_000, 0), _turn(3, 1_000, 4_000, 8_000)]
    turns += [_turn(t, 5_000 + 500 * (t - 4), 500, 8_000) for t in range(4, length + 1)]
    return turns


def test_an_edit_that_pays_off_within_the_run() -> None:
    (edit,) = edit_balances(_run(7), PRICE)
    # rewritten = prompt(2) 12,000 - newly cleared 8,000 - read(3) 1,000
    assert (edit.turn, edit.newly_cleared, edit.rewritten) == (3, 8_000, 3_000)
    assert edit.premium_usd == pytest.approx(3_000 * (2.5 - 0.2) / 1e6)  # 0.0069
    assert edit.saving_per_turn_usd == pytest.approx(8_000 * 0.2 / 1e6)  # 0.0016
    assert edit.break_even_turn == 7  # 5 turns of 0.0016 cover 0.0069
    assert edit.net_usd == pytest.approx(5 * 0.0016 - 0.0069)
    assert edit.avoid_with_clear_at_least is None


def test_an_edit_that_never_pays_off_is_a_net_loss_with_the_clear_at_least_to_avoid_it() -> None:
    (edit,) = edit_balances(_run(6), PRICE)
    assert edit.break_even_turn is None
    assert edit.net_usd == pytest.approx(4 * 0.0016 - 0.0069)
    assert edit.avoid_with_clear_at_least == 8_001
    assert edit.to_json()["break_even_turn"] is None


def test_a_loss_made_by_clear_thinking_alone_has_no_clear_at_least() -> None:
    thinking = "clear_thinking_20251015"
    turns = [
        _turn(t.turn, t.usage.cache_read_input_tokens, t.usage.cache_creation_input_tokens,
              t.cleared_input_tokens, kind=thinking)
        for t in _run(6)
    ]  # fmt: skip
    (edit,) = edit_balances(turns, PRICE)
    assert edit.net_usd < 0 and edit.avoid_with_clear_at_least is None


def test_a_one_hour_rewrite_costs_the_one_hour_premium() -> None:
    turns = _run(7)
    turns[2] = _turn(3, 1_000, 4_000, 8_000, write_1h=4_000)
    (edit,) = edit_balances(turns, PRICE)
    assert edit.premium_usd == pytest.approx(3_000 * (4 - 0.2) / 1e6)


def test_without_caching_there_is_no_premium_and_savings_are_at_the_input_price() -> None:
    cleared = (AppliedEdit(TOOL_USES, cleared_input_tokens=6_000),)
    turns = [Turn(1, "tool_use", Usage(9_000, 5)), Turn(2, "tool_use", Usage(4_000, 5), cleared)]
    (edit,) = edit_balances(turns, PRICE)
    assert (edit.rewritten, edit.premium_usd, edit.break_even_turn) == (0, 0.0, 2)
    assert edit.saving_per_turn_usd == pytest.approx(6_000 * 2 / 1e6)


def test_only_growth_of_the_clearing_is_a_new_edit() -> None:
    turns = _run(7)
    turns[5] = _turn(6, 1_000, 5_000, 9_000)  # clears 1,000 more on turn 6
    assert [b.turn for b in edit_balances(turns, PRICE)] == [3, 6]
    assert edit_balances(turns, PRICE)[1].newly_cleared == 1_000


@pytest.mark.dates
def test_the_research_run_ledger(research: Transcript) -> None:
    profile = session_profile(research)
    balances = edit_balances(recorded_run(research, profile).turns, PRICE)
    cleared = [t.cleared_input_tokens for t in research.turns]
    pairs = zip(research.turns[1:], cleared, cleared[1:], strict=False)
    grew = [t.turn for t, a, b in pairs if b > a]
    assert [b.turn for b in balances] == grew and len(grew) >= 3
    index = grew[0] - 1
    first, (before, now) = balances[0], research.turns[index - 1 : index + 1]
    assert first.newly_cleared == now.cleared_input_tokens > 20_000
    expected = before.usage.prompt_tokens - now.cleared_input_tokens
    assert first.rewritten == expected - now.usage.cache_read_input_tokens
    assert first.break_even_turn is not None and first.net_usd > 0
    assert all(b.break_even_turn is None for b in balances[1:])


def test_the_run_summary_helper_takes_turn_events() -> None:
    edit = AppliedEdit("clear_tool_uses_20250919", 8_000, 2)
    events = [
        TurnEvent(1, "tool_use", Usage(0, 10, 10_000, 0)),
        TurnEvent(2, "tool_use", Usage(0, 10, 2_000, 10_000)),
        TurnEvent(3, "tool_use", Usage(0, 10, 4_000, 1_000), (edit,)),
    ]
    balances = balances_for_run(events, Pricing.of("claude-sonnet-5"))
    assert balances is not None and [b.rewritten for b in balances] == [3_000]
    assert balances_for_run(events, Pricing.of("not-a-model")) is None


@pytest.mark.dates
def test_remedies_are_checked_by_replaying_the_whole_run(research: Transcript) -> None:
    profile = session_profile(research)
    recorded = recorded_run(research, profile)
    balances = ledger(research, profile, recorded)
    fixes = remedies(research, profile, profile, balances, base_cost=recorded.cost_usd)
    assert [f.clear_at_least for f in fixes] == sorted(f.clear_at_least for f in fixes)
    assert all(f.base_cost_usd == recorded.cost_usd for f in fixes)
    # The largest suggestion is above every clearing of the run: it is the run without clearing.
    largest = fixes[-1].clear_at_least
    assert largest > max(t.cleared_input_tokens for t in recorded.turns)
    off = dataclasses.replace(
        profile.context_editing,
        tool_uses=dataclasses.replace(profile.context_editing.tool_uses, enabled=False),
    )
    no_clearing = simulate(
        research,
        ReplaySettings.from_profile(dataclasses.replace(profile, context_editing=off)),
        profile,
    )
    assert fixes[-1].cost_usd == pytest.approx(no_clearing.cost_usd)


def test_the_run_summary_line_counts_edits_that_paid_off_and_those_that_did_not() -> None:
    from agentctl.render.sessions_view import ledger_line

    paid = edit_balances(_run(7), PRICE)
    lost = edit_balances(_run(3), PRICE)  # the clearing on the last turn never pays back
    assert paid[0].net_usd > 0 > lost[0].net_usd
    line = ledger_line([*paid, dataclasses.replace(lost[0], turn=9)], "sess-1")
    assert line.startswith("cache accounting per edit: 2 edit(s) (turns 3-9), 1 paid off (+$")
    assert f"1 did not (-${abs(lost[0].net_usd):.4f})\n" in line
    assert line.endswith("\n  the ledger: agentctl stats sess-1")
    assert ledger_line([], "s") == ""
    assert "n/a" in ledger_line(None, "s")
