"""Properties over many inputs: compact numbers stay short, plain lines parse back."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agentctl.render.format import fmt_compact
from agentctl.render.plain import format_turn_line
from agentctl.types import AppliedEdit, ToolCall, TurnEvent, Usage

counts = st.integers(min_value=0, max_value=10**11)
names = st.sampled_from(["memory", "read_file", "list_files", "search_text", "x y", "[/b]"])


@given(counts)
def test_compact_numbers_fit_five_characters(value: int) -> None:
    text = fmt_compact(value)
    assert len(text) <= 5
    assert re.fullmatch(r"\d{1,3}|\d{1,2}\.\d[kMG]|\d{3}[kMG]", text), text


@given(
    st.integers(1, 10_000),
    st.tuples(counts, counts, counts, counts),
    st.lists(st.tuples(counts, st.integers(0, 50), st.integers(0, 50)), max_size=3),
    st.lists(st.tuples(names, st.booleans()), max_size=6),
)
def test_turn_line_parses_back(
    number: int,
    usage: tuple[int, int, int, int],
    edits: list[tuple[int, int, int]],
    calls: list[tuple[str, bool]],
) -> None:
    turn = TurnEvent(
        turn=number,
        stop_reason="tool_use",
        usage=Usage(*usage),
        applied_edits=tuple(AppliedEdit("clear", t, u, k) for t, u, k in edits),
        tool_calls=tuple(ToolCall(str(i), n, {}, err) for i, (n, err) in enumerate(calls)),
    )
    line = format_turn_line(turn)
    assert "\n" not in line and line.isascii() is all(n.isascii() for n, _ in calls)
    fields = dict(re.findall(r"(\w+)=([^ ]+)", line.split("  tools=")[0]))
    number_of = {key: int(value.replace(",", "")) for key, value in fields.items()}
    assert number_of["in"] == usage[0] and number_of["out"] == usage[1]
    assert number_of["cache_write"] == usage[2] and number_of["cache_read"] == usage[3]
    assert number_of["tokens"] == sum(t for t, _, _ in edits)
    assert number_of["tool_uses"] == sum(u for _, u, _ in edits)
    assert number_of["thinking"] == sum(k for _, _, k in edits)
    assert line.startswith(f"turn {number}  tool_use  ")
