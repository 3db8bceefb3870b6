"""The loop logic with a scripted in-process client: stop reasons, tools, limits, totals."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentctl.agent.loop import LoopSetup, run_loop
from agentctl.errors import ApiError, LimitError
from agentctl.profile.settings import ClearToolUses, ContextEditing, LimitSettings, Profile
from agentctl.tools.memory import MemoryTool
from agentctl.tools.registry import ToolBox
from agentctl.tools.workspace import WorkspaceTools
from agentctl.types import ProgressEvent, ResultEvent, StartEvent, TurnEvent, Usage

from .scripted import FakeMemory, ScriptedClient, reply, text, tool_use

TASK = [{"role": "user", "content": "do it"}]


def setup_for(
    client: ScriptedClient,
    profile: Profile | None = None,
    memory: FakeMemory | None = None,
    workspace: Path | None = None,
) -> LoopSetup:
    tools: list[Any] = [MemoryTool(memory or FakeMemory())]
    if workspace is not None:
        tools += WorkspaceTools(workspace, 10_000).tools()
    return LoopSetup(
        profile=profile or Profile(),
        client=client,
        tools=ToolBox(tools, max_result_chars=10_000),
        session="s1",
        cost=lambda u: u.output_tokens / 1000,
    )


def run_all(setup: LoopSetup) -> list[Any]:
    return list(run_loop(setup, TASK))


def test_tool_round_then_answer(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    memory = FakeMemory()
    client = ScriptedClient(
        reply(
            text("looking"),
            tool_use("read_file", {"path": "f.txt"}, "t1"),
            tool_use("memory", {"command": "create", "path": "/memories/x.md"}, "t2"),
            stop="tool_use",
        ),
        reply(text("the answer")),
    )
    events = run_all(setup_for(client, memory=memory, workspace=tmp_path))
    assert isinstance(events[0], StartEvent)
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert [t.stop_reason for t in turns] == ["tool_use", "end_turn"]
    assert [(c.name, c.is_error) for c in turns[0].tool_calls] == [
        ("read_file", False),
        ("memory", False),
    ]
    assert [(m.command, m.path, m.ok) for m in turns[0].memory_ops] == [
        ("create", "/memories/x.md", True)
    ]
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.text == "the answer" and result.turns == 2
    # The second request carries the whole history: task, assistant turn, tool results in order.
    second = client.requests[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    results = second[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
    assert results[0]["content"] == "     1\thello"
    assert memory.commands == [{"command": "create", "path": "/memories/x.md"}]


def test_tool_failures_and_unknown_tools_go_back_as_is_error() -> None:
    client = ScriptedClient(
        reply(
            tool_use("memory", {"command": "view", "path": "/memories/none"}, "a"),
            tool_use("bash", {"cmd": "rm -rf /"}, "b"),
            stop="tool_use",
        ),
        reply(text("ok")),
    )
    events = run_all(setup_for(client, memory=FakeMemory(fail=("view",))))
    results = client.requests[1]["messages"][2]["content"]
    assert [r.get("is_error") for r in results] == [True, True]
    assert "does not exist" in results[0]["content"]
    assert "unknown tool 'bash'" in results[1]["content"]
    turn = next(e for e in events if isinstance(e, TurnEvent))
    assert [m.ok for m in turn.memory_ops] == [False]


def test_pause_turn_resends_the_assistant_message_unchanged() -> None:
    client = ScriptedClient(reply(text("part one"), stop="pause_turn"), reply(text("done")))
    events = run_all(setup_for(client))
    assert isinstance(events[-1], ResultEvent) and events[-1].turns == 2
    resent = client.requests[1]["messages"]
    assert resent[-1]["role"] == "assistant" and resent[-1]["content"][0]["text"] == "part one"


@pytest.mark.parametrize("stop", ["end_turn", "stop_sequence", "refusal"])
def test_final_stop_reasons_end_the_run(stop: str) -> None:
    events = run_all(setup_for(ScriptedClient(reply(text("bye"), stop=stop))))
    assert isinstance(events[-1], ResultEvent) and events[-1].stop_reason == stop


def test_max_tokens_mid_tool_call_is_a_limit_after_the_turn_event() -> None:
    client = ScriptedClient(reply(tool_use("memory", {"command": "cr"}), stop="max_tokens"))
    seen: list[Any] = []
    with pytest.raises(LimitError, match="max_tokens=8192 in the middle of a tool call"):
        for event in run_loop(setup_for(client), TASK):
            seen.append(event)
    assert isinstance(seen[-1], TurnEvent) and seen[-1].stop_reason == "max_tokens"
    assert seen[-1].tool_calls == ()  # a cut tool call is never executed


def test_context_window_exceeded_and_unknown_stops() -> None:
    client = ScriptedClient(reply(stop="model_context_window_exceeded"))
    with pytest.raises(LimitError, match="context window"):
        run_all(setup_for(client))
    with pytest.raises(ApiError, match="unexpected stop_reason 'weird'"):
        run_all(setup_for(ScriptedClient(reply(stop="weird"))))


def looping_client(n: int, usage: Usage | None = None) -> ScriptedClient:
    calls = [
        reply(
            tool_use("memory", {"command": "view", "path": "/memories"}),
            stop="tool_use",
            usage=usage,
        )
        for _ in range(n)
    ]
    return ScriptedClient(*calls)


def test_max_turns_stops_with_a_limit_error() -> None:
    profile = dataclasses.replace(Profile(), max_turns=3)
    client = looping_client(5)
    with pytest.raises(LimitError, match="max_turns=3"):
        run_all(setup_for(client, profile))
    assert len(client.requests) == 3


def test_input_token_budget() -> None:
    profile = dataclasses.replace(Profile(), limits=LimitSettings(max_input_tokens=250))
    client = looping_client(5, Usage(input_tokens=50, cache_read_input_tokens=50))
    with pytest.raises(LimitError, match=r"limits\.max_input_tokens=250"):
        run_all(setup_for(client, profile))
    assert len(client.requests) == 3  # 100, 200, 300 >= 250


def test_cost_budget() -> None:
    profile = dataclasses.replace(Profile(), limits=LimitSettings(max_usd=0.025))
    client = looping_client(5, Usage(input_tokens=1, output_tokens=10))  # $0.01 per turn here
    with pytest.raises(LimitError, match=r"limits\.max_usd=0\.025"):
        run_all(setup_for(client, profile))
    assert len(client.requests) == 3


def test_applied_edits_pass_through_unchanged_and_sum_in_totals() -> None:
    thinking = {
        "type": "clear_thinking_20251015",
        "cleared_thinking_turns": 2,
        "cleared_input_tokens": 44,
    }
    tools = {
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": 8,
        "cleared_input_tokens": 50_000,
    }
    client = ScriptedClient(
        reply(
            tool_use("memory", {"command": "view", "path": "/memories"}),
            stop="tool_use",
            edits=(thinking, tools),
        ),
        reply(text("done"), edits=(tools,)),
    )
    events = run_all(setup_for(client))
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert turns[0].to_json()["applied_edits"] == [thinking, tools]
    totals = events[-1].totals
    assert (
        totals.cleared_input_tokens,
        totals.cleared_tool_uses,
        totals.cleared_thinking_turns,
    ) == (100_044, 16, 2)
    assert totals.usage.output_tokens == 20


def test_trigger_distance_counts_the_prompt_before_editing() -> None:
    """The server strategy: the server compares the unedited prompt with the trigger."""
    edit = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 7}
    server = ClearToolUses(strategy="server", trigger=100_000, keep=3, clear_at_least=0)
    profile = dataclasses.replace(Profile(), context_editing=ContextEditing(tool_uses=server))
    events = run_all(setup_for(ScriptedClient(reply(text("x"), edits=(edit,))), profile))
    turn = next(e for e in events if isinstance(e, TurnEvent))
    assert turn.trigger_distance == 100 + 7 - 100_000


def test_progress_and_trigger_distance() -> None:
    usage = Usage(input_tokens=10, cache_creation_input_tokens=20, cache_read_input_tokens=70)
    events = run_all(setup_for(ScriptedClient(reply(text("x"), usage=usage))))
    assert any(isinstance(e, ProgressEvent) for e in events)
    turn = next(e for e in events if isinstance(e, TurnEvent))
    # The built-in default clears in batches: the distance to the high-water mark, 20,000.
    assert turn.trigger_distance == 100 - 20_000
    assert turn.request_id == "req_end_turn"


def test_requests_resend_the_full_history_unedited() -> None:
    client = looping_client(2)
    client.responses.append(reply(text("done")))
    run_all(setup_for(client))
    sizes = [len(r["messages"]) for r in client.requests]
    assert sizes == [1, 3, 5]
    later, earlier = client.requests[2]["messages"][:3], client.requests[1]["messages"]
    assert strip_markers(later) == strip_markers(earlier)
    first = client.requests[2]["messages"][1]["content"][0]
    assert first["type"] == "tool_use" and "cache_control" not in first


def strip_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_markers(v) for v in value]
    return value
