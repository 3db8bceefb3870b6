"""MCP servers end to end: a real stdio server (tests/tools/mcp_server.py, the `mcp` SDK's
MCPServer) driven by a scripted model through the emulator, over `agentctl run`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from import_probe import loaded_by_command
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records
from agentctl.tools.mcp_process import reaper_works

SERVER = Path(__file__).with_name("mcp_server.py")
KEY = "ANTHROPIC_API_KEY"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default memory root is ./memory


def write_profile(folder: Path, server: str = "", top: str = "", tools: str = "") -> Path:
    """A profile with the fixture server `fx`: extra keys of its table in `server`, of
    [tools] in `tools`, other tables in `top`."""
    command = json.dumps([sys.executable, str(SERVER)])
    path = folder / "agentctl.toml"
    path.write_text(
        f"{top}[tools]\nworkspace = false\n{tools}\n[mcp.servers.fx]\ncommand = {command}\n{server}"
    )
    return path


def write_task(folder: Path, *turns: list[tuple[str, dict[str, Any]]], front: str = "") -> Path:
    """A task whose scripted model makes the given tool calls, one list per turn."""
    script = []
    for calls in turns:
        script.append("[[turn]]")
        for name, tool_input in calls:
            script += [
                "[[turn.tool_use]]",
                f'name = "{name}"',
                f"input = {toml_inline(tool_input)}",
            ]
    (folder / "script.toml").write_text("\n".join(script) + "\n")
    head = f'+++\nemulator_script = "script.toml"\n{front}+++\n'
    task = folder / "task.md"
    task.write_text(head + "Use the fixture's tools.\n")
    return task


def toml_inline(data: dict[str, Any]) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in data.items()) + " }"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def records() -> list[dict[str, Any]]:
    files = sorted(sessions_dir().glob("*.jsonl"))
    assert len(files) == 1
    return read_records(files[0])


def tool_results(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript's tool_result records, in order."""
    return [rec for rec in recs if rec["type"] == "tool_result"]


@pytest.mark.slow
def test_a_scripted_run_calls_the_servers_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-passed-on")
    server = 'deny = ["hang"]\nenv = { GREETING = "hi" }\n'
    profile = write_profile(tmp_path, server, tools="max_result_chars = 40\n")
    calls = [("mcp__fx__add", {"a": 2, "b": 3}), ("mcp__fx__picture", {})]
    more = [("mcp__fx__fail", {}), ("mcp__fx__echo", {"text": "x" * 50})]
    env = [("mcp__fx__getenv", {"name": "GREETING"}), ("mcp__fx__getenv", {"name": KEY})]
    task = write_task(tmp_path, calls, more, env)
    result = invoke("run", str(task), "--offline", "--profile", str(profile), "--json")
    assert result.exit_code == 0, result.output
    results = tool_results(records())
    assert [r["content"] for r in results] == [
        "2 + 3 = 5",
        "a pixel\n[image image/png, 70 bytes]",
        "Error executing tool fail: the fixture failed on purpose",
        "x" * 40 + "\n[truncated: result cut at 40 of 50 characters]",
        "hi",
        "<unset>",  # the server's environment: the SDK's safe default plus `env`
    ]
    assert [r["is_error"] for r in results] == [False, False, True, False, False, False]
    turns = [e for e in map(json.loads, result.stdout.splitlines()) if e["event"] == "turn"]
    assert [c["name"] for c in turns[0]["tool_calls"]] == ["mcp__fx__add", "mcp__fx__picture"]
    assert [c["is_error"] for c in turns[1]["tool_calls"]] == [True, False]
    offered = [t["name"] for t in first_request(records())["tools"]]
    assert "mcp__fx__add" in offered and "mcp__fx__hang" not in offered  # deny


def first_request(recs: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = next(r for r in recs if r["type"] == "request")["request"]
    return body


@pytest.mark.slow
def test_exclude_tools_keeps_an_mcp_tools_results_from_clearing(tmp_path: Path) -> None:
    editing = '[context_editing.tool_uses]\ntrigger_kind = "tool_uses"\ntrigger = 2\nkeep = 1\n'
    turns = [[("mcp__fx__echo", {"text": f"result {i} " * 40})] for i in range(4)]
    cleared = {}
    for exclude in ("[]", '["mcp__fx__echo"]'):
        folder = tmp_path / f"run{len(cleared)}"
        folder.mkdir()
        top = editing + f"exclude_tools = {exclude}\n\n"
        profile = write_profile(folder, top=top)
        task = write_task(folder, *turns)
        result = invoke("run", str(task), "--offline", "--profile", str(profile), "--json")
        assert result.exit_code == 0, result.output
        events = [json.loads(line) for line in result.stdout.splitlines()]
        edits = [a for e in events if e["event"] == "turn" for a in e["applied_edits"]]
        cleared[exclude] = max((a["cleared_tool_uses"] for a in edits), default=0)
        for path in sessions_dir().glob("*.jsonl"):
            path.unlink()
    assert cleared["[]"] > 0
    assert cleared['["mcp__fx__echo"]'] == 0


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


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (a zombie counts as gone: it runs nothing)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return status.rsplit(")", 1)[1].split()[0] in ("Z", "X")


# The launcher (and /proc, which these tests read) are Linux's.
needs_reaper = pytest.mark.skipif(not reaper_works(), reason="the MCP launcher needs pidfd")


def running_in_session(session: int) -> list[int]:
    """The pids of `session` that still run (zombies run nothing: an init that never reaps
    them keeps them listed). The server leads its session, so this is the server, what it
    started and its watchdog."""
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
    """The server's session id (its pid), once it is inside the hanging call."""
    wait_for(gate.exists)
    session = int(pid_file.read_text())
    assert len(running_in_session(session)) == 3  # the server, its child, the watchdog
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


def test_task_front_matter_may_not_add_a_server(tmp_path: Path) -> None:
    front = '[mcp.servers.evil]\ncommand = ["sh", "-c", "echo pwned"]\n'
    task = write_task(tmp_path, [], front=front)
    result = invoke("run", str(task), "--offline")
    assert result.exit_code == 2, result.output
    assert "front matter: mcp.servers.evil.command: a task file may not add or change MCP" in (
        result.stderr
    )
    assert "--trust-task" in result.stderr


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('url = "ftp://x"', "mcp.servers.web.url: 'ftp://x' is not an http:// or https:// URL"),
        ('url = "http://x"\ncommand = ["x"]', "give either command (a stdio server) or url"),
        ('command = ["x"]\nheaders = { A = "b" }', "headers: only a url server takes HTTP"),
        ("timeout_s = 1", "mcp.servers.web.command: missing: the program to start"),
        ('command = ["x"]\ntimeout_s = 0', "mcp.servers.web.timeout_s: must be a number > 0"),
    ],
)
def test_a_server_table_that_cannot_work_is_a_config_error(
    tmp_path: Path, table: str, said: str
) -> None:
    path = tmp_path / "agentctl.toml"
    path.write_text(f"[mcp.servers.web]\n{table}\n")
    result = invoke("profile", "check", str(path))
    assert result.exit_code == 2, result.output
    assert said in result.stderr


@pytest.mark.slow
def test_mcp_list_shows_status_and_tools(tmp_path: Path) -> None:
    profile = write_profile(tmp_path, 'allow = ["add", "fail"]\n')
    result = invoke("mcp", "list", "--profile", str(profile))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "fx  ok, 2 tool(s)\n  mcp__fx__add\n  mcp__fx__fail\n"
        "  not offered (allow/deny): echo, getenv, header, picture, kinds, structured, die, hang\n"
    )
    broken = write_profile(tmp_path, 'env = { FAIL_AT_START = "1" }\n')
    result = invoke("mcp", "list", "--profile", str(broken), "--json")
    assert result.exit_code == 2
    [status] = json.loads(result.stdout)
    assert not status["ok"] and "cannot open the database" in status["error"]


@pytest.mark.slow
def test_a_run_without_servers_never_imports_mcp(tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    task.write_text("Say hello.\n")
    env = {**os.environ, "AGENTCTL_PROFILE": ""}
    argv = ["run", str(task), "--offline", "--quiet"]
    out, loaded = loaded_by_command(argv, ["mcp", "mcp_types"], env)
    assert "EXIT=None" in out or "EXIT=0" in out  # the run happened
    assert loaded == []


@pytest.mark.slow
def test_doctor_has_one_line_per_server(tmp_path: Path) -> None:
    command = json.dumps([sys.executable, str(SERVER)])
    profile = tmp_path / "agentctl.toml"
    profile.write_text(
        f'[mcp.servers.fx]\ncommand = {command}\nallow = ["add"]\n'
        f'[mcp.servers.broken]\ncommand = {command}\nenv = {{ FAIL_AT_START = "1" }}\n'
    )
    result = invoke("doctor", "--offline", "--json", "--profile", str(profile))
    assert result.exit_code == 1, result.output
    checks = {row["check"]: row for row in json.loads(result.stdout)}
    assert checks["mcp fx"] == {
        "check": "mcp fx",
        "value": "starts; 1 tool(s): mcp__fx__add",
        "ok": True,
    }
    assert checks["mcp broken"]["ok"] is False
    assert checks["mcp broken"]["value"] == (
        f"mcp.servers.broken: cannot start {sys.executable!r}: Connection closed"
        " (stderr: fixture: cannot open the database)"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv", [["profile", "show"], ["profile", "check"], ["memory", "view"], ["sessions", "list"]]
)
def test_commands_that_start_no_server_never_import_mcp(tmp_path: Path, argv: list[str]) -> None:
    """The profile (./agentctl.toml, found by the lookup) declares a server all the same."""
    write_profile(tmp_path)
    (tmp_path / "memory").mkdir()  # the profile's memory root, for `memory view`
    mods = ["mcp", "mcp_types", "agentctl.tools.mcp", "agentctl.tools.mcp_bridge"]
    out, loaded = loaded_by_command(argv, mods, {**os.environ, "AGENTCTL_PROFILE": ""})
    assert "EXIT=None" in out or "EXIT=0" in out, out
    assert loaded == []


@pytest.mark.slow
def test_the_example_runs_offline_as_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = tmp_path / "mcp"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "mcp", example)
    # `python` in the example's command: the interpreter agentctl runs in.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)
    profile = str(example / "agentctl.toml")
    result = invoke("run", str(example / "task.md"), "--offline", "--profile", profile, "-q")
    assert result.exit_code == 0, result.output
    assert [(r["name"], r["is_error"], r["content"]) for r in tool_results(records())] == [
        ("mcp__units__convert", False, "26.2 mi = 42.1648 km"),
        ("mcp__units__convert", False, "150 lb = 68.0389 kg"),
        (
            "mcp__units__convert",
            True,
            "Error executing tool convert: cannot convert mass to length",
        ),
        ("mcp__units__define", False, GLOSSARY_MILE),
    ]
    listed = invoke("mcp", "list", "--profile", profile)
    assert listed.stdout == "units  ok, 2 tool(s)\n  mcp__units__convert\n  mcp__units__define\n"


GLOSSARY_MILE = "A unit of length equal to 1,609.344 metres (the international mile)."


@pytest.mark.slow
def test_a_call_past_timeout_s_is_an_error_result_and_the_server_goes_on(tmp_path: Path) -> None:
    profile = write_profile(tmp_path, "timeout_s = 0.5\n")
    gate = str(tmp_path / "gate")
    task = write_task(
        tmp_path, [("mcp__fx__hang", {"gate": gate})], [("mcp__fx__add", {"a": 1, "b": 2})]
    )
    result = invoke("run", str(task), "--offline", "--profile", str(profile), "-q")
    assert result.exit_code == 0, result.output
    hung, added = tool_results(records())
    assert hung["is_error"] and "'fx'" in hung["content"] and "0.5" in hung["content"]
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.mark.slow
def test_a_streamable_http_server_gets_the_calls_and_the_headers(tmp_path: Path) -> None:
    port = free_port()
    http = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: accepts(port))
        url = f"http://127.0.0.1:{port}/mcp"
        profile = tmp_path / "agentctl.toml"
        profile.write_text(
            f'[mcp.servers.web]\nurl = "{url}"\nheaders = {{ X-Team = "blue" }}\n'
            'allow = ["add", "header"]\n'
        )
        calls = [("mcp__web__add", {"a": 4, "b": 5}), ("mcp__web__header", {"name": "x-team"})]
        task = write_task(tmp_path, calls)
        result = invoke("run", str(task), "--offline", "--profile", str(profile), "-q")
        assert result.exit_code == 0, result.output
    finally:
        http.terminate()
        http.wait(timeout=30)
    assert [r["content"] for r in tool_results(records())] == ["4 + 5 = 9", "blue"]


@pytest.mark.slow
def test_a_url_nobody_answers_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    profile = tmp_path / "agentctl.toml"
    profile.write_text(f'[mcp.servers.web]\nurl = "{url}"\n')
    task = write_task(tmp_path, [("mcp__web__add", {"a": 1, "b": 1})])
    result = invoke("run", str(task), "--offline", "--profile", str(profile))
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"agentctl: mcp.servers.web: cannot connect to {url}: ")


@pytest.mark.slow
def test_env_values_stay_out_of_the_transcript_and_resume_reads_them_again(
    tmp_path: Path,
) -> None:
    secret = "tok-8c1e5b7a9d"
    profile = write_profile(tmp_path, f'env = {{ TOKEN = "{secret}" }}\n')
    ask = [("mcp__fx__getenv", {"name": "TOKEN"})]
    task = write_task(tmp_path, ask, ask)
    first = invoke("run", str(task), "--offline", "--profile", str(profile), "--max-turns", "1")
    assert first.exit_code == 3, first.output
    header = next(r for r in records() if r["type"] == "session")
    assert secret not in json.dumps(header)
    assert header["profile"]["mcp"]["servers"]["fx"]["env"] == {"TOKEN": "[NOT RECORDED]"}
    text = profile.read_text()
    profile.write_text(text.replace("TOKEN", "OTHER"))
    refused = invoke("run", "--resume", "last", "--offline", "-q")
    assert refused.exit_code == 2
    assert "mcp.servers.fx.env.TOKEN: its value is not kept in the transcript" in refused.stderr
    profile.write_text(text)
    resumed = invoke("run", "--resume", "last", "--offline", "-q", "--max-turns", "10")
    assert resumed.exit_code == 0, resumed.output
    assert [r["content"] for r in tool_results(records())] == [secret, secret]


KINDS = (
    "[audio audio/wav, 16 bytes]\n"
    "[resource link file:///var/log/app.log (unknown type, 2048 bytes)]\n"
    "[resource memo://1 (text/plain, 5 characters)]\nhello\n"
    "[resource blob://2 (unknown type, 10 bytes)]"
)


@pytest.mark.slow
def test_other_content_is_summarised_capped_and_shown_in_the_table(tmp_path: Path) -> None:
    from rich.console import Console

    from agentctl import run
    from agentctl.render.table import turn_table

    profile = write_profile(tmp_path, tools="max_result_chars = 120\n")
    calls = [("mcp__fx__kinds", {}), ("mcp__fx__structured", {}), ("mcp__fx__fail", {})]
    result = run(write_task(tmp_path, calls), profile=profile, offline=True)
    kinds, structured, _ = tool_results(records())
    assert kinds["content"] == (
        KINDS[:120] + f"\n[truncated: result cut at 120 of {len(KINDS)} characters]"
    )
    assert structured["content"] == '{"rows": 2, "ok": true}'
    console = Console(width=160, record=True, color_system=None)
    console.print(turn_table(result.turns, width=160))
    first_turn = console.export_text().split("   2  end_turn")[0]  # its tools column wraps
    tools = " ".join(line.split("–")[-1].strip() for line in first_turn.splitlines()[3:])
    assert tools == "mcp__fx__kinds, mcp__fx__structured, mcp__fx__fail!"  # `!`: it failed


def test_the_docs_server_examples_are_valid_profiles(tmp_path: Path) -> None:
    from agentctl.profile.loader import resolve_profile

    docs = (Path(__file__).parents[2] / "docs" / "tools.md").read_text()
    blocks = [b.split("```")[0] for b in docs.split("```toml\n")[1:]]
    blocks = [b for b in blocks if "[mcp.servers." in b]
    servers = {}
    for i, block in enumerate(blocks):
        path = tmp_path / f"example{i}.toml"
        path.write_text(block)
        servers.update(resolve_profile(str(path))[0].mcp.servers)
    assert servers["units"].cwd == tmp_path / "tools"
    assert servers["units"].deny == ("define",)
    assert servers["search"].headers == {"Authorization": "Bearer ..."}
