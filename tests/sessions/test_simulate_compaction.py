"""simulate with compaction: a recorded compaction run replays exactly under its own settings,
a run without compaction counts the compactions a compaction profile would have made, and
settings without the strategy cannot replay a history that holds a compaction block."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.errors import ConfigError
from agentctl.home import sessions_dir
from agentctl.profile.settings import Compaction, ContextEditing
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import recorded_run, simulate
from agentctl.sessions.transcript import Transcript, load_session
from agentctl.sessions.tune import OFF, sweep
from tests.runner.compaction_workload import setup


@pytest.fixture(params=[True, False], ids=["paused", "unpaused"])
def compacted_run(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Transcript:
    monkeypatch.chdir(tmp_path)
    profile, task = setup(tmp_path, request.param)
    args = ["run", str(task), "--profile", str(profile), "--offline", "--json"]
    assert CliRunner().invoke(app, args).exit_code == 0
    (path,) = sessions_dir().glob("*.jsonl")
    return load_session(path.stem)


def compaction_settings(session: Transcript, on: bool) -> ReplaySettings:
    profile = session_profile(session)
    squeeze = Compaction(enabled=on, trigger=50_000 if on else 150_000)
    editing = dataclasses.replace(profile.context_editing, compaction=squeeze)
    return dataclasses.replace(ReplaySettings.from_profile(profile), editing=editing)


@pytest.mark.slow
def test_own_settings_replay_a_compaction_run_exactly(compacted_run: Transcript) -> None:
    profile = session_profile(compacted_run)
    sim = simulate(compacted_run, ReplaySettings.from_profile(profile), profile)
    rec = recorded_run(compacted_run, profile)
    assert [t.usage for t in sim.turns] == [t.usage for t in rec.turns]
    assert sim.usage.compactions == rec.usage.compactions == 1
    with pytest.raises(ConfigError, match="require a `compact_20260112` strategy"):
        simulate(compacted_run, compaction_settings(compacted_run, False), profile)


@pytest.mark.dates
def test_a_compaction_profile_counts_compactions_in_the_what_if(research: Transcript) -> None:
    profile = session_profile(research)
    base = ReplaySettings.from_profile(profile)
    plain = simulate(research, base, profile)
    settings = compaction_settings(research, True)
    off = dataclasses.replace(settings.editing.tool_uses, enabled=False)
    editing: ContextEditing = dataclasses.replace(settings.editing, tool_uses=off)
    sim = simulate(research, dataclasses.replace(settings, editing=editing), profile)
    assert plain.usage.compactions == 0
    assert sim.usage.compactions >= 1
    first = next(i for i, t in enumerate(sim.turns) if t.usage.compactions)
    # The compaction turn closed a prompt of at least the trigger; the next one is far smaller.
    assert plain.turns[first].usage.prompt_tokens >= 50_000
    assert sim.turns[first + 1].usage.prompt_tokens < plain.turns[first + 1].usage.prompt_tokens / 2


@pytest.mark.dates
def test_tune_keeps_the_profiles_compaction_and_reports_it(research: Transcript) -> None:
    profile = session_profile(research)
    squeeze = Compaction(enabled=True, trigger=50_000)
    editing = dataclasses.replace(profile.context_editing, compaction=squeeze)
    profile = dataclasses.replace(profile, context_editing=editing)
    results = sweep(research, profile, {"trigger": [OFF], "keep": [3]})
    assert len(results) >= 2
    for candidate in results:
        assert candidate.editing.compaction == squeeze
        data = candidate.to_json()
        assert data["compactions"] == candidate.simulation.usage.compactions >= 1
        assert data["settings"]["compaction_trigger"] == 50_000
