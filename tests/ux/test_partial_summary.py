"""A run stopped by a limit (or Ctrl-C, the same path) prints the summary of what it did."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_limit_stop_prints_the_partial_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "a.txt").write_text("FINDING: one\n" * 50)
    (tmp_path / "task.md").write_text("Collect every FINDING line.\n")
    result = CliRunner().invoke(app, ["run", "task.md", "--offline", "--max-turns", "2"])
    assert result.exit_code == 3
    lines = result.stderr.splitlines()
    error = next(i for i, line in enumerate(lines) if line.startswith("error (limit)"))
    assert lines[error + 1] == "summary  turns=2 stop=limit"
    assert any(line.startswith("  cache_hit_ratio=") and "cost=$" in line for line in lines)
