"""The rows of the prompt-size chart of `agentctl stats`: one per turn, in tokens.

Values only; `render.chart` draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentctl.types import Turn


@dataclass(frozen=True)
class ChartRow:
    """One turn of the chart, in tokens: sent >= seen >= read."""

    turn: int
    sent: int  # the unedited prompt (seen + cleared)
    seen: int  # the prompt after edits (input + cache writes + cache reads)
    read: int  # read from cache
    edited: bool  # an edit applied on this turn
    new_clearing: bool = False  # it cleared more than the turn before


def chart_rows(turns: Sequence[Turn]) -> list[ChartRow]:
    """The rows of a run's turns (recorded or replayed), in turn order."""
    rows: list[ChartRow] = []
    previous = 0
    for turn in turns:
        prompt, cleared = turn.usage.prompt_tokens, turn.cleared_input_tokens
        read = turn.usage.cache_read_input_tokens
        rows.append(
            ChartRow(turn.turn, prompt + cleared, prompt, read, cleared > 0, cleared > previous)
        )
        previous = cleared
    return rows
