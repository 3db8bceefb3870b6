"""The save-before-clear notice in the turn table, the summary and the plain lines."""

from __future__ import annotations

from dataclasses import replace

from render_samples import RESULT, TURN1, TURN2, TURNS
from rich.console import Console

from agentctl.render.format import CHECKPOINT_MARK, checkpoint_text
from agentctl.render.live import LiveRenderer
from agentctl.render.plain import format_summary_lines, format_turn_line
from agentctl.render.table import MIN_WIDTH, summary_rows, turn_table

MARKED = [TURN1, replace(TURN2, checkpoint=True), *TURNS[2:]]


def rows(width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(turn_table(MARKED, trigger=30_000, width=width))
    return [line.rstrip() for line in console.export_text().splitlines()]


def test_the_turn_whose_results_carried_it_is_marked_at_every_width() -> None:
    for width in (120, 80, 60, MIN_WIDTH):
        lines = rows(width)
        marked = [line for line in lines if CHECKPOINT_MARK in line]
        assert len(marked) == 1, (width, lines)
        assert marked[0].split()[0] == "2", (width, lines)  # on the turn's own line
        assert all(len(line) <= width for line in lines)
    wide = rows(120)
    assert wide[4].split()[0] == "2" and wide[4].endswith(f"{CHECKPOINT_MARK} memory:str_replace!")


def test_no_mark_and_no_summary_row_without_a_notice() -> None:
    assert not any(CHECKPOINT_MARK in line for line in rows_of(TURNS))
    assert "checkpoint" not in dict(summary_rows(RESULT, TURNS))
    assert checkpoint_text(TURNS) is None
    assert not any("checkpoint" in line for line in format_summary_lines(RESULT, TURNS))


def rows_of(turns: list) -> list[str]:  # type: ignore[type-arg]
    console = Console(width=100, record=True, color_system=None)
    console.print(turn_table(turns, width=100))
    return console.export_text().splitlines()


def test_summary_and_plain_lines_say_when_it_was_sent() -> None:
    said = dict(summary_rows(RESULT, MARKED))["checkpoint"]
    assert said == "notice sent once, with turn 2's tool results (read in turn 3)"
    assert format_turn_line(MARKED[1]).endswith("  checkpoint=sent")
    assert "checkpoint" not in format_turn_line(MARKED[0])
    assert f"  checkpoint: {said}" in format_summary_lines(RESULT, MARKED)


def test_the_live_view_explains_the_mark_at_the_end() -> None:
    console = Console(width=100, record=True, color_system=None, force_terminal=False)
    live = LiveRenderer(console, refresh_per_second=0, clock=lambda: 0.0)
    for turn in MARKED:
        live.handle(turn)
    live.handle(RESULT)
    live.close()
    text = console.export_text()
    assert f"{CHECKPOINT_MARK}: that turn's tool results carried" in text
    assert "notice sent once, with turn 2's tool results" in text
