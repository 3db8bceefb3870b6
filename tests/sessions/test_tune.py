"""tune: grid syntax, the sweep never loses to the recorded settings, Pareto front, --write."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.errors import ConfigError, UsageError
from agentctl.profile.loader import build_profile
from agentctl.profile.settings import ClearToolUses, ContextEditing
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.report import tuning
from agentctl.sessions.transcript import Transcript, read_transcript
from agentctl.sessions.tune import (
    OFF,
    candidates,
    pareto_front,
    parse_grid,
    settings_label,
    write_profile,
)


def test_grid_syntax() -> None:
    grid = parse_grid(
        "trigger=20000, 40k ,off; keep=2,4;clear_at_least=0,1.5k; thinking_keep=1,all"
    )
    assert grid == {
        "trigger": (20_000, 40_000, "off"),
        "keep": (2, 4),
        "clear_at_least": (0, 1_500),
        "thinking_keep": (1, "all"),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("speed", "expected KEY=V1,V2 or KEY"),
        ("speed=1", "expected KEY=V1,V2 or KEY"),
        ("strategy=fast", "strategy: 'fast': expected server or batched"),
        ("ttl=2h", "ttl: '2h': expected 5m or 1h"),
        ("low_water=100%", r"low_water: 100% is out of range \(0-99%\)"),
        ("low_water=half", "low_water: 'half' is not a whole number"),
        ("keep=two", "keep: 'two' is not a whole number"),
        ("keep=0", "keep: 0 is out of range"),
        ("keep=", "keep: no values given"),
    ],
)
def test_bad_grids_name_the_key(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_grid(text)


@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=5))
def test_any_list_of_triggers_parses_back(values: list[int]) -> None:
    assert parse_grid("trigger=" + ",".join(map(str, values)))["trigger"] == tuple(values)


def test_candidates_start_with_the_recorded_settings_and_no_clearing() -> None:
    recorded = ContextEditing(ClearToolUses(strategy="server", trigger=100_000, keep=3))
    found = candidates(recorded, {"trigger": (1000, 2000), "keep": (recorded.tool_uses.keep,)})
    assert found[0].editing == recorded and found[0].ttl == "5m"
    assert not found[1].editing.tool_uses.enabled
    assert [settings_label(c) for c in found[2:]] == [
        "trigger=1000 keep=3 clear_at_least=8000",
        "trigger=2000 keep=3 clear_at_least=8000",
    ]


@pytest.mark.dates
def test_tune_sweeps_batched_settings_with_the_low_water_mark_in_proportion(
    batched: Transcript,
) -> None:
    """Recorded: trigger 60k (the task's front matter), low_water 8k (balanced.toml)."""
    result = tuning(batched, "trigger=15000,45000;keep=4")
    labels = [settings_label(c.editing) for c in result.ranked]
    assert "trigger=15000 keep=4 clear_at_least=10000 low_water=2000" in labels
    assert "trigger=45000 keep=4 clear_at_least=10000 low_water=6000" in labels
    assert all(c.editing.tool_uses.strategy == "batched" for c in result.ranked)
    assert result.winner.cost <= result.recorded.cost


@pytest.mark.dates
def test_tune_never_picks_settings_dearer_than_the_recorded_ones(research: Transcript) -> None:
    result = tuning(research, "trigger=20000,40000;keep=1,4;clear_at_least=0,10000")
    assert len(result.ranked) == 10  # 8 grid points + recorded + no clearing
    assert result.winner.cost <= result.recorded.cost
    assert result.winner.cost < result.recorded.cost  # this run clears too often
    assert result.recorded.simulation.cost_usd == pytest.approx(
        research.result["totals"]["cost_usd"] if research.result else 0, abs=1e-6
    )


@pytest.mark.dates
def test_a_grid_point_equal_to_the_recorded_settings_is_replayed_once(research: Transcript) -> None:
    result = tuning(research, "trigger=60000;keep=4;clear_at_least=10000")
    assert [c.recorded for c in result.ranked].count(True) == 1
    assert len(result.ranked) == 2  # recorded + no clearing
    assert result.winner.cost == min(c.cost for c in result.ranked)


@pytest.mark.dates
def test_the_pareto_front_has_no_dominated_point(research: Transcript) -> None:
    result = tuning(research, "trigger=10000,30000,60000;keep=1,3,6")
    front = pareto_front(result.ranked)
    assert front[0] is result.winner
    for a in front:
        for b in result.ranked:
            cheaper = b.cost <= a.cost and b.simulation.peak_prompt <= a.simulation.peak_prompt
            assert not (
                cheaper and (b.cost, b.simulation.peak_prompt) != (a.cost, a.simulation.peak_prompt)
            )


@pytest.mark.slow
def test_thinking_keep_is_swept_when_thinking_was_on(thinking: Transcript) -> None:
    result = tuning(thinking, None)
    assert "thinking_keep" in result.grid
    keeps = {c.editing.thinking.keep for c in result.ranked}
    assert {1, 2, "all"} <= keeps
    assert result.winner.cost <= result.recorded.cost


@pytest.mark.dates
def test_write_saves_a_full_profile_that_loads_back(research: Transcript, tmp_path: Path) -> None:
    result = tuning(research, "trigger=20000;keep=1,2")
    target = tmp_path / "tuned.toml"
    write_profile(target, session_profile(research), result.winner.editing, force=False)
    data = tomllib.loads(target.read_text())
    profile, _ = build_profile(data, source=str(target), base_dir=tmp_path)
    assert profile.context_editing == result.winner.editing
    assert profile.model == research.model
    with pytest.raises(UsageError, match="already exists"):
        write_profile(target, session_profile(research), result.winner.editing, force=False)
    write_profile(target, session_profile(research), ContextEditing(), force=True)
    again, _ = build_profile(tomllib.loads(target.read_text()), source="x", base_dir=tmp_path)
    assert again.context_editing == ContextEditing()


@pytest.mark.dates
def test_thinking_keep_turns_clear_thinking_on_when_thinking_was_on(resumed: Transcript) -> None:
    """The resumed run had thinking off: a thinking_keep grid cannot be replayed on it."""
    with pytest.raises(ConfigError, match="requires `thinking`"):
        tuning(resumed, "thinking_keep=1")


def test_the_grid_in_the_docs_parses() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sessions.md").read_text()
    example = re.search(r'`--grid "([^"]+)"`', docs)
    assert example is not None
    assert set(parse_grid(example.group(1))) == {
        "trigger",
        "keep",
        "clear_at_least",
        "thinking_keep",
    }


@pytest.mark.slow
@pytest.mark.dates
def test_thinking_keep_is_swept_even_if_clear_thinking_was_off(
    thinking: Transcript, transcripts: dict[str, Path]
) -> None:
    path = transcripts["thinking"]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["profile"]["context_editing"]["thinking"]["enabled"] = False
    edited = path.with_name("thinking-off.jsonl")
    edited.write_text("".join(json.dumps(r) + "\n" for r in records))
    session = read_transcript(edited)
    result = tuning(session, None)
    assert result.grid["thinking_keep"] == (1, 2, "all")
    assert not result.recorded.editing.thinking.enabled
    swept = {c.editing.thinking.keep for c in result.ranked if c.editing.thinking.enabled}
    assert swept == {1, 2, "all"}
    assert result.winner.cost <= result.recorded.cost


@pytest.mark.dates
def test_write_saves_paths_relative_to_the_written_file(
    research: Transcript, tmp_path: Path
) -> None:
    recorded = session_profile(research)
    target = tmp_path / "profiles" / "tuned.toml"
    target.parent.mkdir()
    write_profile(target, recorded, ContextEditing(), force=False)
    data = tomllib.loads(target.read_text())
    assert not Path(data["memory"]["root"]).is_absolute()
    assert not Path(data["tools"]["workspace_root"]).is_absolute()
    # Loaded back from where it was written, the paths are the recorded run's folders.
    profile, _ = build_profile(data, source=str(target), base_dir=target.parent)
    assert profile.memory.root.resolve() == Path(recorded.memory.root).resolve()
    assert profile.tools.workspace_root.resolve() == Path(recorded.tools.workspace_root).resolve()


def test_every_grid_point_keeps_the_recorded_server_model() -> None:
    recorded = ContextEditing(server_model="edited,placeholder=[x]")
    points = candidates(recorded, {"trigger": (1000, OFF), "keep": (2,), "thinking_keep": (1,)})
    assert len(points) > 2
    assert {p.editing.server_model for p in points} == {"edited,placeholder=[x]"}


def test_the_sweep_freezes_between_candidates_and_thaws_after() -> None:
    """`_frozen`: inside, what is alive is out of the cycle collector's reach; after, it is
    back; a process that froze objects of its own keeps them frozen, and we leave it alone."""
    import gc

    from agentctl.sessions.tune import _frozen

    assert gc.get_freeze_count() == 0
    with _frozen() as freeze:
        assert gc.get_freeze_count() > 0
        held = [[n] for n in range(50)]  # lists: objects the collector tracks
        before = gc.get_freeze_count()
        freeze()
        assert gc.get_freeze_count() >= before + len(held)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        with _frozen() as freeze:
            freeze()
            assert gc.get_freeze_count() == mine
        assert gc.get_freeze_count() == mine
    finally:
        gc.unfreeze()


@pytest.mark.dates
def test_a_sweep_leaves_nothing_frozen(research: Transcript) -> None:
    import gc

    result = tuning(research, "trigger=20000,40000;keep=1,4")
    assert len(result.ranked) == 6
    assert gc.get_freeze_count() == 0
