"""Properties over random histories: the engine and the cache model stay consistent."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.context.cache import PromptCache
from agentctl.context.engine import EditOutcome, apply_context_edits
from agentctl.context.server_model import PRESETS
from agentctl.context.tokens import estimate_request_tokens

NAMES = ["read", "grep", "memory"]
text = st.text(alphabet=st.sampled_from("ab 1.\n{é"), max_size=80)


@st.composite
def rounds(draw: st.DrawFn) -> dict[str, Any]:
    """A user turn, then rounds of [thinking?, text?, tool_use] / [tool_result]."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(text) or "go"}]
    for i in range(draw(st.integers(0, 8))):
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(text), "signature": "s"})
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(text) or "x"})
        name = draw(st.sampled_from(NAMES))
        blocks.append({"type": "tool_use", "id": f"t{i}", "name": name, "input": {"q": draw(text)}})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": draw(text)}
        if draw(st.booleans()):
            result["cache_control"] = {"type": "ephemeral"}
        messages += [
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": [result]},
        ]
    request: dict[str, Any] = {"model": "claude-opus-5-5", "messages": messages}
    request["system"] = [{"type": "text", "text": "s " * draw(st.integers(0, 600))}]
    request["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    if draw(st.booleans()):
        request["cache_control"] = {"type": "ephemeral", "ttl": draw(st.sampled_from(["5m", "1h"]))}
    return request


@st.composite
def edit_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    edits: list[dict[str, Any]] = []
    if draw(st.booleans()):
        keep = draw(
            st.sampled_from(
                [
                    "all",
                    {"type": "thinking_turns", "value": 1},
                    {"type": "thinking_turns", "value": 3},
                ]
            )
        )
        edits.append({"type": "clear_thinking_20251015", "keep": keep})
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["input_tokens", "tool_uses"]))
        edits.append(
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": kind, "value": draw(st.integers(1, 300))},
                "keep": {"type": "tool_uses", "value": draw(st.integers(0, 4))},
                "clear_at_least": {"type": "input_tokens", "value": draw(st.integers(0, 100))},
                "exclude_tools": draw(st.lists(st.sampled_from(NAMES), max_size=2)),
                "clear_tool_inputs": draw(
                    st.one_of(st.booleans(), st.lists(st.sampled_from(NAMES)))
                ),
            }
        )
    return edits


@settings(max_examples=150, deadline=None)
@given(rounds(), edit_lists())
def test_edits_shrink_report_exactly_and_never_mutate(
    request: dict[str, Any], edits: list[dict[str, Any]]
) -> None:
    before = copy.deepcopy(request)
    out = apply_context_edits(request, edits)
    assert request == before
    assert out.original_input_tokens == estimate_request_tokens(request)
    assert out.input_tokens == estimate_request_tokens(out.request)
    assert out.input_tokens <= out.original_input_tokens
    _reports_what_it_cleared(out)
    assert [e["type"] for e in out.applied_edits] == [
        e["type"] for e in edits if e["type"] in {a["type"] for a in out.applied_edits}
    ]


@settings(max_examples=150, deadline=None)
@given(rounds(), edit_lists())
def test_the_edited_model_never_clears_more_than_the_unedited_one(
    request: dict[str, Any], edits: list[dict[str, Any]]
) -> None:
    """Each edited-model batch passed the trigger on a prompt no larger than the last one,
    so the unedited model fires too, and clears everything but `keep`."""
    unedited = apply_context_edits(request, edits, server=PRESETS["unedited"])
    edited = apply_context_edits(request, edits, server=PRESETS["edited"])
    assert edited.input_tokens >= unedited.input_tokens
    _reports_what_it_cleared(edited)
    assert edited.input_tokens == estimate_request_tokens(edited.request)


def _reports_what_it_cleared(out: EditOutcome) -> None:
    """clear_tool_uses reports exactly what it freed; clear_thinking reports the thinking
    text alone, so its figure is at most what the prompt lost (the block framing)."""
    drop = out.original_input_tokens - out.input_tokens
    tools = [e for e in out.applied_edits if e["type"] == "clear_tool_uses_20250919"]
    thinking = [e for e in out.applied_edits if e["type"] == "clear_thinking_20251015"]
    assert all(e["cleared_input_tokens"] > 0 for e in tools)
    assert all(e["cleared_thinking_turns"] > 0 for e in thinking)
    reported = sum(e["cleared_input_tokens"] for e in out.applied_edits)
    assert reported <= drop
    if not thinking:
        assert reported == drop


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(rounds(), edit_lists(), st.floats(0, 400)), min_size=1, max_size=4))
@pytest.mark.slow
def test_cache_usage_adds_up_to_the_estimate(
    steps: list[tuple[dict[str, Any], list[dict[str, Any]], float]],
) -> None:
    now = [0.0]
    cache = PromptCache(lambda: now[0])
    for request, edits, wait in steps:
        now[0] += wait
        edited = apply_context_edits(request, edits).request
        peeked = cache.peek(edited, "claude-opus-5-5")
        got = cache.account(edited, "claude-opus-5-5")
        assert got == peeked
        assert (
            min(got.input_tokens, got.cache_creation_input_tokens, got.cache_read_input_tokens) >= 0
        )
        total = got.input_tokens + got.cache_creation_input_tokens + got.cache_read_input_tokens
        assert total == estimate_request_tokens(edited)
        assert (
            got.ephemeral_5m_input_tokens + got.ephemeral_1h_input_tokens
            == got.cache_creation_input_tokens
        )
        assert cache.peek(edited, "claude-opus-5-5").cache_creation_input_tokens == 0
