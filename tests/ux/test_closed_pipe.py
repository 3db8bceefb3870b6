"""A reader that goes away (`agentctl run --json | head -2`) stops the run at once: exit 141."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.sessions.transcript import load_session

REPO = Path(__file__).resolve().parents[2]


def research_copy(tmp_path: Path) -> Path:
    target = tmp_path / "research"
    shutil.copytree(REPO / "examples" / "research", target, ignore=shutil.ignore_patterns("memory"))
    return target / "task.md"


@pytest.mark.slow
def test_head_closing_stdout_stops_the_run_and_records_an_interruption(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "agentctl", "run", str(research_copy(tmp_path)), "--offline"]
    # A one-page pipe holds a few turn lines, not the run's 23 (about 20 kB): however fast the
    # run is, it must block on the pipe, and so see it closed, before it can finish.
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(
        [*cmd, "--json"], stdout=write_fd, stderr=subprocess.PIPE, env=dict(os.environ)
    )
    os.close(write_fd)
    assert proc.stderr is not None
    with os.fdopen(read_fd, "rb") as reader:
        first_two = [reader.readline(), reader.readline()]
    # closed: what `head -2` does once it has its lines
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert b'"event": "turn"' in first_two[1]
    assert "Traceback" not in stderr and "stdout was closed" in stderr
    session = load_session("last")
    assert session.status == "interrupted"
    assert len(session.turns) < 23  # the whole run is 23 turns: it stopped early


@pytest.mark.slow
def test_piped_listing_into_a_closed_pipe_has_no_traceback(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    proc = subprocess.run(
        [sys.executable, "-m", "agentctl", "profile", "show"],
        stdout=write_fd,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        check=False,
    )
    os.close(write_fd)
    assert proc.returncode == 141
    # Only the built-in default's note on what batched requests send (before any output).
    assert all(line.startswith("note: ") for line in proc.stderr.decode().splitlines())
