"""tune searches strategy, low_water, keep and the cache TTL: grid keys, the descent after the
default grid, and --write with every searched setting."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.profile.loader import build_profile
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.report import tuning
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import Setting, candidates, parse_grid, replay, setting_key

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.dates
def test_strategy_low_water_and_ttl_are_grid_keys(research: Transcript) -> None:
    grid = "trigger=20000;keep=4;clear_at_least=8000;strategy=batched;low_water=0,40%;ttl=5m,1h"
    result = tuning(research, grid)
    labels = {c.label() for c in result.ranked}
    assert "trigger=20000 keep=4 clear_at_least=8000 low_water=8000 ttl=1h" in labels
    assert "trigger=20000 keep=4 clear_at_least=8000 low_water=0" in labels
    one_hour = [c for c in result.ranked if c.setting.ttl == "1h"]
    assert one_hour and all(c.to_json()["settings"]["ttl"] == "1h" for c in one_hour)
    assert {c.editing.tool_uses.strategy for c in result.ranked if c.editing.tool_uses.enabled} == {
        "server",
        "batched",
    }  # the recorded (server) settings are always in


@pytest.mark.dates
def test_a_key_alone_takes_its_default_values(research: Transcript) -> None:
    assert parse_grid("strategy;ttl=1h") == {"strategy": (), "ttl": ("1h",)}
    result = tuning(research, "strategy;trigger=20000;keep=4")
    assert result.grid["strategy"] == ("server", "batched")


def test_a_point_that_is_no_valid_profile_is_left_out() -> None:
    from agentctl.profile.settings import ClearToolUses, ContextEditing

    recorded = ContextEditing(ClearToolUses(strategy="server", trigger_kind="tool_uses", trigger=5))
    points = candidates(recorded, {"strategy": ("batched", "server"), "low_water": (0, 100)})
    # batched needs a token trigger; a server strategy takes no low-water mark
    assert all(p.editing.tool_uses.strategy == "server" for p in points)
    assert all(p.editing.tool_uses.low_water == 0 for p in points)


@pytest.mark.slow
def test_the_default_search_finds_what_the_shipped_batched_profile_does(
    research: Transcript,
) -> None:
    """The Quickstart run: its own best setting was outside tune's search (batched clearing)."""
    profile = session_profile(research)
    balanced, _ = build_profile(
        tomllib.loads((REPO / "configs" / "balanced.toml").read_text()),
        source="balanced.toml",
        base_dir=REPO / "configs",
    )
    shipped = Setting(balanced.context_editing, balanced.cache.ttl)
    (reference,) = replay(research, profile, [shipped])
    result = tuning(research, None)
    assert result.winner.cost <= reference.cost < result.recorded.cost
    assert result.winner.editing.tool_uses.strategy == "batched"
    keys = [setting_key(c.setting) for c in result.ranked]
    assert len(keys) == len(set(keys))  # each setting replayed once
    assert {"strategy", "low_water", "ttl"} <= set(json.loads(json.dumps(result.to_json()))
                                                     ["winner"]["settings"])  # fmt: skip


@pytest.mark.dates
def test_write_saves_the_strategy_low_water_and_ttl(research: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "tuned.toml"
    grid = "trigger=20000;keep=1;clear_at_least=20000;strategy=batched;low_water=40%;ttl=1h"
    result = CliRunner().invoke(app, ["tune", research.id, "--grid", grid, "--write", str(target)])
    assert result.exit_code == 0, result.stderr
    data = tomllib.loads(target.read_text())
    winner = tuning(research, grid).winner
    assert data["cache"]["ttl"] == winner.setting.ttl
    written = data["context_editing"]["tool_uses"]
    assert (written["strategy"], written["low_water"]) == (
        winner.editing.tool_uses.strategy, winner.editing.tool_uses.low_water)  # fmt: skip
    profile, _ = build_profile(data, source=str(target), base_dir=tmp_path)
    assert Setting(profile.context_editing, profile.cache.ttl) == winner.setting
