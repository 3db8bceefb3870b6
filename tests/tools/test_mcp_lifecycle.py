"""MCP servers' lifecycle end to end, with real processes: a server that cannot start, dies
mid-run or hangs; every way a run ends (Ctrl-C, SIGTERM, SIGKILL of agentctl, the end of its
parent) ends the server's whole process group; `--resume` starts the servers again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.home import sessions_dir
from agentctl.tools.mcp_process import reaper_works

from .mcp_harness import (
    invoke,
    process_gone,
    records,
    tool_results,
    wait_for,
    write_profile,
    write_task,
)


@pytest.mark.slow
def test_a_server_that_dies_mid_run_gives_an_error_result_with_its_stderr(tmp_path: Path) -> None:
    profile = write_profile(tmp_path)
    task = write_task(tmp_path, [("mcp__fx__die", {})], [("mcp__fx__add", {"a": 1, "b": 1})])
    result = invoke("run", str(task), "--offline", "--profile", str(profile), "--quiet")
    assert result.exit_code == 0, result.output
    died, after = tool_results(records())
    assert died["is_error"] and after["is_error"]
    assert died["content"].startswith("Error: MCP server 'fx' failed")
    assert died["content"].endswith("fixture: fatal: out of cheese")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("server", "said"),
    [
        ('env = { FAIL_AT_START = "1" }\n', "(stderr: fixture: cannot open the database)"),
        ('command = ["no-such-program-4f1c"]\n', "'no-such-program-4f1c'"),
    ],
)
def test_a_server_that_cannot_start_is_one_line_and_exit_2(
    tmp_path: Path, server: str, said: str
) -> None:
    profile = write_profile(tmp_path, server)
    if server.startswith("command"):  # replace the fixture's command
        text = profile.read_text().splitlines()
        profile.write_text("\n".join(t for t in text if not t.startswith('command = ["/')))
    task = write_task(tmp_path, [("mcp__fx__add", {"a": 1, "b": 1})])
    result = invoke("run", str(task), "--offline", "--profile", str(profile))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("agentctl: mcp.servers.fx: cannot start ")
    assert said in lines[0]
    assert not list(sessions_dir().glob("*.jsonl"))  # nothing was recorded


@pytest.mark.slow
def test_a_call_past_timeout_s_is_an_error_result_and_the_server_goes_on(tmp_path: Path) -> None:
    # Long enough that `add` answers in time on a loaded machine (it takes milliseconds).
    profile = write_profile(tmp_path, "timeout_s = 3\n")
    gate = str(tmp_path / "gate")
    task = write_task(
        tmp_path, [("mcp__fx__hang", {"gate": gate})], [("mcp__fx__add", {"a": 1, "b": 2})]
    )
    result = invoke("run", str(task), "--offline", "--profile", str(profile), "-q")
    assert result.exit_code == 0, result.output
    hung, added = tool_results(records())
    assert hung["is_error"] and "'fx'" in hung["content"] and "within 3 s" in hung["content"]
    assert (added["is_error"], added["content"]) == (False, "1 + 2 = 3")


@pytest.mark.slow
def test_resume_starts_the_servers_again(tmp_path: Path) -> None:
    profile = write_profile(tmp_path)
    turns = [[("mcp__fx__add", {"a": i, "b": 1})] for i in range(3)]
    task = write_task(tmp_path, *turns)
    first = invoke("run", str(task), "--offline", "--profile", str(profile), "--max-turns", "1")
    assert first.exit_code == 3, first.output
    resumed = invoke("run", "--resume", "last", "--offline", "-q", "--max-turns", "10")
    assert resumed.exit_code == 0, resumed.output
    contents = [r["content"] for r in tool_results(records())]
    assert contents == ["0 + 1 = 1", "1 + 1 = 2", "2 + 1 = 3"]


# The launcher (and /proc, which these tests read) are Linux's.
needs_reaper = pytest.mark.skipif(not reaper_works(), reason="the MCP launcher needs pidfd")


def running_in_session(session: int) -> list[int]:
    """The pids of `session` that still run (zombies run nothing: an init that never reaps
    them keeps them listed). The launcher's relay leads the server's session, so this is the
    relay, its keeper, the server and what the server started."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[3]) == session and fields[0] not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def agentctl_argv(task: Path, profile: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agentctl",
        "run",
        str(task),
        "--offline",
        "--profile",
        str(profile),
    ]


def hanging_run(folder: Path) -> tuple[list[str], Path, Path]:
    """(argv, pid file, gate) of a run whose one tool call hangs in a server that started a
    SIGTERM-proof child; the gate appears once the server is inside the call."""
    pid_file, gate = folder / "server.pid", folder / "gate"
    profile = write_profile(folder, f'env = {{ MCP_PID_FILE = "{pid_file}" }}\n')
    calls = [("mcp__fx__hang", {"gate": str(gate), "child": True})]
    task = write_task(folder, calls, [("mcp__fx__add", {"a": 1, "b": 1})])
    return agentctl_argv(task, profile), pid_file, gate


def server_session(pid_file: Path, gate: Path) -> int:
    """The server's session id, once it is inside the hanging call."""
    wait_for(gate.exists, timeout=120)  # a loaded machine takes tens of seconds to get here
    session = os.getsid(int(pid_file.read_text()))
    assert len(running_in_session(session)) == 4  # the relay, the keeper, the server, its child
    return session


@needs_reaper
@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "said"),
    [(signal.SIGINT, "stopped by Ctrl-C"), (signal.SIGTERM, "stopped by SIGTERM")],
)
def test_ctrl_c_or_sigterm_stops_the_run_and_ends_the_servers_group(
    tmp_path: Path, sig: signal.Signals, said: str
) -> None:
    argv, pid_file, gate = hanging_run(tmp_path)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session = server_session(pid_file, gate)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"(interrupted): {said}; continue with: agentctl run --resume " in err
    wait_for(lambda: not running_in_session(session), timeout=60)


@needs_reaper
@pytest.mark.slow
def test_sigkill_of_agentctl_ends_the_servers_group_and_resume_goes_on(tmp_path: Path) -> None:
    argv, pid_file, gate = hanging_run(tmp_path)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    session = server_session(pid_file, gate)
    proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    wait_for(lambda: not running_in_session(session), timeout=60)
    resumed = invoke("run", "--resume", "last", "--offline", "-q")
    assert resumed.exit_code == 0, resumed.output
    assert [r["content"] for r in tool_results(records())][-1] == "1 + 1 = 2"


# Starts agentctl (argv from the command line, output to files), writes its pid, waits.
PARENT = """
import subprocess, sys
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    child = subprocess.Popen(sys.argv[4:], stdout=out, stderr=err)
    open(sys.argv[3], "w").write(str(child.pid))
    child.wait()
"""


@needs_reaper
@pytest.mark.slow
def test_when_agentctls_parent_is_killed_the_run_stops_and_ends_the_servers_group(
    tmp_path: Path,
) -> None:
    argv, pid_file, gate = hanging_run(tmp_path)
    out, err, child = (tmp_path / name for name in ("out", "err", "agentctl.pid"))
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(out), str(err), str(child), *argv])
    session = server_session(pid_file, gate)
    agentctl = int(child.read_text())
    parent.kill()
    assert parent.wait(timeout=60) == -signal.SIGKILL
    wait_for(lambda: process_gone(agentctl), timeout=60)
    wait_for(lambda: not running_in_session(session), timeout=60)
    assert "(interrupted): stopped: the process that started agentctl ended; continue with:" in (
        err.read_text()
    )
    [error] = [
        r["event"] for r in records() if r["type"] == "event" and r["event"]["event"] == "error"
    ]
    assert error["kind"] == "interrupted"
    assert error["message"].startswith("stopped: the process that started agentctl ended")
