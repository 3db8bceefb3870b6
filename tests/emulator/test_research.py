"""The research policy when clearing took its notes writes' inputs: it goes on from the notes
it still sees and views them when it cannot tell (a request whose memory inputs are `{}`),
and end to end over HTTP, every fact reaches the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER as CLEARED
from agentctl.emulator import Reply, TextOut, ToolCall, load_corpus, running
from agentctl.emulator.notes import NOTES_END, notes_path
from agentctl.emulator.research import research_reply
from tests.runner.test_server_tools_run import PROFILE as RUN_PROFILE
from tests.runner.test_server_tools_run import TOPICS, SeenRequests, research_task

Json = dict[str, Any]
QUERIES = ("alpha figure", "beta figure", "gamma figure", "delta figure")
TASK = "Research these.\n" + "".join(f"search: {q}\n" for q in QUERIES)
NOTES = notes_path(TASK)


def note(query: str) -> str:
    return f"- [{query}] The {query} is {len(query)} units."


def cycle(i: int, query: str, *, cleared: bool) -> list[Json]:
    """One research response (search, fetch, the note) and its memory result; `cleared`: as
    clearing with clear_tool_inputs = true leaves it."""
    url = f"https://docs.example.com/{i}.md"
    write = {"command": "str_replace", "path": NOTES, "old_str": NOTES_END,
             "new_str": f"{note(query)}\n{NOTES_END}"}  # fmt: skip
    blocks = [
        {"type": "server_tool_use", "id": f"s{i}", "name": "web_search",
         "input": {} if cleared else {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": f"s{i}",
         "content": CLEARED if cleared else [{"type": "web_search_result", "url": url}]},
        {"type": "server_tool_use", "id": f"f{i}", "name": "web_fetch",
         "input": {} if cleared else {"url": url}},
        {"type": "web_fetch_tool_result", "tool_use_id": f"f{i}", "content": CLEARED},
        {"type": "tool_use", "id": f"w{i}", "name": "memory", "input": {} if cleared else write},
    ]  # fmt: skip
    edited = CLEARED if cleared else "The memory file has been edited."
    result = {"type": "tool_result", "tool_use_id": f"w{i}", "content": edited}
    return [{"role": "assistant", "content": blocks}, {"role": "user", "content": [result]}]


def view(i: int, shown: str | None, *, cleared: bool = False) -> list[Json]:
    """A notes view alone in its response; `shown`: its lines (None: the file is missing)."""
    data = {} if cleared else {"command": "view", "path": NOTES}
    use = {"type": "tool_use", "id": f"v{i}", "name": "memory", "input": data}
    result: Json = {"type": "tool_result", "tool_use_id": f"v{i}"}
    if shown is None:
        result.update(content=f"The path {NOTES} does not exist.", is_error=True)
    else:
        lines = shown.split("\n")
        numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
        result["content"] = f"Here's the content of {NOTES} with line numbers:\n{numbered}"
    if cleared:
        result["content"] = CLEARED
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def notes_of(*queries: str) -> str:
    return (
        "# Research notes for: Research these.\n\n## Searches\n"
        + "".join(f"{note(q)}\n" for q in queries)
        + NOTES_END
    )


def ask(*parts: list[Json]) -> Reply:
    messages = [{"role": "user", "content": TASK}, *(m for part in parts for m in part)]
    reply = research_reply({"messages": messages}, memory=True)
    assert reply is not None
    return reply


def call(reply: Reply) -> ToolCall:
    (block,) = reply.blocks
    assert isinstance(block, ToolCall)
    return block


def searched(query: str) -> ToolCall:
    return ToolCall("web_search", {"query": query})


VIEW = ToolCall("memory", {"command": "view", "path": NOTES})


def test_with_the_writes_inputs_cleared_it_goes_on_after_the_latest_note_it_sees() -> None:
    opening = view(0, None, cleared=True)
    done = [cycle(i, q, cleared=True) for i, q in enumerate(QUERIES[:2])]
    assert call(ask(opening, *done, cycle(2, QUERIES[2], cleared=False))) == searched(QUERIES[3])
    # The same conversation with every input kept goes the same way (nothing to recover).
    kept = [cycle(i, q, cleared=False) for i, q in enumerate(QUERIES[:3])]
    assert call(ask(view(0, None), *kept)) == searched(QUERIES[3])


def test_it_views_its_notes_when_no_note_is_left_to_see() -> None:
    done = [cycle(i, q, cleared=True) for i, q in enumerate(QUERIES[:2])]
    assert call(ask(view(0, None, cleared=True), *done)) == VIEW


def test_at_the_end_of_the_list_it_checks_its_notes_and_answers_from_the_view() -> None:
    done = [cycle(i, q, cleared=True) for i, q in enumerate(QUERIES[:3])]
    last = cycle(3, QUERIES[3], cleared=False)
    assert call(ask(view(0, None, cleared=True), *done, last)) == VIEW
    checked = view(9, notes_of(*QUERIES))
    (answer,) = ask(view(0, None, cleared=True), *done, cycle(3, QUERIES[3], cleared=True),
                    checked).blocks  # fmt: skip
    assert isinstance(answer, TextOut)
    assert all(note(q) in answer.text for q in QUERIES), answer.text


def test_a_query_the_check_finds_missing_is_done_then_the_notes_viewed_again() -> None:
    opening = view(0, None, cleared=True)
    done = [cycle(i, q, cleared=True) for i, q in enumerate(QUERIES) if i != 1]
    missing = notes_of(QUERIES[0], *QUERIES[2:])
    assert call(ask(opening, *done, view(9, missing))) == searched(QUERIES[1])
    # Its write is seen, the check is cleared: the queries after it are not redone.
    redone = cycle(1, QUERIES[1], cleared=False)
    assert call(ask(opening, *done, view(9, missing, cleared=True), redone)) == VIEW


# --- end to end: the CLI offline, the real SDK over HTTP -------------------------------------

# The research run of tests/runner (4 queries), with every tool input cleared at keep 1.
PROFILE = (
    RUN_PROFILE.split("[context_editing.tool_uses]")[0]
    + """\
[context_editing.tool_uses]
trigger = 1000
keep = 1
clear_at_least = 0
clear_tool_inputs = true
"""
)


@pytest.mark.slow
@pytest.mark.dates
def test_a_research_run_with_every_input_cleared_answers_with_every_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task, _ = research_task(tmp_path)
    (tmp_path / "p.toml").write_text(PROFILE)
    model = SeenRequests()
    with running(model=model, web=load_corpus(tmp_path / "web")) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        args = ["run", str(task), "--profile", "p.toml", "--json", "--max-turns", "30"]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    for topic in TOPICS:
        assert f"[{topic} figure] The {topic} figure is {len(topic)} units." in lines[-1]["text"]
    turns = [e for e in lines if e["event"] == "turn"]
    queries = [c["input"]["query"] for t in turns for c in t["server_tool_calls"]
               if c["name"] == "web_search"]  # fmt: skip
    assert queries == [f"{t} figure" for t in TOPICS]  # each once, in order
    memory = [
        c["input"]["command"] for t in turns for c in t["tool_calls"] if c["name"] == "memory"
    ]
    # The opening view, one note per query, and one view to check before answering.
    assert memory == ["view", "create", *["str_replace"] * (len(TOPICS) - 1), "view"]
    # The model was shown its notes writes with their inputs cleared.
    writes = [
        block
        for request in model.seen
        for message in request["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_use" and block.get("name") == "memory"
    ]
    assert {} in [block["input"] for block in writes]
