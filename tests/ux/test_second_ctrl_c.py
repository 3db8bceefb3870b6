"""Ctrl-C pressed twice: the run still stops with its summary so far (exit 130)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_two_ctrl_c_keep_the_summary_so_far(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for i in range(30):
        (workspace / f"f{i:02}.txt").write_text(f"FINDING {i}: one\n" * 50)
    (tmp_path / "task.md").write_text("Collect every FINDING line.\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentctl", "run", "task.md", "--offline"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("turn 2 "):
            proc.send_signal(signal.SIGINT)
        if line.startswith("error (interrupted)"):
            proc.send_signal(signal.SIGINT)  # the second, while the run stops
            break
    seen.extend(proc.stderr)
    assert proc.wait(timeout=60) == 130, "".join(seen)
    text = "".join(seen)
    assert "summary  turns=" in text and "cost=$" in text, text
