"""`run -` (and any run that creates its memory folder) says where memory is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app


@pytest.mark.slow
def test_stdin_task_says_where_memory_went(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "-", "--offline"], input="Say hi.\n")
    assert result.exit_code == 0, result.output
    assert f"agentctl: memory: {tmp_path / 'memory'} (a new folder)\n" in result.stderr
    again = CliRunner().invoke(app, ["run", "-", "--offline"], input="Say hi.\n")
    assert f"agentctl: memory: {tmp_path / 'memory'}\n" in again.stderr
    quiet = CliRunner().invoke(app, ["run", "-", "--offline", "--quiet"], input="Say hi.\n")
    assert "memory:" not in quiet.stderr
