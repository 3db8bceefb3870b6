"""MCP servers end to end: a real stdio server (tests/tools/mcp_server.py, the `mcp` SDK's
MCPServer) driven by a scripted model through the emulator, over `agentctl run`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from import_probe import loaded_by_command

from agentctl.home import sessions_dir

from .mcp_harness import (
    SERVER,
    invoke,
    records,
    tool_results,
    wait_for,
    write_profile,
    write_task,
)

KEY = "ANTHROPIC_API_KEY"


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
    editing = (
        '[context_editing.tool_uses]\nstrategy = "server"\ntrigger_kind = "tool_uses"\n'
        "trigger = 2\nkeep = 1\nclear_at_least = 0\n"
    )
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
        "fx  ok, 2 tool(s)\n  mcp__fx__add   Add two integers.\n  mcp__fx__fail  Always fails.\n"
        "  not offered (allow/deny): echo, getenv, header, picture, media, kinds, structured,"
        " task_render, grow, steps, client, die, hang\n"
    )
    # --set on top of the file, as `run` takes it: here the interpreter that starts the server.
    good = profile.read_text()
    right = json.loads(good.split("command = ")[1].splitlines()[0])
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(good.replace(json.dumps(sys.executable), json.dumps(str(tmp_path / "no"))))
    assert invoke("mcp", "list", "--profile", str(wrong)).exit_code == 2
    command = f"mcp.servers.fx.command={json.dumps(right)}"
    fixed = invoke("mcp", "list", "--profile", str(wrong), "--set", command)
    assert fixed.exit_code == 0, fixed.output
    assert fixed.stdout.startswith("fx  ok, 2 tool(s)\n")
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
    assert listed.stdout == (
        "units  ok, 2 tool(s)\n"
        "  mcp__units__convert  Convert a value between units of the same dimension"
        " (m, km, mi, ft, kg, lb).\n"
        "  mcp__units__define   Look a unit up in a small glossary.\n"
    )


GLOSSARY_MILE = "A unit of length equal to 1,609.344 metres (the international mile)."


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
    "[audio audio/wav, 16 bytes: not sent, the API takes no audio]\n"
    '[resource link file:///var/log/app.log "log": the app\'s log (unknown type, 2048 bytes)]\n'
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


@pytest.mark.dates
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
