"""Clearing rules on hand-computed sessions.

Figures (estimator rule, see tokens.py): the first user message "Do the task." = 4 + 2 + 4 = 10;
each round = assistant [tool_use] 4 + 33 = 37, user [tool_result of k words] 4 + 26 + k + k // 10
(N pieces are N + N // 10 tokens). A cleared result is 26 + 8 (placeholder) = 34 tokens, so
clearing one 100-word result frees 110 - 8 = 102; a cleared input `{"path": "/i"}` -> `{}`
frees 33 - 28 = 5.
"""

from __future__ import annotations

import copy
from typing import Any

from agentctl.context.engine import (
    DEFAULT_CLEARED_INPUT_PLACEHOLDER,
    DEFAULT_CLEARED_RESULT_PLACEHOLDER,
    ServerModel,
    apply_context_edits,
)
from agentctl.context.tokens import estimate_request_tokens

K = 100  # words per tool result
TEXT = K + K // 10  # its tokens
BASE = 10 + 6 * (37 + 4 + 26 + TEXT)  # six rounds = 1,072
FREED = TEXT - 8  # per cleared result


def session(names: list[str], k: int = K) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Do the task."}]
    for i, name in enumerate(names):
        use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": {"path": f"/{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * k}
        messages.append({"role": "assistant", "content": [use]})
        messages.append({"role": "user", "content": [result]})
    return {"model": "claude-sonnet-5", "max_tokens": 10, "messages": messages}


def clear(trigger: int = 0, kind: str = "input_tokens", **extra: Any) -> dict[str, Any]:
    return {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": kind, "value": trigger},
        **extra,
    }


def keep(n: int) -> dict[str, Any]:
    return {"type": "tool_uses", "value": n}


def results(request: dict[str, Any]) -> list[Any]:
    return [m["content"][0]["content"] for m in request["messages"][2::2]]


def test_estimate_of_the_fixture_is_hand_computed() -> None:
    assert estimate_request_tokens(session(["read"] * 6)) == BASE == 1_072


def test_trigger_must_be_exceeded() -> None:
    at = apply_context_edits(session(["read"] * 6), [clear(BASE)])
    assert at.applied_edits == [] and at.input_tokens == BASE
    above = apply_context_edits(session(["read"] * 6), [clear(BASE - 1)])
    expected = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3}
    assert above.applied_edits == [{**expected, "cleared_input_tokens": 3 * FREED}]
    assert above.input_tokens == BASE - 3 * FREED == 766
    placeholder = DEFAULT_CLEARED_RESULT_PLACEHOLDER
    assert results(above.request) == [placeholder] * 3 + ["word " * K] * 3


def test_default_trigger_is_100k_tokens() -> None:
    small = apply_context_edits(session(["read"] * 6), [{"type": "clear_tool_uses_20250919"}])
    assert small.applied_edits == []
    big = apply_context_edits(
        session(["read"] * 6, k=20_000), [{"type": "clear_tool_uses_20250919"}]
    )
    assert big.original_input_tokens == 10 + 6 * (37 + 30 + 22_000) > 100_000
    unedited = ServerModel(trigger_basis="unedited")
    again = apply_context_edits(
        session(["read"] * 6, k=20_000), [{"type": "clear_tool_uses_20250919"}], server=unedited
    )
    assert again.applied_edits[0]["cleared_tool_uses"] == 3  # default keep 3
    # The default (edited) basis: the fifth request passes 100k and clears all but 3; the
    # sixth, as edited, is back under it.
    assert big.applied_edits[0]["cleared_tool_uses"] == 2


def test_keep_counts_most_recent_pairs() -> None:
    out = apply_context_edits(session(["read"] * 6), [clear(keep=keep(1))])
    assert out.applied_edits[0]["cleared_tool_uses"] == 5
    assert out.applied_edits[0]["cleared_input_tokens"] == 5 * FREED == 510
    none_left = apply_context_edits(session(["read"] * 6), [clear(keep=keep(6))])
    assert none_left.applied_edits == []


def test_excluded_tools_are_kept_and_do_not_count_toward_keep() -> None:
    names = ["read", "memory"] * 3
    out = apply_context_edits(session(names), [clear(keep=keep(1), exclude_tools=["memory"])])
    assert out.applied_edits[0]["cleared_tool_uses"] == 2
    p, w = DEFAULT_CLEARED_RESULT_PLACEHOLDER, "word " * K
    assert results(out.request) == [p, w, p, w, w, w]


def test_clear_at_least_blocks_the_whole_edit() -> None:
    blocked = clear(clear_at_least={"type": "input_tokens", "value": 3 * FREED + 1})
    out = apply_context_edits(session(["read"] * 6), [blocked])
    assert out.applied_edits == [] and out.request == session(["read"] * 6)
    enough = clear(clear_at_least={"type": "input_tokens", "value": 3 * FREED})
    assert apply_context_edits(session(["read"] * 6), [enough]).input_tokens == BASE - 3 * FREED


def test_clear_tool_inputs_bool_and_list() -> None:
    every = apply_context_edits(session(["read"] * 6), [clear(clear_tool_inputs=True)])
    assert every.applied_edits[0]["cleared_input_tokens"] == 3 * (FREED + 5) == 321
    inputs = [m["content"][0]["input"] for m in every.request["messages"][1::2]]
    assert inputs == [DEFAULT_CLEARED_INPUT_PLACEHOLDER] * 3 + [
        {"path": f"/{i}"} for i in (3, 4, 5)
    ]
    names = ["read", "grep"] * 3
    listed = apply_context_edits(session(names), [clear(clear_tool_inputs=["grep"])])
    assert listed.applied_edits[0]["cleared_input_tokens"] == 3 * FREED + 5  # only t1 is grep
    assert listed.request["messages"][3]["content"][0]["input"] == {}
    assert listed.request["messages"][1]["content"][0]["input"] == {"path": "/0"}


def test_tool_uses_trigger_counts_uses() -> None:
    at = apply_context_edits(session(["read"] * 6), [clear(6, "tool_uses")])
    assert at.applied_edits == []
    above = apply_context_edits(session(["read"] * 6), [clear(5, "tool_uses", keep=keep(4))])
    assert above.applied_edits[0]["cleared_tool_uses"] == 2


def test_results_shorter_than_the_placeholder_stay() -> None:
    out = apply_context_edits(session(["read"] * 6, k=5), [clear(keep=keep(0))])
    assert out.applied_edits == []  # a 5-word result is cheaper than the placeholder
    assert out.input_tokens == out.original_input_tokens


def test_server_tool_results_are_in_scope() -> None:
    request = session(["read"])
    search = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"t": "x " * 50}]}
    request["messages"].insert(1, {"role": "assistant", "content": [search, found]})
    request["messages"].insert(2, {"role": "user", "content": "go on"})
    out = apply_context_edits(request, [clear(keep=keep(1))])
    assert out.applied_edits[0]["cleared_tool_uses"] == 1
    assert out.request["messages"][1]["content"][1]["content"] == DEFAULT_CLEARED_RESULT_PLACEHOLDER


def thinking_session(turns: int, words: int = 30) -> dict[str, Any]:
    request = session(["read"] * turns)
    for i, message in enumerate(request["messages"][1::2]):
        think = {"type": "thinking", "thinking": "hmm " * words, "signature": f"sig{i}"}
        message["content"].insert(0, think)
    return {**request, "thinking": {"type": "enabled", "budget_tokens": 2048}}


def test_clear_thinking_keeps_last_n_turns() -> None:
    edit = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}
    out = apply_context_edits(thinking_session(5), [edit])
    # The request answers the fifth message's tool use: that turn is one of the two kept.
    expected = {"type": "clear_thinking_20251015", "cleared_thinking_turns": 3}
    # Reported: the thinking text alone (33 tokens each); the prompt loses 55 a turn.
    assert out.applied_edits == [{**expected, "cleared_input_tokens": 3 * 33}]
    assert out.original_input_tokens - out.input_tokens == 3 * 55
    kinds = [[b["type"] for b in m["content"]] for m in out.request["messages"][1::2]]
    assert kinds == [["tool_use"]] * 3 + [["thinking", "tool_use"]] * 2


def test_clear_thinking_all_and_default() -> None:
    for keep_all in ("all", {"type": "all"}):
        edit = {"type": "clear_thinking_20251015", "keep": keep_all}
        assert apply_context_edits(thinking_session(5), [edit]).applied_edits == []
    for edit in (
        {"type": "clear_thinking_20251015"},
        {"type": "clear_thinking_20251015", "keep": None},
    ):
        older = {**thinking_session(5), "model": "claude-sonnet-4-5"}
        default = apply_context_edits(older, [edit])
        assert default.applied_edits[0]["cleared_thinking_turns"] == 4  # keep 1 turn
        newer = {**thinking_session(5), "model": "claude-sonnet-4-6"}
        assert apply_context_edits(newer, [edit]).applied_edits == []  # keep all turns


def test_edits_run_in_order_and_trigger_sees_the_thinking_edit() -> None:
    request = thinking_session(6)
    total = estimate_request_tokens(request)
    assert total == BASE + 6 * 55
    thinking = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    # Five turns lose their thinking (the answered sixth keeps it): 5 x 55 = 275 tokens.
    # Between the edited (total - 275) and unedited (total) sizes: only thinking applies.
    out = apply_context_edits(request, [thinking, clear(total - 100)])
    assert [e["type"] for e in out.applied_edits] == ["clear_thinking_20251015"]
    both = apply_context_edits(request, [thinking, clear(total - 300)])
    assert [e["cleared_input_tokens"] for e in both.applied_edits] == [5 * 33, 3 * FREED]
    assert both.input_tokens == total - 275 - 3 * FREED


def test_input_is_never_mutated_and_string_content_survives() -> None:
    request = thinking_session(4)
    before = copy.deepcopy(request)
    thinking = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    out = apply_context_edits(request, [thinking, clear(keep=keep(1), clear_tool_inputs=True)])
    assert request == before
    assert out.request["messages"][0] == {"role": "user", "content": "Do the task."}
    assert out.request is not request and out.request["thinking"] == request["thinking"]


def test_custom_placeholder_and_unknown_edits_skipped() -> None:
    edits = [{"type": "compact_20260112"}, clear(keep=keep(5))]
    out = apply_context_edits(
        session(["read"] * 6), edits, server=ServerModel(placeholder="[gone]")
    )
    assert results(out.request)[0] == "[gone]"
    assert out.applied_edits[0]["cleared_input_tokens"] == TEXT - 3  # [ gone ]
