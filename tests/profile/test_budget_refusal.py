"""Budgets that cannot be kept are refused; max_turns = 0 is refused in the same words by
every way of setting it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.errors import ConfigError
from agentctl.profile.loader import resolve_profile

REMEDY = (
    "limits.max_usd: a budget of 2.0 USD cannot be kept: no price is known for 'claude-x-9' "
    '(add a [prices."claude-x-9"] table, pick a priced model, or set limits.max_usd = 0 for '
    "no budget)"
)
PRICES = (
    '[prices."claude-x-9"]\ninput = 1.0\noutput = 2.0\ncache_write_5m = 1.25\n'
    "cache_write_1h = 2.0\ncache_read = 0.1\n"
)


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.dates
def test_a_budget_for_an_unpriced_model_is_refused_naming_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('model = "claude-x-9"\n[limits]\nmax_usd = 2.0\n')
    with pytest.raises(ConfigError) as caught:
        resolve_profile(path)
    assert str(caught.value) == f"profile {path}: {REMEDY}"
    path.write_text('model = "claude-x-9"\n[limits]\nmax_usd = 2.0\n' + PRICES)
    assert resolve_profile(path)[0].limits.max_usd == 2.0  # priced: kept
    path.write_text('model = "claude-x-9"\n')
    assert resolve_profile(path)[0].limits.max_usd == 0  # no budget: only a warning


@pytest.mark.dates
def test_the_max_usd_flag_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    task = tmp_path / "t.md"
    task.write_text("Summarise.\n")
    args = ["run", str(task), "--offline", "--model", "claude-x-9", "--max-usd", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert (
        result.stderr.splitlines()[-1] == f"agentctl: profile <built-in>, --max-usd 2.0: {REMEDY}"
    )
    assert not (Path.cwd() / "memory").exists()  # refused before the run began


@pytest.mark.parametrize(
    ("args", "origin"),
    [
        (["--max-turns", "0"], "profile <built-in>, --max-turns 0"),
        (["--set", "max_turns=0"], "profile <built-in>, --set max_turns=0"),
    ],
)
def test_max_turns_zero_is_refused_in_the_same_words(
    tmp_path: Path, args: list[str], origin: str
) -> None:
    words = "max_turns: must be an integer >= 1, got 0"  # 0 is "no limit" only for limits.*
    (tmp_path / "t.md").write_text("Summarise.\n")
    result = CliRunner().invoke(app, ["run", "t.md", "--offline", *args])
    assert (result.exit_code, result.stderr) == (2, f"agentctl: {origin}: {words}\n")
    (tmp_path / "agentctl.toml").write_text("max_turns = 0\n")
    checked = CliRunner().invoke(app, ["profile", "check"])
    assert (checked.exit_code, checked.stderr) == (2, f"agentctl: profile agentctl.toml: {words}\n")


def test_run_help_names_the_defaults() -> None:
    text = " ".join(CliRunner().invoke(app, ["run", "--help"]).stdout.split())
    assert "Default: the profile's max_turns (built in: 50)" in text
    assert "Default: the profile's limits.max_usd (built in: 0, no budget)" in text


@pytest.mark.dates
def test_a_recorded_session_with_such_a_budget_is_still_read(tmp_path: Path) -> None:
    """Sessions recorded before the refusal keep loading (stats, simulate, sessions show)."""
    from agentctl.profile.loader import build_profile

    data = {"model": "claude-x-9", "limits": {"max_usd": 2.0}}
    profile, _ = build_profile(data, source="<session>", base_dir=tmp_path)
    assert profile.limits.max_usd == 2.0
    with pytest.raises(ConfigError, match="cannot be kept"):
        build_profile(data, source="<session>", base_dir=tmp_path, budget=True)
