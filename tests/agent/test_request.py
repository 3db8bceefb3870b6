"""Profile -> request: fields, betas, edits order, thinking, cache breakpoints."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.agent.request import build_context_management, build_request
from agentctl.profile.settings import (
    CacheSettings,
    ClearThinking,
    ContextEditing,
    Profile,
    ServerToolSettings,
    ThinkingSettings,
    WebFetchSettings,
    WebSearchSettings,
)

MEMORY = {"type": "memory_20250818", "name": "memory"}
HISTORY = [
    {"role": "user", "content": "task"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "tool_use", "id": "a", "name": "memory", "input": {}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]},
]


def profile(**changes: object) -> Profile:
    return dataclasses.replace(Profile(system="Be brief."), **changes)  # type: ignore[arg-type]


def test_default_request_shape() -> None:
    req = build_request(profile(), HISTORY, [MEMORY])
    assert list(req) == [
        "model",
        "max_tokens",
        "system",
        "tools",
        "messages",
        "context_management",
        "betas",
    ]
    assert req["betas"] == ["context-management-2025-06-27", "compact-2026-01-12"]
    assert req["context_management"] == build_context_management(Profile().context_editing)
    assert req["context_management"]["edits"][-1]["type"] == "compact_20260112"  # on by default
    assert "thinking" not in req


def test_three_breakpoints_tools_system_last_message() -> None:
    req = build_request(profile(), HISTORY, [MEMORY])
    marker = {"type": "ephemeral", "ttl": "5m"}
    assert req["tools"][-1]["cache_control"] == marker
    assert req["system"][0]["cache_control"] == marker
    assert req["messages"][-1]["content"][-1]["cache_control"] == marker
    assert count_breakpoints(req) == 3
    assert "cache_control" not in HISTORY[2]["content"][0]  # the history itself is not touched


def test_string_content_becomes_a_marked_text_block_and_thinking_is_skipped() -> None:
    req = build_request(profile(cache=CacheSettings(ttl="1h")), HISTORY[:1], [])
    assert req["messages"][0]["content"] == [
        {"type": "text", "text": "task", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    only_thinking = [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}]}
    ]
    assert count_breakpoints(build_request(profile(), only_thinking, [])) == 1  # system only


def test_no_cache_no_markers() -> None:
    req = build_request(profile(cache=CacheSettings(enabled=False)), HISTORY, [MEMORY])
    assert count_breakpoints(req) == 0


def test_thinking_and_clear_thinking_first() -> None:
    edits = ContextEditing(thinking=ClearThinking(enabled=True, keep=2))
    req = build_request(
        profile(thinking=ThinkingSettings(enabled=True, budget_tokens=2048), context_editing=edits),
        HISTORY,
        [MEMORY],
    )
    assert req["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    types = [e["type"] for e in req["context_management"]["edits"]]
    assert types == ["clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"]


def test_adaptive_thinking_sends_no_budget_and_clear_thinking_still_comes_first() -> None:
    edits = ContextEditing(thinking=ClearThinking(enabled=True, keep="all"))
    thinking = ThinkingSettings(enabled=True, budget_tokens=2048, adaptive=True)
    req = build_request(profile(thinking=thinking, context_editing=edits), HISTORY, [MEMORY])
    assert req["thinking"] == {"type": "adaptive"}
    assert req["context_management"]["edits"][0] == {
        "type": "clear_thinking_20251015",
        "keep": "all",
    }


def test_server_tools_pass_through() -> None:
    from agentctl.agent.request import server_tools

    on = ServerToolSettings(WebSearchSettings(enabled=True), WebFetchSettings(enabled=True))
    p = profile(server_tools=on)
    req = build_request(p, HISTORY, [MEMORY, *server_tools(p)])
    assert [t["name"] for t in req["tools"]] == ["memory", "web_search", "web_fetch"]
    # SDK 2.15: no beta for these (the compaction beta is the default compaction's)
    assert req["betas"] == ["context-management-2025-06-27", "compact-2026-01-12"]


_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=5)),
    st.just({"type": "thinking", "thinking": "x", "signature": "s"}),
    st.just({"type": "tool_use", "id": "a", "name": "memory", "input": {}}),
    st.just({"type": "tool_result", "tool_use_id": "a", "content": "ok"}),
)
_message = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.one_of(st.text(max_size=5), st.lists(_block, max_size=4)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_message, min_size=1, max_size=6), st.booleans(), st.booleans())
@pytest.mark.slow
def test_never_more_than_three_breakpoints_and_the_history_is_untouched(
    messages: list[dict[str, object]], system: bool, tools: bool
) -> None:
    before = copy.deepcopy(messages)
    p = profile() if system else dataclasses.replace(Profile(), system="")
    req = build_request(p, messages, [MEMORY] if tools else [])
    assert count_breakpoints(req) <= 3
    assert messages == before
    thinking = [
        b
        for m in req["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "thinking"
    ]
    assert all("cache_control" not in b for b in thinking)


def count_breakpoints(request: Mapping[str, Any]) -> int:
    """How many cache_control markers a request carries."""
    blocks: list[Any] = list(request.get("tools") or []) + list(request.get("system") or [])
    for message in request.get("messages") or []:
        content = message.get("content")
        blocks += content if isinstance(content, list) else []
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


def test_reported_sizes_steer_counted_in_the_history_sent_after_a_summary() -> None:
    """`measured` counts messages of the whole history; after an on-demand summary the
    request sends its tail, so a figure for 8 messages of the history is one for 7 sent."""
    from agentctl.profile.settings import ClearToolUses
    from tests.context.test_batching import history

    steering = ClearToolUses(
        strategy="batched", trigger=5_500, low_water=3_100, keep=1, clear_at_least=0
    )
    editing = ContextEditing(tool_uses=steering)
    summary = {"role": "assistant", "content": [{"type": "compaction", "content": "so far",
               "signature": "sig"}]}  # fmt: skip
    whole = [{"role": "user", "content": "start"}, summary, *history(4)]
    p = profile(context_editing=editing, cache=CacheSettings(enabled=False))
    steered = build_request(p, whole, [], {8: 5_000, 1: 90_000})
    body = {k: v for k, v in steered.items() if k not in ("context_management", "betas")}
    assert steered["context_management"] == build_context_management(
        editing, body, measured={7: 5_000}
    )
    assert steered["context_management"] != build_request(p, whole, [])["context_management"]


def test_a_compaction_answer_reports_no_size_to_steer_on() -> None:
    from agentctl.agent.request import reported_size
    from agentctl.types import AppliedEdit, Usage

    usage = Usage(input_tokens=100, cache_read_input_tokens=900, cache_creation_input_tokens=50)
    cleared = (AppliedEdit("clear_tool_uses_20250919", cleared_input_tokens=300),)
    assert reported_size(usage, [{"type": "text", "text": "hi"}], cleared) == 1_050
    assert reported_size(usage, [], cleared, unedited=True) == 1_350
    assert reported_size(usage, [], compaction_request=True) is None
    assert reported_size(usage, [{"type": "compaction", "content": "s"}]) is None
    assert reported_size(dataclasses.replace(usage, compactions=1), []) is None


def test_batched_clearing_counts_tool_uses_by_the_server_model_it_is_given() -> None:
    """The run's server model reaches the request builder as an object: under rules where no
    result is large enough to count, nothing is clearable and the edit stays as written."""
    from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
    from agentctl.profile.settings import ClearToolUses
    from tests.context.test_batching import history

    steering = ClearToolUses(strategy="batched", trigger=5_500, keep=1, clear_at_least=0)
    p = profile(context_editing=ContextEditing(tool_uses=steering))
    counted = build_request(p, history(6), [], server=DEFAULT_SERVER_MODEL)
    edit = counted["context_management"]["edits"][0]
    assert edit["trigger"]["type"] == "tool_uses" and edit["keep"]["value"] >= 1
    none_count = ServerModel("custom", min_result_tokens=100_000)
    as_written = build_request(p, history(6), [], server=none_count)
    assert as_written["context_management"]["edits"][0] == steering.edit()


def _marked_results(request: Mapping[str, Any]) -> list[str]:
    return [
        block["tool_use_id"]
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and "cache_control" in block
    ]


def test_batched_clearing_puts_a_breakpoint_on_the_newest_cleared_result() -> None:
    """Past the first batch, the prompt up to the cleared boundary is the same until the next
    batch: a fourth breakpoint there lets that batch read it from the cache. The edit says
    which results the server clears (the oldest `trigger.value` uses); the marker is on the
    last of them, and the history passed in is not modified."""
    from agentctl.profile.settings import ClearToolUses
    from tests.context.test_batching import history

    steering = ClearToolUses(strategy="batched", trigger=5_500, keep=1, clear_at_least=0)
    p = profile(context_editing=ContextEditing(tool_uses=steering))
    before = history(3)
    assert _marked_results(build_request(p, before, [MEMORY])) == ["t2"]  # the last block only
    messages = history(8)
    pristine = copy.deepcopy(messages)
    request = build_request(p, messages, [MEMORY])
    edit = request["context_management"]["edits"][0]
    assert edit["trigger"]["type"] == "tool_uses"
    cleared = edit["trigger"]["value"]
    assert 1 <= cleared < 8
    # the boundary before its last move (3 cleared) keeps its breakpoint: a read walks back
    # only 20 blocks, so the batch that moved the boundary found that entry through it
    assert cleared == 6 and _marked_results(request) == ["t2", "t5", "t7"]
    assert messages == pristine
    breakpoints = sum(
        "cache_control" in b
        for part in (request["tools"], *(m["content"] for m in request["messages"]))
        if isinstance(part, list)
        for b in part
    )
    assert breakpoints <= 4
    with_system = build_request(dataclasses.replace(p, system="Be brief."), messages, [MEMORY])
    assert "cache_control" in with_system["system"][-1]  # it covers the tools' prefix too
    assert "cache_control" not in with_system["tools"][-1]
    assert _marked_results(with_system) == ["t2", "t5", "t7"]
    server = profile(context_editing=ContextEditing(tool_uses=dataclasses.replace(
        steering, strategy="server")))  # fmt: skip
    assert _marked_results(build_request(server, messages, [MEMORY])) == ["t7"]
    uncached = dataclasses.replace(p, cache=CacheSettings(enabled=False))
    assert _marked_results(build_request(uncached, messages, [MEMORY])) == []


def test_a_history_that_starts_at_a_summary_with_no_tool_use_gets_a_valid_trigger() -> None:
    """After an on-demand compaction the request opens with the summary and may hold no tool
    use yet; the API refuses a trigger below 1 (it was 0: a 400 on the next request)."""
    from agentctl.profile.settings import ClearToolUses

    steering = ClearToolUses(strategy="batched", trigger=5_500, keep=1, clear_at_least=0)
    p = profile(context_editing=ContextEditing(tool_uses=steering))
    summary = {"role": "assistant", "content": [{"type": "compaction", "content": "so far",
               "signature": "sig"}]}  # fmt: skip
    request = build_request(p, [{"role": "user", "content": "go"}, summary,
                                {"role": "user", "content": "go on"}], [])  # fmt: skip
    trigger = request["context_management"]["edits"][0]["trigger"]
    assert trigger == {"type": "tool_uses", "value": 1}
