"""MCP servers that try to exhaust agentctl (issue 20): endless tools/list pages end in a
clean one-line error; a flood on stderr keeps a bounded file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentctl.profile.settings import McpServer
from agentctl.tools.mcp_bridge import LoopThread, ServerConnection
from tests.tools.mcp_harness import invoke, wait_for

pytestmark = pytest.mark.slow  # each starts a server process

SERVER = Path(__file__).with_name("hostile_mcp.py")


def hostile_profile(folder: Path, env: dict[str, str]) -> Path:
    command = json.dumps([sys.executable, str(SERVER)])
    table = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
    path = folder / "agentctl.toml"
    path.write_text(f"[mcp.servers.bad]\ncommand = {command}\nenv = {{ {table} }}\n")
    return path


def test_endless_tools_list_pages_are_one_line(tmp_path: Path) -> None:
    """Before the fix agentctl followed `nextCursor` until the start timeout (30 s), its
    memory growing with every page (past 2 GB with large pages)."""
    profile = hostile_profile(tmp_path, {"HOSTILE": "pages"})
    result = invoke("mcp", "list", "--profile", str(profile), "--json")
    assert result.exit_code == 2, result.output
    [status] = json.loads(result.stdout)
    assert "more than 100 pages of tools/list" in status["error"]


def test_a_servers_stderr_file_is_kept_to_a_bounded_tail(tmp_path: Path) -> None:
    """Before the fix a server's stderr went to a temporary file with no limit (all of it
    kept for the 2 kB of tail ever shown); now the file is cut back to its tail as it grows."""
    done = tmp_path / "done"
    env = {"HOSTILE": "stderr", "HOSTILE_MB": "300", "HOSTILE_DONE": str(done)}
    server = McpServer(command=(sys.executable, str(SERVER)), env=env, cwd=tmp_path)
    loop = LoopThread()
    connection = ServerConnection("bad", server, loop)
    try:
        connection.start()
        wait_for(lambda: done.exists() and done.read_text() != "", 60)
        assert connection.stderr_tail(lines=1) == "last words"
    finally:
        connection.stop()
        loop.close()
    # 300 MB written: all of it kept before; 13-16 MB at the most since (the file is cut back
    # every few ms while it grows)
    assert int(done.read_text()) < 100_000_000
