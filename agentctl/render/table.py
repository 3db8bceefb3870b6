"""Pure functions from events to Rich tables: the per-turn table and the end-of-run summary."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from functools import cache
from typing import Literal

from rich import box
from rich.console import Console
from rich.measure import Measurement
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
from agentctl.render.safe import safe_text

RATIO_FORMULA = "(read / (input + read + write))"

# (wide header, short header): two lines each, so the numbers set the column widths.
_NUMBER_HEADERS: tuple[tuple[str, str], ...] = (
    ("input", "in"),
    ("cache\nread", "cache\nread"),
    ("cache\nwrite", "cache\nwrite"),
    ("output", "out"),
    ("uses\ncleared", "uses\nclr"),
    ("think\ncleared", "think\nclr"),
    ("tokens\nfreed", "freed"),
)


Layout = Literal["wide", "short", "narrow"]


def turn_table(
    turns: Sequence[TurnEvent], *, trigger: int | None = None, width: int | None = None
) -> Table:
    """One row per turn; `trigger` adds the prompt's headroom below it (negative: over it).

    `width` (what it will be drawn at; None = no limit) picks the layout: wide headers and
    gaps, or short headers and one-space gaps, whichever fits without wrapping the tools
    column, else without breaking a tool name; failing both, abbreviated numbers (`18.0k`),
    which keep every column readable at 80 columns.
    """
    if width is None:
        return layout_table(turns, trigger, "wide")
    tables = [layout_table(turns, trigger, layout) for layout in ("wide", "short")]
    sizes = [_measure(table) for table in tables]
    for needed in ([size.maximum for size in sizes], [size.minimum for size in sizes]):
        for table, size in zip(tables, needed, strict=True):
            if size <= width:
                return table
    return layout_table(turns, trigger, "narrow")


def layout_table(turns: Sequence[TurnEvent], trigger: int | None, layout: Layout) -> Table:
    """The turn table in one given layout (see `turn_table`)."""
    wide = layout == "wide"
    # SIMPLE_HEAD draws a one-space divider, so columns are 2 (wide) or 1 space apart.
    padding = (0, 0, 0, 1) if wide else (0, 0)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=padding)
    table.add_column("turn" if wide else "#", justify="right", no_wrap=True)
    table.add_column("stop", overflow="fold")
    for long_header, short_header in _NUMBER_HEADERS:
        table.add_column(long_header if wide else short_header, justify="right", no_wrap=True)
    if trigger is not None:
        table.add_column("to\ntrigger" if wide else "to\ntrig", justify="right", no_wrap=True)
    # Room for `memory:str_replace!` when the layout is chosen for its width; narrow takes
    # what is left.
    table.add_column("tools", min_width=None if layout == "narrow" else 19, overflow="fold")
    number = fmt_compact if layout == "narrow" else fmt_int
    for turn in turns:
        table.add_row(*_turn_cells(turn, trigger, number))
    return table


@cache
def _measuring_console() -> Console:
    return Console(file=io.StringIO(), width=10_000, color_system=None)


def _measure(table: Table) -> Measurement:
    """Minimum: narrowest without folding a word (a tool name); maximum: with nothing wrapped."""
    console = _measuring_console()
    return Measurement.get(console, console.options, table)


def _turn_cells(
    turn: TurnEvent, trigger: int | None, num: Callable[[int], str]
) -> list[str | Text]:
    usage = turn.usage
    freed = turn.cleared_input_tokens
    cells: list[str | Text] = [
        str(turn.turn),
        safe_text(turn.stop_reason, _stop_style(turn.stop_reason), keep=""),
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
    # Tool names and memory commands come from the model: never markup, controls visible.
    cells.append(safe_text(fmt_tools(turn.tool_calls) or DASH, keep=""))
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
        table.add_row(label, safe_text(value, keep=""))
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
