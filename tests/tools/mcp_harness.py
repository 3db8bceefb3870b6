"""What the MCP tests share: a profile with the fixture server (mcp_server.py), a task whose
scripted model calls its tools, the CLI, the session's records, waiting on a condition."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records

SERVER = Path(__file__).with_name("mcp_server.py")


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
