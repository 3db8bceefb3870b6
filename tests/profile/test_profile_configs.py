"""The shipped profiles in configs/: valid, warning-free, and related as their comments say."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentctl.agent.request import build_context_management
from agentctl.profile.loader import resolve_profile
from agentctl.profile.settings import Profile

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
NAMES = ["balanced", "aggressive", "no-editing", "api-defaults"]


def load(name: str) -> Profile:
    profile, warnings = resolve_profile(CONFIGS / f"{name}.toml")
    assert warnings == []
    return profile


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.dates
def test_config_loads_without_warnings(name: str) -> None:
    profile = load(name)
    assert profile.model == "claude-sonnet-5"
    assert profile.cache.enabled
    assert profile.source.endswith(f"{name}.toml")


@pytest.mark.dates
def test_balanced_sends_the_documented_edit() -> None:
    """Batched: the profile's edit until the first clearing (docs/context.md)."""
    editing = load("balanced").context_editing
    assert (editing.tool_uses.strategy, editing.tool_uses.low_water) == ("batched", 8000)
    assert build_context_management(editing) == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 20000},
                "keep": {"type": "tool_uses", "value": 4},
                "clear_at_least": {"type": "input_tokens", "value": 8000},
            },
            {
                "type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": 150_000},
                "pause_after_compaction": False,
            },
        ]
    }


@pytest.mark.dates
def test_the_built_in_default_clears_in_batches_with_the_measured_marks() -> None:
    """What a user gets without a profile: batched clearing (docs/bench.md measures it)."""
    tool_uses = Profile().context_editing.tool_uses
    assert tool_uses.strategy == "batched"
    assert (tool_uses.trigger, tool_uses.low_water, tool_uses.keep) == (20_000, 0, 4)
    assert tool_uses.clear_at_least == 8_000
    compaction = Profile().context_editing.compaction
    assert compaction.threshold and compaction.trigger == 150_000  # docs/context.md
    builtin, _ = resolve_profile(None)
    assert builtin.source == "<built-in>"
    assert builtin.context_editing == Profile().context_editing


@pytest.mark.dates
def test_api_defaults_sends_the_apis_own_defaults_unsteered() -> None:
    """The API documents trigger 100,000 input tokens and keep 3 as its defaults."""
    tool_uses = load("api-defaults").context_editing.tool_uses
    assert tool_uses.strategy == "server"
    assert build_context_management(load("api-defaults").context_editing) == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 100_000},
                "keep": {"type": "tool_uses", "value": 3},
            },
            {
                "type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": 150_000},
                "pause_after_compaction": False,
            },
        ]
    }
    # Everything else is the built-in profile's.
    built_in = dataclasses.replace(Profile(), source="")
    same = dataclasses.replace(
        load("api-defaults"), context_editing=built_in.context_editing, source=""
    )
    assert dataclasses.replace(same, memory=built_in.memory, tools=built_in.tools) == built_in


@pytest.mark.dates
def test_no_editing_is_balanced_with_editing_off() -> None:
    default, baseline = load("balanced"), load("no-editing")
    assert build_context_management(baseline.context_editing) is None
    tool_uses = dataclasses.replace(baseline.context_editing.tool_uses, enabled=True)
    compaction = dataclasses.replace(baseline.context_editing.compaction, enabled=True)
    flipped = dataclasses.replace(
        baseline,
        context_editing=dataclasses.replace(
            baseline.context_editing, tool_uses=tool_uses, compaction=compaction
        ),
        source=default.source,
    )
    assert flipped == default


@pytest.mark.dates
def test_aggressive_clears_every_turn_from_no_later_and_keeps_less() -> None:
    default, aggressive = (
        load("balanced").context_editing.tool_uses,
        load("aggressive").context_editing.tool_uses,
    )
    # Same high-water mark (20,000), but the server's per-turn clearing instead of batches.
    assert (aggressive.strategy, default.strategy) == ("server", "batched")
    assert aggressive.trigger <= default.trigger
    assert aggressive.keep < default.keep
    assert aggressive.clear_at_least < default.clear_at_least


@pytest.mark.dates
def test_left_out_paths_follow_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    profile = load("balanced")
    assert profile.memory.root == tmp_path / "memory"
    assert profile.tools.workspace_root == tmp_path
