"""turn_table / summary_table rendered to a recording Console and compared as text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from render_samples import BIG_TURNS, RESULT, TURN1, TURN2, TURNS, totals
from rich.console import Console
from rich.table import Table

from agentctl.context.edits import trigger_from
from agentctl.render.format import fmt_compact, fmt_cost, fmt_tools, fmt_usd
from agentctl.render.table import MIN_WIDTH, choose_layout, summary_table, turn_table
from agentctl.types import ToolCall, Totals, TurnEvent, Usage, usd_json


def text_of(table: Table, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def lines_of(table: Table, width: int = 100) -> list[str]:
    return [line.rstrip() for line in text_of(table, width).splitlines()]


def test_turn_table_rows_wide() -> None:
    lines = lines_of(turn_table(TURNS, width=120), width=120)
    assert lines[1].split() == [
        "turn", "stop", "input", "read", "write", "output", "cleared", "cleared", "freed", "tools"
    ]  # fmt: skip
    assert lines[3].split() == [
        "1", "tool_use", "1,234", "0", "5,000", "210", "–", "–", "–", "memory:view,", "read_file×2",
    ]  # fmt: skip
    assert lines[4].split() == [
        "2", "tool_use", "18,000", "8,000", "1,200", "95", "2", "–", "4,100", "memory:str_replace!"
    ]  # fmt: skip
    assert lines[5].split() == ["3", "end_turn", "300", "19,000", "0", "512", "–", "–", "–", "–"]


def test_turn_table_trigger_column_shows_headroom() -> None:
    lines = lines_of(turn_table(TURNS, trigger=30_000, width=120), width=120)
    assert "trigger" in lines[1]
    # prompt of turn 2 = 18,000 + 8,000 + 1,200 = 27,200 -> 2,800 below the trigger
    assert lines[4].split()[9] == "2,800"
    over = replace(TURN1, usage=replace(TURN1.usage, input_tokens=40_000))
    assert lines_of(turn_table([over], trigger=30_000), width=120)[3].split()[9] == "-15,000"


def test_narrow_table_drops_columns_in_order_and_abbreviates_numbers() -> None:
    lines = lines_of(turn_table(TURNS, trigger=30_000, width=76), width=76)
    assert max(len(line) for line in lines) <= 76
    assert lines[1].split() == ["#", "stop", "read", "write", "clr", "freed", "trig", "tools"]
    assert lines[3].split() == [
        "1", "tool_use", "0", "5.0k", "–", "–", "23.8k", "memory:view,", "read_file×2"
    ]  # fmt: skip
    assert lines[4].split()[-1] == "memory:str_replace!"


@pytest.mark.parametrize("trigger", [None, 300_000])
@pytest.mark.parametrize("width", range(80, 131, 2))
def test_every_width_fits_without_breaking_a_tool_name(trigger: int | None, width: int) -> None:
    lines = lines_of(turn_table(BIG_TURNS, trigger=trigger, width=width), width=width)
    assert max(len(line) for line in lines) <= width
    assert any(line.endswith(" memory:str_replace!") for line in lines), lines
    assert "…" not in "".join(lines)


def header_of(turns: Sequence[TurnEvent], width: int) -> list[str]:
    lines = lines_of(turn_table(turns, trigger=300_000, width=width), width=width)
    return " ".join(lines[:2]).split()


def test_layout_depends_on_the_width_only_never_on_the_numbers() -> None:
    for width in range(MIN_WIDTH, 131):
        assert header_of(TURNS, width) == header_of(BIG_TURNS, width), width
    names = [choose_layout(w, trigger=True).name for w in (120, 100, 80, 60, 40)]  # type: ignore[union-attr]
    assert names == ["wide", "compact-8", "compact-5", "compact-4", "minimal"]
    assert choose_layout(MIN_WIDTH - 1, trigger=False) is None


def test_no_width_means_wide() -> None:
    assert "input" in lines_of(turn_table(BIG_TURNS), width=200)[1]


def test_a_number_too_long_for_its_column_is_abbreviated_not_cut() -> None:
    huge = replace(TURN1, usage=replace(TURN1.usage, cache_read_input_tokens=12_345_678))
    text = text_of(turn_table([huge], width=100), width=100)
    assert "12.3M" in text and "…" not in text


def test_summary_table_values() -> None:
    text = text_of(summary_table(RESULT, TURNS))
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines() if line.strip()}
    assert "19,534" in rows["input tokens"]
    assert "27,000" in rows["cache read"]
    assert "6,200" in rows["cache write"]
    assert "817" in rows["output tokens"]
    assert (
        rows["spared by editing"]
        .rstrip()
        .endswith("4,100 prompt tokens, summed over 1 turn (at most 4,100 in one)")
    )
    assert rows["cleared"].rstrip().endswith("2 distinct tool results")
    # 27,000 / (19,534 + 27,000 + 6,200) = 51.2%
    assert "51.2%  (read / (input + read + write))" in rows["cache hit ratio"]
    assert "$0.0123" in rows["estimated cost"]
    assert "27,200 (turn 2)" in rows["peak prompt"]
    assert "agentctl sessions show 20261130-074500-ab12" in rows["see it again"]


def test_summary_cost_unknown_is_na() -> None:
    result = replace(RESULT, totals=totals(float("nan")))
    assert "n/a" in text_of(summary_table(result, TURNS))
    assert fmt_cost(-1.0) == "n/a" and fmt_cost(None) == "n/a" and fmt_cost(2.5) == "$2.50"


def test_summary_without_turns_has_no_peak() -> None:
    assert "peak prompt" not in text_of(summary_table(RESULT, []))


def test_fmt_helpers() -> None:
    numbers = (999, 1234, 99_949, 99_950, 999_499, 999_500, 2_500_000, -1500)
    assert [fmt_compact(n) for n in numbers] == [
        "999", "1.2k", "99.9k", "100k", "999k", "1.0M", "2.5M", "-1.5k"
    ]  # fmt: skip
    assert fmt_tools(TURN1.tool_calls, sep=",", times="*") == "memory:view,read_file*2"
    assert fmt_tools(TURN2.tool_calls) == "memory:str_replace!"
    assert fmt_tools(()) == ""


def test_trigger_from_context_management() -> None:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 5}}
    assert trigger_from({"edits": [{"type": "clear_thinking_20251015"}, edit]}) == 5
    assert trigger_from({"edits": [{"type": "clear_tool_uses_20250919"}]}) == 100_000
    by_uses = {**edit, "trigger": {"type": "tool_uses", "value": 5}}
    assert trigger_from({"edits": [by_uses]}) is None
    assert trigger_from(None) is None


def test_model_chosen_names_are_not_markup() -> None:
    hostile = replace(
        TURN1,
        tool_calls=(
            ToolCall("t1", "[/bold]", {}, False),
            ToolCall("t2", "memory", {"command": "[red]view"}, False),
        ),
        stop_reason="[/]",
    )
    text = text_of(turn_table([hostile], width=120), width=120)
    assert "[/bold], memory:[red]view" in text and "[/]" in text
    result = replace(RESULT, stop_reason="[b]x[/b]", session="[/s]")
    assert "[b]x[/b]" in text_of(summary_table(result, [hostile]))


@pytest.mark.parametrize("width", [40, 50, 60, 72, 80, 100, 120])
def test_sessions_list_never_cuts_a_figure_and_keeps_one_line_a_session(width: int) -> None:
    from agentctl.render.sessions_view import sessions_table
    from agentctl.sessions.catalog import SessionSummary

    row = SessionSummary(
        "20261201-054853-4e07f5", 0.0, "Kestrel outage, and a title far too long to show whole",
        "", "claude-sonnet-5", 23, "end_turn",
        Totals(Usage(input_tokens=552_257, output_tokens=4_141), cost_usd=0.6799),
    )  # fmt: skip
    console = Console(width=width, record=True, color_system=None, force_terminal=True)
    console.print(sessions_table([row], width))
    lines = console.export_text().rstrip("\n").split("\n")
    assert len(lines) == 3 and all(len(line) <= width for line in lines)  # header, rule, row
    assert lines[2].startswith("20261201-054853-4e07f5") and lines[2].endswith("$0.6799")
    assert "552k" in lines[2] or "552,257" in lines[2]
    if width >= 80:
        assert "Kestrel" in lines[2] and "…" in lines[2]  # the title gives way, cut with …


def test_compaction_is_marked_in_the_stop_cell_and_counted_in_the_summary() -> None:
    compacted = replace(TURN1, usage=replace(TURN1.usage, compactions=1))
    paused = replace(compacted, stop_reason="compaction", tool_calls=())
    wide = lines_of(turn_table([compacted, paused], width=120), width=120)
    assert wide[3].split()[1] == "c:tool_use"
    assert wide[4].split()[1] == "compaction"
    quiet = replace(compacted, tool_calls=())  # one line a row
    narrowest = lines_of(turn_table([quiet, paused], width=MIN_WIDTH), width=MIN_WIDTH)
    assert [line.split()[1] for line in narrowest[3:5]] == ["c:too", "cmpct"]
    turns = [compacted, paused]
    acc = Totals()
    for turn in turns:
        acc = acc.add_turn(turn, 0.0)
    result = replace(RESULT, totals=acc)
    rows = {
        line.split("  ")[0].strip(): line
        for line in text_of(summary_table(result, turns)).splitlines()
    }
    assert rows["compactions"].split()[-1] == "2"
    assert "compactions" not in text_of(summary_table(RESULT, TURNS))


def test_one_dollar_formatter_for_columns_and_one_rounding_for_json() -> None:
    """A batch's task lines, its table, the ledger and the probe show costs at 4 places at
    any size (they line up), `?` when unknown; JSON rounds to 6 places, null when unknown."""
    assert (fmt_usd(0.00421), fmt_usd(12.5), fmt_usd(None)) == ("$0.0042", "$12.5000", "?")
    assert (fmt_usd(-0.5), fmt_usd(0.5, signed=True), fmt_usd(-0.5, signed=True)) == (
        "-$0.5000",
        "+$0.5000",
        "-$0.5000",
    )
    assert (usd_json(1.23456789), usd_json(None), usd_json(float("nan"))) == (1.234568, None, None)
