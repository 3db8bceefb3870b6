"""`profile check` without a FILE checks the profile a run would use, as `profile show` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app


@pytest.mark.dates
def test_profile_check_looks_the_profile_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["profile", "check"]).stdout == "ok: <built-in> (0 warnings)\n"
    (tmp_path / "agentctl.toml").write_text("max_turns = 0\n")
    broken = CliRunner().invoke(app, ["profile", "check"])
    assert broken.exit_code == 2
    assert broken.stderr.startswith("agentctl: profile agentctl.toml")
