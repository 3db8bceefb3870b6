"""An offline research run: web search and fetch from a `web/` folder, noted in memory,
cleared by context editing, shown in the table, the NDJSON events and the transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER as DEFAULT_PLACEHOLDER
from agentctl.emulator import DefaultPolicy, Reply, load_corpus, running
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records

PROFILE = """\
[memory]
root = "mem"
[tools]
workspace = false
[server_tools.web_search]
enabled = true
[server_tools.web_fetch]
enabled = true
[context_editing.tool_uses]
strategy = "server"
trigger_kind = "tool_uses"
trigger = 4
keep = 2
clear_at_least = 0
exclude_tools = ["memory"]
"""
TOPICS = ("caching", "clearing", "memory", "batching")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def research_task(tmp_path: Path) -> tuple[Path, Path]:
    for topic in TOPICS:
        page = tmp_path / "web" / "docs.example.com" / f"{topic}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# About {topic}\nThe {topic} figure is {len(topic)} units.\n" * 3)
    task = tmp_path / "task.md"
    task.write_text("Research these.\n" + "".join(f"search: {t} figure\n" for t in TOPICS))
    profile = tmp_path / "research.toml"
    profile.write_text(PROFILE)
    return task, profile


class SeenRequests:
    """The default policy, keeping every (edited) request it is shown."""

    def __init__(self) -> None:
        self.policy = DefaultPolicy(DEFAULT_PLACEHOLDER)
        self.seen: list[dict[str, Any]] = []

    def reply(self, request: dict[str, Any]) -> Reply:
        self.seen.append(request)
        return self.policy.reply(request)


@pytest.mark.dates
def test_offline_research_run_clears_server_results_and_reports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task, profile = research_task(tmp_path)
    model = SeenRequests()
    with running(model=model, web=load_corpus(tmp_path / "web")) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = CliRunner().invoke(app, ["run", str(task), "--profile", str(profile), "--json"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in lines if e["event"] == "turn"]
    searched = [c for t in turns for c in t["server_tool_calls"] if c["name"] == "web_search"]
    fetched = [c for t in turns for c in t["server_tool_calls"] if c["name"] == "web_fetch"]
    assert [c["input"]["query"] for c in searched] == [f"{t} figure" for t in TOPICS]
    assert [c["input"]["url"] for c in fetched] == [
        f"https://docs.example.com/{t}.md" for t in TOPICS
    ]
    assert not any(c["is_error"] for c in searched + fetched)
    totals = lines[-1]["totals"]
    assert totals["server_tool_use"] == {"web_search_requests": 4, "web_fetch_requests": 4}
    assert totals["cleared_tool_uses"] > 0
    assert "batching figure] The batching figure is 8 units." in lines[-1]["text"]
    # Over HTTP, the model was shown search and fetch results replaced by the placeholder.
    cleared = {
        block["type"]
        for request in model.seen
        for message in request["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("content") == DEFAULT_PLACEHOLDER
    }
    assert cleared == {"web_search_tool_result", "web_fetch_tool_result"}
    # The transcript keeps the blocks unchanged, and the turn events.
    (path,) = sessions_dir().glob("*.jsonl")
    records = read_records(path)
    kinds = {
        b["type"]
        for r in records
        if r["type"] == "message"
        for b in (r["message"]["content"] if isinstance(r["message"]["content"], list) else [])
    }
    assert {"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"} <= kinds
    recorded = [r["event"] for r in records if r["type"] == "event"]
    assert [e for e in recorded if e["event"] == "turn"] == turns


@pytest.mark.dates
def test_offline_flag_uses_the_web_folder_and_the_table_names_the_tools(tmp_path: Path) -> None:
    task, profile = research_task(tmp_path)
    result = CliRunner().invoke(app, ["run", str(task), "--profile", str(profile), "--offline"])
    assert result.exit_code == 0, result.stderr
    assert "[clearing figure] The clearing figure is 8 units." in result.stdout
    assert "web_search,web_fetch,memory:create" in result.stderr  # the first research turn
    assert "server_tools: web_search=4 (billed per search" in result.stderr


@pytest.mark.dates
def test_resume_keeps_the_server_blocks_and_the_web_folder(tmp_path: Path) -> None:
    task, profile = research_task(tmp_path)
    args = ["run", str(task), "--profile", str(profile), "--offline", "--max-turns", "3"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 3, first.stderr
    resume = ["run", "--resume", "last", "--json", "--max-turns", "20"]
    second = CliRunner().invoke(app, resume)
    assert second.exit_code == 0, second.output
    lines = [json.loads(line) for line in second.stdout.splitlines()]
    assert "[memory figure] The memory figure is 6 units." in lines[-1]["text"]
    calls = [c for e in lines if e["event"] == "turn" for c in e["server_tool_calls"]]
    # Turns 2-3 researched the first two queries; the resumed part does the other two.
    assert [c["input"].get("query") for c in calls if c["name"] == "web_search"] == [
        "memory figure",
        "batching figure",
    ]


@pytest.mark.dates
def test_without_memory_a_long_research_pauses_and_the_loop_resends(tmp_path: Path) -> None:
    task, profile = research_task(tmp_path)
    queries = [f"{t} figure" for t in TOPICS] + ["caching units", "memory units", "x units"]
    task.write_text("Research.\n" + "".join(f"search: {q}\n" for q in queries))
    args = ["run", str(task), "--profile", str(profile), "--offline", "--json"]
    result = CliRunner().invoke(app, [*args, "--set", "tools.memory=false"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in lines if e["event"] == "turn"]
    # 7 queries, each a search and a fetch: 14 continuations, so one pause after 10.
    assert [t["stop_reason"] for t in turns] == ["pause_turn", "end_turn"]
    names = [c["name"] for t in turns for c in t["server_tool_calls"]]
    assert names.count("web_search") == 7 and len(names) == 14
    assert "From the pages I read" in lines[-1]["text"]
