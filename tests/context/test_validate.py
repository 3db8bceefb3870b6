"""validate_edits: the API's 400 message for each bad context_management shape."""

from __future__ import annotations

from typing import Any

import pytest

from agentctl.context.engine import validate_edits

THINKING = {"type": "enabled", "budget_tokens": 1024}
CLEAR_TOOLS = {"type": "clear_tool_uses_20250919"}
CLEAR_THINKING = {"type": "clear_thinking_20251015", "keep": "all"}


def check(edits: Any, **extra: Any) -> str | None:
    return validate_edits({"messages": [], "context_management": {"edits": edits}, **extra})


def test_good_requests_pass() -> None:
    assert validate_edits({"messages": []}) is None
    assert check([]) is None
    assert check([CLEAR_THINKING, CLEAR_TOOLS], thinking=THINKING) is None
    assert check([CLEAR_THINKING], thinking={"type": "adaptive"}) is None
    full = {
        **CLEAR_TOOLS,
        "trigger": {"type": "tool_uses", "value": 5},
        "keep": {"type": "tool_uses", "value": 0},
        "clear_at_least": {"type": "input_tokens", "value": 1000},
        "exclude_tools": ["memory"],
        "clear_tool_inputs": ["read"],
    }
    assert check([full]) is None
    keep_turns = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}
    assert check([keep_turns], thinking=THINKING) is None
    assert (
        check([{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}])
        is None
    )


def test_clear_thinking_needs_thinking_literal_message() -> None:
    expected = "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive"
    assert check([CLEAR_THINKING]) == expected
    assert check([CLEAR_THINKING], thinking={"type": "disabled"}) == expected


def test_clear_thinking_must_come_first() -> None:
    message = check([CLEAR_TOOLS, CLEAR_THINKING], thinking=THINKING)
    assert message is not None and message.startswith("context_management.edits: ")
    assert "must be the first strategy" in message


def test_compact_trigger_floor_literal_message() -> None:
    small = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 49999}}
    expected = "context_management.edits.0.compact_20260112: trigger.value must be at least 50000"
    assert check([small]) == expected


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"type": "clear_everything"}, "context_management.edits.0: Input tag 'clear_everything'"),
        (
            {**CLEAR_TOOLS, "trigger": {"type": "turns", "value": 3}},
            "edits.0.trigger.type: Input should be 'input_tokens' or 'tool_uses'",
        ),
        (
            {**CLEAR_TOOLS, "trigger": {"type": "input_tokens", "value": "10"}},
            "edits.0.trigger.value: Input should be a valid integer",
        ),
        (
            {**CLEAR_TOOLS, "trigger": {"type": "input_tokens", "value": 0}},
            "edits.0.trigger.value: Input should be greater than or equal to 1",
        ),
        (
            {**CLEAR_TOOLS, "keep": {"type": "tool_uses", "value": -1}},
            "edits.0.keep.value: Input should be greater than or equal to 0",
        ),
        ({**CLEAR_TOOLS, "keep": 3}, "edits.0.keep: Input should be a valid dictionary"),
        (
            {**CLEAR_TOOLS, "clear_at_least": {"type": "tool_uses", "value": 3}},
            "edits.0.clear_at_least.type: Input should be 'input_tokens'",
        ),
        (
            {**CLEAR_TOOLS, "exclude_tools": "memory"},
            "edits.0.exclude_tools: Input should be a valid list of strings",
        ),
        (
            {**CLEAR_TOOLS, "clear_tool_inputs": [1]},
            "edits.0.clear_tool_inputs: Input should be a valid list of strings",
        ),
        ({**CLEAR_TOOLS, "bogus": 1}, "edits.0.bogus: Extra inputs are not permitted"),
        (
            {**CLEAR_TOOLS, "trigger": {"type": "input_tokens", "value": 5, "x": 1}},
            "edits.0.trigger.x: Extra inputs are not permitted",
        ),
        ("clear", "context_management.edits.0: Input should be a valid dictionary"),
    ],
)
def test_bad_clear_tool_uses_shapes(edit: Any, message: str) -> None:
    got = check([edit])
    assert got is not None and message in got


@pytest.mark.parametrize(
    ("keep", "message"),
    [
        (
            {"type": "thinking_turns", "value": 0},
            "edits.0.keep.value: Input should be greater than or equal to 1",
        ),
        (
            {"type": "thinking_turns", "value": -2},
            "edits.0.keep.value: Input should be greater than or equal to 1",
        ),
        ({"type": "thinking_turns"}, "edits.0.keep.value: Input should be a valid integer"),
        ("some", "edits.0.keep: Input should be 'all' or an object"),
    ],
)
def test_bad_thinking_keep(keep: Any, message: str) -> None:
    got = check([{"type": "clear_thinking_20251015", "keep": keep}], thinking=THINKING)
    assert got is not None and message in got


def test_bad_container_shapes() -> None:
    assert validate_edits({"context_management": []}) == (
        "context_management: Input should be a valid dictionary"
    )
    assert check("x") == "context_management.edits: Input should be a valid list"
    extra = validate_edits({"context_management": {"edits": [], "mode": 1}})
    assert extra == "context_management.mode: Extra inputs are not permitted"
    both = check([], compaction={"type": "summarize"})
    assert both == "`compaction` cannot be used together with `context_management`"
