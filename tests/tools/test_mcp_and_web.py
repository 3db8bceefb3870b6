"""One offline run with both kinds of tools the model does not get from agentctl itself: a
real MCP server's tools (stdio, the fixture server) and a web search the emulator answers.
Their results are cleared under the profile's editing, and the table, the NDJSON events and
the transcript show them (issue 14's "done when")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.emulator import (
    Reply,
    Script,
    ScriptedModel,
    ScriptTurn,
    ToolCall,
    load_corpus,
    running,
)
from tests.tools.mcp_harness import SERVER, records

PROFILE = f"""\
[tools]
memory = false
workspace = false
[server_tools.web_search]
enabled = true
[mcp.servers.fx]
command = {json.dumps([sys.executable, str(SERVER)])}
[context_editing.tool_uses]
strategy = "server"
trigger_kind = "tool_uses"
trigger = 3
keep = 1
clear_at_least = 0
"""
SCRIPT = Script(
    (
        ScriptTurn(text="Adding.", tool_calls=(ToolCall("mcp__fx__add", {"a": 2, "b": 3}),)),
        ScriptTurn(tool_calls=(ToolCall("web_search", {"query": "caching figure"}),)),
        ScriptTurn(tool_calls=(ToolCall("mcp__fx__echo", {"text": "x" * 400}),)),
        ScriptTurn(tool_calls=(ToolCall("web_search", {"query": "clearing figure"}),)),
        ScriptTurn(tool_calls=(ToolCall("mcp__fx__add", {"a": 4, "b": 5}),)),
    ),
    final_text="Both kinds of tools answered.",
)


class Seen:
    """The scripted model, keeping every (edited) request the emulator shows it."""

    def __init__(self) -> None:
        self.model = ScriptedModel(SCRIPT)
        self.requests: list[dict[str, Any]] = []

    def reply(self, request: dict[str, Any]) -> Reply:
        self.requests.append(request)
        return self.model.reply(request)


@pytest.mark.slow
def test_mcp_tools_and_web_search_are_cleared_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for topic in ("caching", "clearing"):
        page = tmp_path / "web" / "docs.example.com" / f"{topic}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# About {topic}\nThe {topic} figure is {len(topic)} units.\n" * 20)
    profile = tmp_path / "agentctl.toml"
    profile.write_text(PROFILE)
    task = tmp_path / "task.md"
    task.write_text("Add, search, echo, search, add.\n")
    seen = Seen()
    with running(model=seen, web=load_corpus(tmp_path / "web")) as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        args = ["run", str(task), "--profile", str(profile), "--json"]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in events if e["event"] == "turn"]
    # NDJSON: the MCP calls as tool calls, the searches as server tool calls.
    mcp_calls = [c["name"] for t in turns for c in t["tool_calls"]]
    searches = [c["input"]["query"] for t in turns for c in t["server_tool_calls"]]
    assert mcp_calls == ["mcp__fx__add", "mcp__fx__echo", "mcp__fx__add"]
    assert searches == ["caching figure", "clearing figure"]
    totals = events[-1]["totals"]
    assert totals["server_tool_use"]["web_search_requests"] == 2
    # the two one-number `add` results are under the small-result line: never cleared, not
    # counted (docs/context.md, "Server rules"); the echo and both searches are
    assert totals["cleared_tool_uses"] >= 2
    assert events[-1]["text"] == "Both kinds of tools answered."
    # Over HTTP the model was shown both kinds of result replaced by the placeholder.
    cleared = {
        block["type"]
        for request in seen.requests
        for message in request["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("content") == DEFAULT_CLEARED_RESULT_PLACEHOLDER
    }
    assert cleared == {"tool_result", "web_search_tool_result"}
    # The transcript keeps what was sent whole: the MCP results and the search blocks.
    recs = records()
    results = [r for r in recs if r["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["mcp__fx__add", "mcp__fx__echo", "mcp__fx__add"]
    kinds = {
        b["type"]
        for r in recs
        if r["type"] == "message"
        for b in (r["message"]["content"] if isinstance(r["message"]["content"], list) else [])
    }
    assert {"server_tool_use", "web_search_tool_result"} <= kinds


@pytest.mark.slow
def test_the_table_names_both_kinds_of_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "agentctl.toml"
    profile.write_text(PROFILE)
    task = tmp_path / "task.md"
    task.write_text("Add, search, echo, search, add.\n")
    with running(model=ScriptedModel(SCRIPT)) as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = CliRunner().invoke(app, ["run", str(task), "--profile", str(profile)])
    assert result.exit_code == 0, result.stderr
    assert "mcp__fx__add" in result.stderr and "web_search" in result.stderr
    assert "server_tools: web_search=2" in result.stderr
