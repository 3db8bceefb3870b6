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
    turns: Sequence[TurnEvent], *, trigger: int | None = None, compact: bool = False
) -> Table:
    """One row per turn; `trigger` adds the prompt's headroom below it; `compact` fits 80 columns.

    Compact mode abbreviates numbers (`18.0k`) and headers and leaves one space between columns.
    See `wide_enough` for the width each layout needs.
    """
    # SIMPLE_HEAD draws a one-space divider, so columns are 1 (compact) or 2 spaces apart.
    padding = (0, 0) if compact else (0, 0, 0, 1)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=padding)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("stop", overflow="fold")
    for wide, short in _NUMBER_HEADERS:
        table.add_column(short if compact else wide, justify="right", no_wrap=True)
    if trigger is not None:
        table.add_column("to\ntrig" if compact else "to\ntrigger", justify="right", no_wrap=True)
    table.add_column("tools", min_width=12, overflow="fold")
    for turn in turns:
        table.add_row(*_turn_cells(turn, trigger, fmt_compact if compact else fmt_int))
    return table


def wide_enough(width: int, *, trigger: int | None = None) -> bool:
    """Whether the wide layout of `turn_table` leaves room for the tools column at `width`."""
    return width >= (106 if trigger is not None else 96)


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
