"""Pure functions from events to Rich tables: the per-turn table and the end-of-run summary."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from agentctl.agent.events import ResultEvent, TurnEvent
from agentctl.render.format import (
    DASH,
    cache_hit_ratio,
    cleared_thinking_turns,
    cleared_tool_uses,
    fmt_compact,
    fmt_cost,
    fmt_int,
    fmt_ratio,
    fmt_tools,
    peak_prompt,
)

RATIO_FORMULA = "(read / (input + read + write))"

# (wide header, compact header): two short lines so the table fits 100 columns, or 80 compact.
_NUMBER_HEADERS: tuple[tuple[str, str], ...] = (
    ("input", "in"),
    ("cache\nread", "cache\nread"),
    ("cache\nwrite", "cache\nwrite"),
    ("output", "out"),
    ("uses\ncleared", "uses\nclr"),
    ("think\ncleared", "think\nclr"),
    ("tokens\nfreed", "freed"),
)


def turn_table(
    turns: Sequence[TurnEvent], *, trigger: int | None = None, width: int | None = None
) -> Table:
    """One row per turn; `trigger` adds the prompt's headroom below it (negative: over it).

    `width` (the console width it will be drawn at; None = wide) picks the layout: below
    `WIDE_WIDTH` short headers and one space between columns, below `FULL_NUMBERS_WIDTH`
    also abbreviated numbers (`18.0k`), so 80 columns keep every column readable.
    """
    wide, full_numbers = layout_for(width, trigger)
    # SIMPLE_HEAD draws a one-space divider, so columns are 2 (wide) or 1 space apart.
    padding = (0, 0, 0, 1) if wide else (0, 0)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=padding)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("stop", overflow="fold")
    for long_header, short_header in _NUMBER_HEADERS:
        table.add_column(long_header if wide else short_header, justify="right", no_wrap=True)
    if trigger is not None:
        table.add_column("to\ntrigger" if wide else "to\ntrig", justify="right", no_wrap=True)
    table.add_column("tools", min_width=12, overflow="fold")
    for turn in turns:
        table.add_row(*_turn_cells(turn, trigger, fmt_int if full_numbers else fmt_compact))
    return table


# Measured with six-digit token counts: the width from which each layout leaves the tools
# column room for `memory:str_replace!`; the second value applies when the trigger column shows.
WIDE_WIDTH = (96, 106)
FULL_NUMBERS_WIDTH = (84, 94)


def layout_for(width: int | None, trigger: int | None) -> tuple[bool, bool]:
    """(wide headers and gaps, full numbers) for a table drawn `width` columns wide."""
    if width is None:
        return True, True
    column = 1 if trigger is not None else 0
    return width >= WIDE_WIDTH[column], width >= FULL_NUMBERS_WIDTH[column]


def _turn_cells(
    turn: TurnEvent, trigger: int | None, num: Callable[[int], str]
) -> list[str | Text]:
    usage = turn.usage
    freed = turn.cleared_input_tokens
    cells: list[str | Text] = [
        str(turn.turn),
        Text(turn.stop_reason, style=_stop_style(turn.stop_reason)),
        num(usage.input_tokens),
        num(usage.cache_read_input_tokens),
        num(usage.cache_creation_input_tokens),
        num(usage.output_tokens),
        _num_or_dash(cleared_tool_uses(turn), num),
        _num_or_dash(cleared_thinking_turns(turn), num),
        Text(_num_or_dash(freed, num), style="green" if freed else ""),
    ]
    if trigger is not None:
        headroom = trigger - usage.prompt_tokens
        cells.append(Text(num(headroom), style="yellow" if headroom < 0 else ""))
    cells.append(fmt_tools(turn.tool_calls) or DASH)
    return cells


def _num_or_dash(value: int, num: Callable[[int], str]) -> str:
    return num(value) if value else DASH


def _stop_style(stop_reason: str) -> str:
    if stop_reason in ("end_turn", "stop_sequence"):
        return "green"
    if stop_reason in ("max_tokens", "refusal", "model_context_window_exceeded"):
        return "red"
    return ""


def summary_table(result: ResultEvent, turns: Sequence[TurnEvent]) -> Table:
    """Totals of a run as label/value rows, with the cache hit ratio's formula spelled out."""
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False, title_justify="left")
    table.title = "summary"
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in summary_rows(result, turns):
        table.add_row(label, value)
    return table


def summary_rows(result: ResultEvent, turns: Sequence[TurnEvent]) -> list[tuple[str, str]]:
    """The summary as (label, value) pairs; the plain renderer prints the same facts."""
    totals = result.totals
    usage = totals.usage
    rows = [
        ("turns", fmt_int(result.turns)),
        ("stop reason", result.stop_reason),
        ("input tokens", fmt_int(usage.input_tokens)),
        ("cache read", fmt_int(usage.cache_read_input_tokens)),
        ("cache write", fmt_int(usage.cache_creation_input_tokens)),
        ("output tokens", fmt_int(usage.output_tokens)),
        ("freed by editing", _freed(result)),
        ("cache hit ratio", f"{fmt_ratio(cache_hit_ratio(usage))}  {RATIO_FORMULA}"),
        ("estimated cost", fmt_cost(totals.cost_usd)),
    ]
    peak = peak_prompt(turns)
    if peak is not None:
        rows.insert(6, ("peak prompt", f"{fmt_int(peak.usage.prompt_tokens)} (turn {peak.turn})"))
    rows.append(("session", result.session))
    rows.append(("see it again", f"agentctl sessions show {result.session}"))
    return rows


def _freed(result: ResultEvent) -> str:
    totals = result.totals
    return (
        f"{fmt_int(totals.cleared_input_tokens)} tokens "
        f"({fmt_int(totals.cleared_tool_uses)} tool uses, "
        f"{fmt_int(totals.cleared_thinking_turns)} thinking turns cleared)"
    )
