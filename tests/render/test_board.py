"""The batch board: its status line from counts, finished tasks printed above it."""

from __future__ import annotations

import io
import math

from rich.console import Console

from agentctl.render.board import Board, BoardState, status_text
from agentctl.types import Totals, Usage


def test_the_status_line_counts_and_estimates_what_is_left() -> None:
    tokens = Usage(1, 400, cache_creation_input_tokens=55, cache_read_input_tokens=123_000)
    state = BoardState(total=40, before=10, done=4, running=5, failed=1)
    state.finished(Totals(tokens, cost_usd=0.4321), failed=False)
    state.finished(Totals(cost_usd=math.nan), failed=False)  # no price: $0
    state.done, state.running = 4, 4
    assert status_text(state, elapsed=20.0) == (
        "14/40 done · 4 running · 1 failed · 123,456 tokens · $0.4321 · ETA 2m10s"
    )


def test_no_estimate_before_a_task_ends_or_once_all_are_done() -> None:
    assert status_text(BoardState(total=3, running=3), 5.0) == (
        "0/3 done · 3 running · 0 tokens · $0.0000"
    )
    assert "ETA" not in status_text(BoardState(total=3, done=3), 5.0)


def test_finished_tasks_scroll_above_and_the_live_line_goes_at_the_end() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system=None)
    times = iter([0.0, *[10.0] * 50])
    board = Board(console, BoardState(total=2), clock=lambda: next(times))
    board.start()
    board.state.done = 1
    board.line("[1/2] t1 ok (7 turns, $0.0105) \x1b[31m")
    board.close()
    text = out.getvalue()
    assert "[1/2] t1 ok (7 turns, $0.0105) \\x1b[31m" in text  # shown, never obeyed
    assert "1/2 done · 0 running · 0 tokens · $0.0000 · ETA 10s" in text
