"""`memory init --template project-log`, and the example of two sessions continuing one project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from history_harness import M, contents
from typer.testing import CliRunner

from agentctl import run
from agentctl.cli.main import app
from agentctl.memory.blame import sessions
from agentctl.memory.store import MemoryStore
from agentctl.memory.templates import PROJECT_LOG, seed

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "project-log"


def test_init_seeds_the_three_files_and_refuses_to_overwrite(tmp_path: Path) -> None:
    root = str(tmp_path / "mem")
    done = CliRunner().invoke(app, ["memory", "init", "--template", "project-log", "--root", root])
    assert done.exit_code == 0
    assert contents(tmp_path / "mem") == {p: t.encode() for p, t in PROJECT_LOG.items()}
    again = CliRunner().invoke(app, ["memory", "init", "--root", root])
    assert (
        again.exit_code == 2 and "progress.md exists already; nothing was written" in again.stderr
    )
    bad = CliRunner().invoke(app, ["memory", "init", "--template", "nope", "--root", root])
    assert bad.exit_code == 2 and "no template 'nope'" in bad.stderr


@pytest.mark.slow
def test_two_sessions_continue_one_project_through_the_log(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "ex")
    root = tmp_path / "ex" / "memory"
    seed(MemoryStore(root, session="cli"), "project-log")
    first = run(tmp_path / "ex" / "task.md", offline=True)
    second = run(tmp_path / "ex" / "continue.md", offline=True)
    progress = (root / "progress.md").read_text()
    assert progress.index("- session 1:") < progress.index("- session 2:")
    assert "- [x] CSV exporter" in (root / "features.md").read_text()
    by_session = {s.session: s for s in sessions(MemoryStore(root).history())}
    assert set(by_session) == {"cli", first.session_id, second.session_id}
    assert f"{M}/progress.md" in by_session[second.session_id].paths
