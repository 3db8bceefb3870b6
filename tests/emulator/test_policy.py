"""The default policy end to end: real SDK, real memory directory, real workspace files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl.emulator.notes import keywords, notes_path
from agentctl.emulator.server import running

from .helpers import BETA, LIST_FILES, READ_FILE, make_client, run_session, tool_calls

# Real servers or whole recorded runs per test: many short tests add up to several
# seconds, so `make test-fast` leaves this module to `make test`.
pytestmark = pytest.mark.slow

TASK = "Summarise the project deadline and the budget owner."


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "a.txt").write_text("Intro line\nThe deadline is March 3.\nnoise\n" + "filler\n" * 50)
    (root / "docs" / "b.md").write_text("# Budget\nBudget owner: Dana\nTotal 40k\n")
    (root / "c.txt").write_text("\nnothing relevant here\nat all\n")
    (root / ".hidden").write_text("deadline secret")
    return root


def _final_text(responses: list[Any]) -> str:
    return str(responses[-1].content[-1].text)


def test_first_run_reads_every_file_and_notes_it(workspace: Path, tmp_path: Path) -> None:
    with running() as emu:
        responses = run_session(make_client(emu.base_url), TASK, workspace, tmp_path / "mem")
    assert tool_calls(responses) == [
        "memory:view",
        "list_files:.",
        "memory:create",
        "read_file:a.txt",
        "memory:str_replace",
        "read_file:c.txt",
        "memory:str_replace",
        "read_file:docs/b.md",
        "memory:str_replace",
        "memory:view",
    ]
    notes = (tmp_path / "mem" / "memories" / Path(notes_path(TASK)).name).read_text()
    assert "- a.txt: The deadline is March 3." in notes
    assert "- docs/b.md: # Budget | Budget owner: Dana" in notes
    assert "- c.txt: nothing relevant here" in notes
    answer = _final_text(responses)
    assert "The deadline is March 3." in answer and "Budget owner: Dana" in answer
    assert responses[-1].stop_reason == "end_turn"


def test_second_run_finds_its_notes_and_skips_done_work(workspace: Path, tmp_path: Path) -> None:
    with running() as emu:
        client = make_client(emu.base_url)
        run_session(client, TASK, workspace, tmp_path / "mem")
        (workspace / "d.txt").write_text("New deadline: April 1\n")
        again = run_session(client, TASK, workspace, tmp_path / "mem")
    assert tool_calls(again) == [
        "memory:view",
        "memory:view",
        "list_files:.",
        "read_file:d.txt",
        "memory:str_replace",
        "memory:view",
    ]
    answer = _final_text(again)
    assert "The deadline is March 3." in answer and "New deadline: April 1" in answer


def test_cleared_results_are_recovered_from_memory(workspace: Path, tmp_path: Path) -> None:
    edits = {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "tool_uses", "value": 2},
                "keep": {"type": "tool_uses", "value": 1},
                "exclude_tools": ["memory"],
            }
        ]
    }
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url),
            TASK,
            workspace,
            tmp_path / "mem",
            betas=[BETA],
            context_management=edits,
        )
        seen_by_model = emu.requests[-1].body  # what the client sent (full history)
    cleared = [r.context_management.applied_edits for r in responses if r.context_management]
    assert any(applied for applied in cleared)
    assert "The deadline is March 3." in _final_text(responses)
    assert "Budget owner: Dana" in _final_text(responses)
    assert len(seen_by_model["messages"]) == 2 * len(responses) - 1


def test_thinking_opens_every_turn(workspace: Path, tmp_path: Path) -> None:
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url),
            TASK,
            workspace,
            tmp_path / "mem",
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
    assert all(r.content[0].type == "thinking" for r in responses)
    assert all(r.content[0].signature for r in responses)


def test_same_inputs_same_replies(workspace: Path, tmp_path: Path) -> None:
    with running() as emu:
        client = make_client(emu.base_url)
        one = run_session(client, TASK, workspace, tmp_path / "m1")
        two = run_session(client, TASK, workspace, tmp_path / "m2")
    assert [[b.to_dict() for b in r.content] for r in one] == [
        [b.to_dict() for b in r.content] for r in two
    ]


def test_without_memory_answers_from_what_it_still_sees(workspace: Path, tmp_path: Path) -> None:
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url),
            TASK,
            workspace,
            tmp_path / "mem",
            tools=(LIST_FILES, READ_FILE),
        )
    assert tool_calls(responses) == [
        "list_files:.",
        "read_file:a.txt",
        "read_file:c.txt",
        "read_file:docs/b.md",
    ]
    assert "Budget owner: Dana" in _final_text(responses)


def test_no_tools_still_answers(tmp_path: Path) -> None:
    with running() as emu:
        responses = run_session(make_client(emu.base_url), TASK, tmp_path, tmp_path / "m", tools=())
    assert len(responses) == 1 and responses[0].stop_reason == "end_turn"
    assert "nothing to report" in _final_text(responses)


def test_keywords_and_notes_path_are_stable() -> None:
    assert keywords(TASK) == ["summarise", "project", "deadline", "budget", "owner"]
    assert notes_path(TASK) == notes_path(TASK + "  ")
    assert notes_path(TASK).startswith("/memories/summarise-project-deadline-")


@pytest.mark.parametrize("keep", [0, 1, 2])
@pytest.mark.parametrize("clear_inputs", [False, True])
@pytest.mark.parametrize("exclude_memory", [False, True])
def test_any_clearing_terminates_and_excluding_memory_keeps_every_fact(
    tmp_path: Path, keep: int, clear_inputs: bool, exclude_memory: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(6):
        (workspace / f"f{i}.txt").write_text(f"intro\nthe deadline of f{i} is {i}\n" + "pad\n" * 50)
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "tool_uses", "value": 1},
        "keep": {"type": "tool_uses", "value": keep},
        "clear_tool_inputs": clear_inputs,
    }
    if exclude_memory:
        edit["exclude_tools"] = ["memory"]
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url),
            "Report each deadline.",
            workspace,
            tmp_path / "mem",
            betas=[BETA],
            context_management={"edits": [edit]},
            max_turns=40,
        )
        assert emu.errors == []
    answer = _final_text(responses)
    facts = [f"the deadline of f{i} is {i}" in answer for i in range(6)]
    if keep >= 1:  # its notes keep every fact, even when clearing took the writes' inputs
        assert all(facts), answer
    else:  # it sees too little to make progress: it must still stop, honestly
        assert len(responses) <= 25


def test_a_long_file_is_read_in_chunks_and_each_chunk_noted(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lines = ["filler"] * 4500
    lines[10], lines[4400] = "deadline one: May", "deadline two: June"
    (workspace / "big.txt").write_text("\n".join(lines))
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url), "Find every deadline.", workspace, tmp_path / "mem"
        )
    reads = [
        b.input
        for r in responses
        for b in r.content
        if b.type == "tool_use" and b.name == "read_file"
    ]
    assert reads == [
        {"path": "big.txt"},
        {"path": "big.txt", "offset": 2001},
        {"path": "big.txt", "offset": 4001},
    ]
    answer = _final_text(responses)
    assert "- big.txt: deadline one: May" in answer
    assert "- big.txt (from line 2001): (nothing relevant)" in answer
    assert "- big.txt (from line 4001): deadline two: June" in answer


def test_long_notes_are_viewed_page_by_page(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(30):
        (workspace / f"f{i:02}.txt").write_text(f"the deadline of f{i} is day {i}\n")
    with running() as emu:
        client = make_client(emu.base_url)
        first = run_session(client, "Every deadline.", workspace, tmp_path / "m", view_limit=800)
        again = run_session(client, "Every deadline.", workspace, tmp_path / "m", view_limit=800)
    pages = [
        b.input.get("view_range")
        for r in first
        for b in r.content
        if b.type == "tool_use" and b.name == "memory" and b.input["command"] == "view"
    ]
    assert len(pages) > 2 and pages[-1] is not None  # the final view took more than a page
    for responses in (first, again):
        answer = _final_text(responses)
        assert all(f"the deadline of f{i} is day {i}" in answer for i in range(30))
    assert not any(call.startswith("read_file") for call in tool_calls(again))


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [("list_files", {"path": "."}), ("read_file", {"path": "a.txt"})],
)
def test_a_read_only_call_cut_by_a_kill_is_made_again(
    name: str, tool_input: dict[str, Any]
) -> None:
    """`--resume` answers a call that never ran with an error asking to call it again."""
    from agentctl.emulator.policy import DefaultPolicy

    interrupted = (
        "Error: the run was interrupted before this tool call finished; call it again if you "
        "still need its result"
    )
    tools = [{"type": "memory_20250818", "name": "memory"}, LIST_FILES, READ_FILE]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Report the findings."}]
    messages += [
        {
            "role": "assistant",
            "content": [_use("t1", "memory", {"command": "view", "path": "/memories"})],
        },
        {"role": "user", "content": [_result("t1", "Here're the files ...:\n4K\t/memories")]},
    ]
    if name == "read_file":
        messages += [
            {"role": "assistant", "content": [_use("t0", "list_files", {"path": "."})]},
            {"role": "user", "content": [_result("t0", "a.txt\t10\nb.txt\t10")]},
        ]
    messages += [
        {"role": "assistant", "content": [_use("t2", name, tool_input)]},
        {"role": "user", "content": [_result("t2", interrupted, is_error=True)]},
    ]
    request = {"model": "claude-sonnet-5", "max_tokens": 1024, "tools": tools, "messages": messages}
    reply = DefaultPolicy("[cleared]").reply(request)
    calls = [(b.name, b.input) for b in reply.blocks if hasattr(b, "input")]
    assert (name, tool_input) in calls


def _use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _result(tool_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error}


def test_a_large_workspace_is_sampled_within_the_default_turn_limit(tmp_path: Path) -> None:
    """More files than a 50-turn run can read: the task-named ones and shallow ones first."""
    from agentctl.emulator.policy import LARGE_WORKSPACE, READ_BUDGET

    workspace = tmp_path / "ws"
    (workspace / "deep" / "er").mkdir(parents=True)
    for i in range(LARGE_WORKSPACE):
        (workspace / "deep" / "er" / f"f{i:03}.txt").write_text(f"line of f{i}\n")
    (workspace / "deep" / "er" / "zz-deadline.txt").write_text("The deadline is May 4.\n")
    (workspace / "top.txt").write_text("a top-level file\n")
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url), TASK, workspace, tmp_path / "m", max_turns=50
        )
    assert responses[-1].stop_reason == "end_turn"
    reads = [c for c in tool_calls(responses) if c.startswith("read_file")]
    assert len(reads) == READ_BUDGET
    assert reads[:2] == ["read_file:deep/er/zz-deadline.txt", "read_file:top.txt"]
    answer = _final_text(responses)
    (notes,) = (tmp_path / "m").rglob("*.md")
    assert f"Sampled: {LARGE_WORKSPACE + 2} files listed" in notes.read_text()
    assert "The deadline is May 4." in answer and f"I read {READ_BUDGET} of its files" in answer


def test_a_file_quoting_the_notes_end_marker_is_noted(tmp_path: Path) -> None:
    from agentctl.emulator.notes import NOTES_END

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text(f"the deadline format ends with {NOTES_END}\n")
    (workspace / "b.txt").write_text("the budget owner is Dana\n")
    with running() as emu:
        responses = run_session(make_client(emu.base_url), TASK, workspace, tmp_path / "m")
    answer = _final_text(responses)
    assert "- b.txt: the budget owner is Dana" in answer
    (notes,) = (tmp_path / "m").rglob("*.md")
    assert notes.read_text().count(NOTES_END) == 1
