"""On-demand compaction from the loop (scripted client): when a compaction request goes out
(a RunControl call or an on-demand trigger, never with a tool_use unanswered or a paused turn),
what it carries and leaves out, what the requests after it send, and the profile's rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentctl.agent.loop import LoopSetup, RunControl, run_loop
from agentctl.agent.request import (
    BETA_COMPACT_ON_DEMAND,
    build_compaction_request,
    build_request,
    is_summary,
    read_from,
    without_reply_fields,
)
from agentctl.errors import ConfigError, UsageError
from agentctl.profile.rules import check_profile
from agentctl.profile.settings import Compaction, ContextEditing, Profile
from agentctl.runner import load_profile
from agentctl.tools.memory import MemoryTool
from agentctl.tools.registry import ToolBox
from agentctl.types import Event, ResultEvent, TurnEvent, Usage

from .scripted import FakeMemory, ScriptedClient, reply, text, tool_use

Message = dict[str, Any]
TASK: list[Message] = [{"role": "user", "content": "do it"}]
SIGNED = {"type": "compaction", "content": "<summary>so far</summary>", "signature": "sig-1"}
VIEW = {"command": "view", "path": "/memories"}


def summary_reply(block: dict[str, Any] = SIGNED) -> Any:
    usage = Usage(input_tokens=900, output_tokens=40, compactions=1)
    return reply(block, stop="compaction", usage=usage)


def a_tool_turn(tool_id: str = "t1", prompt: int = 100) -> Any:
    return reply(tool_use("memory", VIEW, tool_id), stop="tool_use", usage=Usage(prompt, 10))


def on_demand(trigger: int = 150_000, instructions: str = "") -> Profile:
    squeeze = Compaction(enabled=True, mode="on-demand", trigger=trigger, instructions=instructions)
    return Profile(context_editing=ContextEditing(compaction=squeeze))


# The built-in default compacts in mode "threshold", which a compaction call cannot meet.
NO_THRESHOLD = Profile(context_editing=ContextEditing(compaction=Compaction(enabled=False)))


def setup_for(
    client: ScriptedClient, profile: Profile | None = None, control: RunControl | None = None
) -> LoopSetup:
    return LoopSetup(
        profile=profile or NO_THRESHOLD,
        client=client,
        tools=ToolBox([MemoryTool(FakeMemory())], max_result_chars=10_000),
        session="s1",
        control=control or RunControl(),
    )


def run_all(setup: LoopSetup, ask_after: int | None = None, **ask: Any) -> list[Event]:
    """Every event; the control asks for a compaction on TurnEvent number `ask_after`."""
    events: list[Event] = []
    for event in run_loop(setup, TASK):
        events.append(event)
        if isinstance(event, TurnEvent) and event.turn == ask_after:
            setup.control.compact_before_next_turn(**ask)
    return events


def turns(events: list[Event]) -> list[TurnEvent]:
    return [e for e in events if isinstance(e, TurnEvent)]


def test_a_compaction_asked_for_between_turns_is_the_next_request() -> None:
    client = ScriptedClient(a_tool_turn(), summary_reply(), "the answer")
    events = run_all(setup_for(client), ask_after=1)
    assert [t.stop_reason for t in turns(events)] == ["tool_use", "compaction", "end_turn"]
    assert [t.usage.compactions for t in turns(events)] == [0, 1, 0]
    result = events[-1]
    assert isinstance(result, ResultEvent) and result.text == "the answer"
    assert result.totals.usage.compactions == 1 and result.turns == 3
    first, asking, after = client.requests
    # The compaction request: the whole conversation, the config, its beta, no edits.
    assert asking["compaction"] == {"type": "summarize"}
    assert BETA_COMPACT_ON_DEMAND in asking["betas"]
    assert "context_management" not in asking and "context_management" in first
    assert [m["role"] for m in asking["messages"]] == ["user", "assistant", "user"]
    assert asking["messages"][2]["content"][0]["type"] == "tool_result"
    assert asking["tools"] == first["tools"] and asking["model"] == first["model"]
    # The request after it sends the conversation from the signed block on, edits again.
    assert after["messages"] == [
        {"role": "assistant", "content": [{**SIGNED, "cache_control": after_marker(after)}]}
    ]
    assert "compaction" not in after and "context_management" in after
    assert BETA_COMPACT_ON_DEMAND in after["betas"]
    assert BETA_COMPACT_ON_DEMAND not in first["betas"]


def after_marker(request: dict[str, Any]) -> Any:
    return request["messages"][-1]["content"][-1]["cache_control"]


def test_the_instructions_go_with_the_request_and_replace_the_profiles() -> None:
    client = ScriptedClient(a_tool_turn(), summary_reply(), "done")
    run_all(setup_for(client), ask_after=1, instructions="Keep every file name.")
    assert client.requests[1]["compaction"] == {
        "type": "summarize",
        "instructions": "Keep every file name.",
    }
    client = ScriptedClient(a_tool_turn(), summary_reply(), "done")
    run_all(setup_for(client, on_demand(instructions="Be brief.")), ask_after=1)
    assert client.requests[1]["compaction"]["instructions"] == "Be brief."
    client = ScriptedClient(a_tool_turn(), summary_reply(), "done")
    run_all(setup_for(client, on_demand(instructions="Be brief.")), ask_after=1, instructions="X")
    assert client.requests[1]["compaction"]["instructions"] == "X"


def test_a_paused_turn_is_resumed_before_the_compaction() -> None:
    client = ScriptedClient(
        reply(text("searching"), stop="pause_turn"),
        a_tool_turn(),
        summary_reply(),
        "done",
    )
    events = run_all(setup_for(client), ask_after=1)
    assert [t.stop_reason for t in turns(events)] == [
        "pause_turn",
        "tool_use",
        "compaction",
        "end_turn",
    ]
    resumed, asking = client.requests[1], client.requests[2]
    assert "compaction" not in resumed and resumed["messages"][-1]["role"] == "assistant"
    assert "compaction" in asking and asking["messages"][-1]["role"] == "user"


def test_asked_for_on_the_last_turn_nothing_is_sent() -> None:
    control = RunControl()
    client = ScriptedClient("done")
    events = run_all(setup_for(client, control=control), ask_after=1)
    assert len(client.requests) == 1 and isinstance(events[-1], ResultEvent)
    assert not control.compaction_pending


def test_asked_for_before_the_run_the_first_request_compacts() -> None:
    control = RunControl()
    control.compact_before_next_turn()
    client = ScriptedClient(summary_reply(), "done")
    run_all(setup_for(client, control=control))
    assert client.requests[0]["compaction"] == {"type": "summarize"}
    assert client.requests[1]["messages"][0]["content"][0]["signature"] == "sig-1"


def test_an_on_demand_profile_compacts_once_a_prompt_reached_its_trigger() -> None:
    client = ScriptedClient(
        a_tool_turn("t1", prompt=999),
        a_tool_turn("t2", prompt=1000),  # reaches 1,000: the next request compacts
        summary_reply(),
        a_tool_turn("t3", prompt=400),
        "done",
    )
    events = run_all(setup_for(client, on_demand(trigger=1000)))
    stops = [t.stop_reason for t in turns(events)]
    assert stops == ["tool_use", "tool_use", "compaction", "tool_use", "end_turn"]
    assert ["compaction" in r for r in client.requests] == [False, False, True, False, False]
    # After the summary: the block, the answer with a tool_use, its result.
    roles = [m["role"] for m in client.requests[4]["messages"]]
    assert roles == ["assistant", "assistant", "user"]
    # No compact_20260112 edit and no compact-2026-01-12 beta in on-demand mode.
    edits = client.requests[0]["context_management"]["edits"]
    assert [e["type"] for e in edits] == ["clear_tool_uses_20250919"]
    assert client.requests[0]["betas"] == ["context-management-2025-06-27"]


def test_a_compaction_without_a_summary_leaves_the_conversation_as_it_was() -> None:
    failed = {"type": "compaction", "content": None}
    client = ScriptedClient(a_tool_turn(), summary_reply(failed), "done")
    events = run_all(setup_for(client), ask_after=1)
    assert [t.stop_reason for t in turns(events)] == ["tool_use", "compaction", "end_turn"]
    assert client.requests[2]["messages"] == client.requests[1]["messages"]
    assert "compaction" not in client.requests[2]


def test_a_compaction_answered_with_a_reply_is_kept_as_a_reply() -> None:
    client = ScriptedClient(a_tool_turn("t1"), a_tool_turn("t2"), "done")
    events = run_all(setup_for(client), ask_after=1)
    assert [t.stop_reason for t in turns(events)] == ["tool_use", "tool_use", "end_turn"]
    assert [len(t.tool_calls) for t in turns(events)] == [1, 1, 0]
    assert "compaction" in client.requests[1] and "compaction" not in client.requests[2]
    assert len(client.requests[2]["messages"]) == 5


def test_threshold_compaction_and_a_compaction_call_cannot_meet() -> None:
    squeeze = Compaction(enabled=True, trigger=50_000)
    threshold = Profile(context_editing=ContextEditing(compaction=squeeze))
    assert Profile().context_editing.compaction.threshold  # the built-in default too
    control = RunControl()
    control.compact_before_next_turn()
    with pytest.raises(UsageError, match='mode = "on-demand"'):
        run_all(setup_for(ScriptedClient("done"), threshold, control))
    client = ScriptedClient(a_tool_turn(), "done")
    with pytest.raises(UsageError, match="refuses a signed compaction block"):
        run_all(setup_for(client, threshold), ask_after=1)
    assert len(client.requests) == 1


def test_a_compaction_request_leaves_out_what_shapes_a_reply() -> None:
    request = {
        "model": "m",
        "messages": TASK,
        "stop_sequences": ["END"],
        "context_management": {"edits": []},
        "output_config": {"format": {"type": "json_schema"}, "effort": "low"},
        "tool_choice": {"type": "tool", "name": "memory"},
    }
    trimmed = without_reply_fields(request)
    assert trimmed == {"model": "m", "messages": TASK, "output_config": {"effort": "low"}}
    assert without_reply_fields({**request, "tool_choice": {"type": "auto"}})["tool_choice"] == {
        "type": "auto"
    }
    assert request["stop_sequences"] == ["END"]  # not modified
    built = build_compaction_request(Profile(), TASK, [], "  ")
    assert built["compaction"] == {"type": "summarize"}  # blank instructions: not sent
    assert "context_management" not in built


def test_requests_start_at_the_last_signed_block_only() -> None:
    summary: Message = {"role": "assistant", "content": [SIGNED]}
    unsigned: Message = {"role": "assistant", "content": [{"type": "compaction", "content": "s"}]}
    later: Message = {"role": "assistant", "content": [text("more")]}
    history: list[Message] = [*TASK, summary, later, {"role": "user", "content": "go on"}]
    assert read_from(history, threshold=False) == 1 and is_summary(summary)
    assert not is_summary(unsigned) and not is_summary({"role": "user", "content": [SIGNED]})
    assert not is_summary({"role": "assistant", "content": [SIGNED, text("reply")]})
    sent = build_request(
        Profile(cache=dataclasses.replace(Profile().cache, enabled=False)), history, []
    )
    assert sent["messages"] == history[1:]
    assert BETA_COMPACT_ON_DEMAND in sent["betas"]
    threshold_history: list[Message] = [*TASK, unsigned, {"role": "user", "content": "go on"}]
    assert build_request(Profile(), threshold_history, [])["messages"][0] == TASK[0]
    twice: list[Message] = [*TASK, summary, {"role": "user", "content": "a"}, summary, later]
    assert read_from(twice, threshold=False) == 3


def on_demand_table(body: str) -> str:
    return f"[context_editing.compaction]\n{body}\n"


@pytest.mark.parametrize(
    ("body", "key", "why"),
    [
        (
            'enabled = true\nmode = "on-demand"\npause_after_compaction = true',
            "pause_after_compaction",
            "only with mode",
        ),
        ('enabled = false\nmode = "on-demand"', "mode", "has no effect while"),
        ('enabled = true\nmode = "later"', "mode", 'one of "threshold", "on-demand"'),
        ("enabled = true\ntrigger = 20000", "trigger", "below the API minimum"),
    ],
)
def test_profile_rules_of_the_mode(tmp_path: Any, body: str, key: str, why: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(on_demand_table(body))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert f"context_editing.compaction.{key}: " in str(err.value) and why in str(err.value)


@pytest.mark.dates
def test_an_on_demand_trigger_may_be_below_the_threshold_minimum(tmp_path: Any) -> None:
    path = tmp_path / "p.toml"
    path.write_text(on_demand_table('enabled = true\nmode = "on-demand"\ntrigger = 20000'))
    profile = load_profile(path)
    assert profile.context_editing.compaction.on_demand
    assert not profile.context_editing.compaction.threshold
    assert check_profile(profile) == []
