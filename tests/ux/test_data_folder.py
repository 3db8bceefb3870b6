"""An AGENTCTL_HOME agentctl cannot write gives one line naming the folder, and exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app


def run_with_home(home: Path, tmp_path: Path) -> tuple[int, str]:
    task = tmp_path / "task.md"
    task.write_text("Say hello.\n")
    env = {"AGENTCTL_HOME": str(home)}
    result = CliRunner().invoke(app, ["run", str(task), "--offline", "--quiet"], env=env)
    return result.exit_code, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["under /proc", "a file", "below a file", "read-only"])
def test_unwritable_data_folder_is_one_line_exit_2(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    readonly = tmp_path / "ro"
    readonly.mkdir(mode=0o500)
    if kind == "read-only" and os.geteuid() == 0:
        pytest.skip("root writes to read-only folders")
    home = {
        "under /proc": Path("/proc/agentctl-home"),
        "a file": afile,
        "below a file": afile / "home",
        "read-only": readonly / "home",
    }[kind]
    code, stderr = run_with_home(home, tmp_path)
    assert code == 2
    assert stderr.startswith("agentctl: ") and len(stderr.splitlines()) == 1
    assert f"{home}/sessions" in stderr and "AGENTCTL_HOME" in stderr
    assert "Traceback" not in stderr
