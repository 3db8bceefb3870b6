"""The launcher (agentctl/tools/mcp_reaper.py) ends what an MCP server started even when it
left the server's process group: a double-forked, setsid() daemon that ignores SIGTERM is gone
after the run, whether the run ends normally or agentctl is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.tools.mcp_process import reaper_works

from .mcp_harness import invoke, process_gone, records, tool_results, wait_for, write_task
from .test_mcp_lifecycle import agentctl_argv

SERVER = Path(__file__).with_name("daemon_mcp.py")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not reaper_works(), reason="the MCP launcher needs pidfd (Linux)"),
]


def daemon_profile(folder: Path) -> Path:
    path = folder / "agentctl.toml"
    command = json.dumps([sys.executable, str(SERVER)])
    path.write_text(f"[tools]\nworkspace = false\n\n[mcp.servers.d]\ncommand = {command}\n")
    return path


@pytest.fixture
def daemon_pid(tmp_path: Path) -> Iterator[Path]:
    """The file the daemon writes its pid to; a daemon still running at the end is killed, so
    that a failing test leaves nothing behind."""
    pid_file = tmp_path / "daemon.pid"
    yield pid_file
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError):
            fd = os.pidfd_open(int(pid_file.read_text()))
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            os.close(fd)


def test_a_setsid_daemon_of_a_server_ends_when_the_run_ends(
    tmp_path: Path, daemon_pid: Path
) -> None:
    task = write_task(tmp_path, [("mcp__d__daemon", {"pid_file": str(daemon_pid)})])
    result = invoke("run", str(task), "--offline", "--profile", str(daemon_profile(tmp_path)))
    assert result.exit_code == 0, result.output
    assert [r["content"] for r in tool_results(records())] == ["started"]
    pid = int(daemon_pid.read_text())  # it wrote it after its setsid()
    wait_for(lambda: process_gone(pid), timeout=60)


def test_a_setsid_daemon_of_a_server_ends_when_agentctl_is_killed(
    tmp_path: Path, daemon_pid: Path
) -> None:
    gate = tmp_path / "gate"
    started = [("mcp__d__daemon", {"pid_file": str(daemon_pid)})]
    task = write_task(tmp_path, started, [("mcp__d__hang", {"gate": str(gate)})])
    profile = daemon_profile(tmp_path)
    argv = agentctl_argv(task, profile)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(gate.exists, timeout=60)
        pid = int(daemon_pid.read_text())
        assert not process_gone(pid)
    finally:
        proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    wait_for(lambda: process_gone(pid), timeout=60)
