"""Repeated or conflicting options are refused (exit 2, one line), not silently resolved."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "last", "--profile", "balanced", "--profile", "aggressive"],
         "agentctl: --profile given twice: give it once (see 'agentctl simulate --help')"),
        (["run", "t.md", "--max-turns", "3", "--max-turns=4"],
         "agentctl: --max-turns given twice: give it once (see 'agentctl run --help')"),
        (["sessions", "list", "-n", "1", "--count", "2"],
         "agentctl: -n/--count given twice: give it once (see 'agentctl sessions list --help')"),
        (["tune", "last", "--force"],
         "agentctl: --force overwrites the --write file: give --write FILE, or drop --force"),
        (["sessions", "show", "last", "--full"],
         "agentctl: --full is for --as-seen N (the prompt in full): add --as-seen N"),
    ],
)  # fmt: skip
def test_refused_before_anything_runs(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.stderr.splitlines()) == (2, [message])


@pytest.mark.dates
def test_repeatable_options_and_flags_stay_repeatable() -> None:
    sets = CliRunner().invoke(
        app, ["profile", "show", "--set", "max_turns=3", "--set", "max_turns=4", "--json"]
    )
    assert sets.exit_code == 0 and '"max_turns": 4' in sets.stdout
    assert CliRunner().invoke(app, ["sessions", "list", "--json", "--json"]).exit_code == 0
