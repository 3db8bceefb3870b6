"""MCP servers that try to exhaust agentctl (issue 20): endless tools/list pages end in a
clean one-line error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.tools.mcp_harness import invoke

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
