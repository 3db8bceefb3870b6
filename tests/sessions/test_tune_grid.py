"""tune's default grid: triggers that do not grow with the session past the model's window,
marks below the recorded trigger, and a number of settings replayed bounded whatever the
session's length."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.profile.settings import CacheTtl, ClearToolUses, ContextEditing, Profile
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.report import tuning
from agentctl.sessions.simulate import _Notice, simulate
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import (
    DEFAULT_CLEAR_AT_LEAST,
    DEFAULT_KEEP,
    DEFAULT_LOW_WATER,
    DEFAULT_STRATEGY,
    DEFAULT_TTL,
    DESCENT_CLEAR_AT_LEAST,
    DESCENT_ROUNDS,
    Setting,
    neighbours,
    setting_key,
    trigger_marks,
)

WINDOW = 1_000_000


def test_a_long_session_past_the_window_gets_small_triggers_too() -> None:
    """1,000 turns of ~2.2k-token results peak at 2.37M unedited tokens (docs/bench.md)."""
    marks = trigger_marks(2_370_000, WINDOW, 20_000)
    assert marks == (5_000, 10_000, 20_000, 250_000, 500_000, 750_000)


@given(st.integers(1, 10_000_000), st.sampled_from([200_000, WINDOW]), st.integers(1, 400_000))
def test_the_triggers_stop_growing_at_the_window(peak: int, window: int, recorded: int) -> None:
    marks = trigger_marks(peak, window, recorded)
    assert marks == trigger_marks(min(peak, window), window, recorded)
    assert 1 <= len(marks) <= 6
    assert all(m >= 1_000 and m % 1_000 == 0 for m in marks)
    assert max(marks) <= max(round(0.75 * window, -3), round(recorded, -3), 1_000)


@given(st.integers(0, 10_000_000), st.integers(4_000, 400_000))
def test_the_grid_goes_below_the_recorded_trigger(peak: int, recorded: int) -> None:
    marks = trigger_marks(peak, WINDOW, recorded)
    assert round(recorded / 4, -3) in marks
    assert round(recorded / 2, -3) in marks
    assert min(marks) < recorded


def _round() -> int:
    """New settings one descent round can add: one key changed to each of its descent values
    (clear_tool_inputs: false and the tools whose inputs pile up); the base's own strategy
    and ttl are among their two values, so each adds one."""
    round_ = 6 + len(DEFAULT_KEEP) + len(DESCENT_CLEAR_AT_LEAST) + len(DEFAULT_LOW_WATER) + 2
    return round_ + len(DEFAULT_STRATEGY) - 1 + len(DEFAULT_TTL) - 1


def _bound() -> int:
    """The recorded settings, no clearing, the default grid (6 triggers), then at most
    DESCENT_ROUNDS rounds of `_round` new settings."""
    grid = 6 * len(DEFAULT_KEEP) * len(DEFAULT_CLEAR_AT_LEAST)
    return 2 + grid + DESCENT_ROUNDS * _round()


def test_the_bound_is_the_documented_one() -> None:
    assert _bound() == 154


@given(
    st.sampled_from([5_000, 12_345, 20_000]),
    st.integers(1, 9),
    st.sampled_from([0, 3_000, 8_000]),
    st.sampled_from(DEFAULT_STRATEGY),
    st.integers(0, 4_000),
    st.sampled_from(DEFAULT_TTL),
    st.sampled_from([False, True, ("read_file",), ("bash", "grep")]),
)
def test_a_descent_round_adds_at_most_the_bound(
    trigger: int,
    keep: int,
    least: int,
    strategy: str,
    low: int,
    ttl: CacheTtl,
    inputs: bool | tuple[str, ...],
) -> None:
    """Whatever the base (its values on the grid or not, its inputs any of the four kinds)."""
    tu = ClearToolUses(
        trigger=trigger, keep=keep, clear_at_least=least, clear_tool_inputs=inputs,
        strategy="batched" if strategy == "batched" else "server",
        low_water=low if strategy == "batched" else 0,
    )  # fmt: skip
    base = Setting(ContextEditing(tu), ttl)
    grid = {
        "trigger": (1_000, 5_000, 10_000, 20_000, 40_000, 60_000),
        "keep": DEFAULT_KEEP,
        "clear_at_least": DESCENT_CLEAR_AT_LEAST,
        "strategy": DEFAULT_STRATEGY,
        "low_water": DEFAULT_LOW_WATER,
        "ttl": DEFAULT_TTL,
        "clear_tool_inputs": ("false", "read_file+search_text"),
    }
    new = [s for s in neighbours(base, grid) if setting_key(s) != setting_key(base)]
    assert len(new) <= _round() == 23


@pytest.mark.dates
def test_the_default_sweep_replays_at_most_the_bound(research: Transcript) -> None:
    """The research run: recorded trigger 60,000, unedited peak ~136k (a 1M window)."""
    result = tuning(research, None)
    assert result.grid["trigger"] == (15_000, 30_000, 34_000, 60_000, 68_000, 102_000)
    assert 60 < len(result.ranked) <= _bound()
    assert result.winner.editing.tool_uses.trigger < 60_000  # below the recorded mark
    assert result.winner.cost <= result.recorded.cost


def _with(profile: Profile, trigger: int, notice: bool) -> Profile:
    editing = profile.context_editing
    editing = dataclasses.replace(
        editing,
        tool_uses=dataclasses.replace(editing.tool_uses, trigger=trigger),
        checkpoint=dataclasses.replace(editing.checkpoint, enabled=notice),
    )
    return dataclasses.replace(profile, context_editing=editing)


def _decided(session: Transcript, profile: Profile) -> _Notice:
    settings = ReplaySettings.from_profile(profile)
    notice = _Notice.of(session, settings, profile, 1.0)
    replayed = simulate(session, settings, profile).turns
    for turn, sim in zip(session.turns, replayed, strict=True):
        notice.decide(turn, sim)
    return notice


@pytest.mark.dates
def test_the_replay_sends_the_save_before_clear_notice_where_a_run_would(
    research: Transcript,
) -> None:
    """The research run was recorded with the notice off: replayed with it on, the notice goes
    with the tool results before the prompt nears the trigger, earlier under a lower trigger
    (a run sends it so; the move of a recorded notice is checked against live runs in
    tests/bench/test_token_economy.py)."""
    profile = session_profile(research)
    off = _decided(research, _with(profile, 60_000, notice=False))
    assert off.recorded == -1 and off.patches == {}
    at = {}
    for trigger in (60_000, 15_000):
        on = _decided(research, _with(profile, trigger, notice=True))
        ((index, message),) = on.patches.items()
        assert message["content"][-1] == on.block and message["role"] == "user"
        at[trigger] = index
    assert at[15_000] < at[60_000]
    plain = simulate(research, ReplaySettings.from_profile(profile), profile)
    noted = _with(profile, 60_000, notice=True)
    told = simulate(research, ReplaySettings.from_profile(noted), noted)
    assert told.usage.prompt_tokens > plain.usage.prompt_tokens
