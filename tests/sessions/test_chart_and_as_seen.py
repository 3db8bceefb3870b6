"""The stats chart (glyphs, rendering) and `--as-seen` (placeholders, dropped thinking, diff)."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console

from agentctl.context.engine import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.errors import UsageError
from agentctl.render.chart import bar, prompt_chart
from agentctl.sessions.as_seen import as_seen_report, render_prompt
from agentctl.sessions.chart_rows import ChartRow, chart_rows
from agentctl.sessions.transcript import Transcript
from agentctl.types import AppliedEdit, Turn, Usage


def text_of(renderable: object, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_bar_stacks_read_seen_and_cleared() -> None:
    row = ChartRow(turn=3, sent=10_000, seen=6_000, read=2_000, edited=True)
    # 500 tokens a cell: 4 cells read, 8 more seen, 8 more cleared, 4 empty
    expected = "█" * 4 + "▓" * 8 + "░" * 8 + " " * 4
    assert bar(row, scale=500.0, width=24, trigger_at=None).plain == expected


def test_the_trigger_tick_only_shows_where_the_bar_does_not_reach() -> None:
    short = ChartRow(1, 1_000, 1_000, 0, False)
    assert bar(short, 100.0, 20, trigger_at=15).plain == "▓" * 10 + " " * 5 + "┊" + " " * 4
    long = ChartRow(2, 2_000, 2_000, 0, False)
    assert "┊" not in bar(long, 100.0, 20, trigger_at=15).plain


def _turns(*figures: tuple[int, int, int, int]) -> list[Turn]:
    """Turns from (turn, prompt tokens, cleared tokens, cache read)."""
    return [
        Turn(turn, "tool_use", Usage(prompt - read, 0, 0, read),
             (AppliedEdit("clear_tool_uses_20250919", cleared),) if cleared else ())
        for turn, prompt, cleared, read in figures
    ]  # fmt: skip


def test_chart_rows_mark_edits_and_new_clearings() -> None:
    rows = chart_rows(_turns((1, 100, 0, 0), (2, 80, 50, 40), (3, 90, 50, 80), (4, 70, 90, 10)))
    assert [(r.sent, r.edited, r.new_clearing) for r in rows] == [
        (100, False, False), (130, True, True), (140, True, False), (160, True, True),
    ]  # fmt: skip


def test_chart_text_has_every_turn_the_marks_and_the_legend() -> None:
    rows = chart_rows(_turns((1, 1_000, 0, 0), (2, 2_000, 0, 1_000), (3, 1_500, 1_000, 500)))
    text = text_of(prompt_chart(rows, width=80, trigger=2_400, title="demo"), width=80)
    lines = text.splitlines()
    assert lines[0] == "demo"
    assert any(line.lstrip().startswith("3 ") and line.rstrip().endswith("✂ new") for line in lines)
    assert "prompt tokens, 0 .. 2,500" in text
    assert "░ cleared by editing" in text and "┊ trigger" in text
    assert max(len(line) for line in lines) <= 80


@pytest.mark.dates
def test_as_seen_shows_placeholders_and_the_diff(research: Transcript) -> None:
    first = next(t.turn for t in research.turns if t.cleared_input_tokens)  # the first clearing
    report = as_seen_report(research, first)
    head, _, diff = report.partition(f"# diff from turn {first - 1}")
    assert "computed by the shared engine" in head
    assert "applied edits by the engine (the same)" in head
    cleared = head.count(DEFAULT_CLEARED_RESULT_PLACEHOLDER)
    assert cleared >= 2
    assert diff.count("+[tool_result ") >= cleared and DEFAULT_CLEARED_RESULT_PLACEHOLDER in diff
    assert f"--- turn {first - 1} (as seen)" in diff and f"+++ turn {first} (as seen)" in diff


@pytest.mark.dates
def test_as_seen_drops_old_thinking(thinking: Transcript) -> None:
    recorded = render_prompt({"messages": list(thinking.turns[4].messages)}, limit=None).count(
        "[thinking]"
    )
    report = as_seen_report(thinking, 5)
    seen = report.partition("# diff from")[0].count("[thinking]")
    assert (recorded, seen) == (4, 2)  # clear_thinking keep=2


@pytest.mark.dates
def test_the_first_turn_has_no_diff_and_bad_turns_name_the_range(research: Transcript) -> None:
    assert "# first turn: no diff" in as_seen_report(research, 1)
    with pytest.raises(UsageError, match=r"--as-seen 99: the run has turns 1\.\.23"):
        as_seen_report(research, 99)


@pytest.mark.dates
def test_a_real_api_run_is_labelled_reconstructed(research: Transcript) -> None:
    header = dataclasses.replace(research.header, offline=False)
    real = Transcript(research.id, research.path, header, research.turns, research.history,
                   research.result, research.error, research.records)  # fmt: skip
    assert "reconstructed by the shared engine" in as_seen_report(real, 2)
