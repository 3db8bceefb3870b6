"""Pure functions from events to Rich tables: the per-turn table and the end-of-run summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentctl.render.format import (
    CHECKPOINT_MARK,
    DASH,
    checkpoint_text,
    denials_text,
    distinct_results_cleared,
    distinct_thinking_cleared,
    edited_turns,
    failures_text,
    fmt_compact,
    fmt_cost,
    fmt_int,
    fmt_ratio,
    fmt_tools,
    most_spared,
    peak_prompt,
    ttl_split,
)
from agentctl.render.safe import safe_text
from agentctl.types import ResultEvent, Totals, TurnEvent, Usage

RATIO_FORMULA = "(read / (input + read + write))"
TABLE_LEGEND = (
    "uses cleared, tokens freed: what editing removed from that turn's prompt before the model "
    "read it; a cleared result stays cleared, so every later turn counts it again"
)

# Number columns: key -> (wide header, short header). Two header lines each, so every layout's
# header is two lines high (the live view keeps it on screen by that count).
_HEADERS: dict[str, tuple[str, str]] = {
    "in": ("input", "in"),
    "read": ("cache\nread", "cache\nread"),
    "write": ("cache\nwrite", "cache\nwrite"),
    "out": ("output", "out"),
    "uses": ("uses\ncleared", "uses\nclr"),
    "think": ("think\ncleared", "think\nclr"),
    "freed": ("tokens\nfreed", "freed"),
    "trig": ("to\ntrigger", "to\ntrig"),
}
ALL_NUMBERS = tuple(_HEADERS)
# The order columns give way when the width is short: the least needed first (uncached input
# is near zero once the cache works). Turn, stop, cache read/write, freed and tools always
# stay: they are what this table is for.
DROP_ORDER = ("think", "in", "out", "uses", "trig")
TURN_WIDTH = 4  # up to 9999 turns
FULL_NUMBER, COMPACT_NUMBER = 7, 5  # `999,999` (larger: `1.2M`), and `18.0k`
STOP_SHORT = {
    "tool_use": "tool",
    "end_turn": "end",
    "max_tokens": "max",
    "pause_turn": "pause",
    "stop_sequence": "seq",
    "refusal": "refus",
    "model_context_window_exceeded": "ctx",
    "compaction": "cmpct",
}
COMPACTED = "c:"  # stop-cell marker of a turn whose response holds a compaction
MAX_TOOLS_WIDTH = 48  # wider terminals do not stretch the table: its shape stays the same
# `memory:str_replace, read_file`, the usual agent step, on one line: columns give way first.
ROOMY_TOOLS, TIGHT_TOOLS = 29, 19  # TIGHT: the longest memory command, `memory:str_replace!`


@dataclass(frozen=True)
class TableLayout:
    """What the turn table shows, chosen from the width alone (never from the rows, so the
    header does not change as the numbers grow)."""

    name: str
    numbers: tuple[str, ...]  # number columns kept, in table order
    compact: bool  # numbers as `18.0k` instead of `18,000`
    gap: int  # spaces between columns
    stop_width: int  # 10 fits `max_tokens`; 5 means abbreviated stop reasons
    tools_min: int

    def number_width(self, key: str) -> int:
        base = COMPACT_NUMBER if self.compact else FULL_NUMBER
        return base + 1 if key == "trig" else base  # headroom can be negative

    def fixed_width(self, trigger: bool) -> int:
        """Everything but the tools column, gaps included."""
        keys = self.keys(trigger)
        cells = TURN_WIDTH + self.stop_width + sum(self.number_width(k) for k in keys)
        return cells + self.gap * (len(keys) + 2)

    def keys(self, trigger: bool) -> tuple[str, ...]:
        return tuple(k for k in self.numbers if trigger or k != "trig")

    def fits(self, width: int | None, *, trigger: bool) -> bool:
        return width is None or self.fixed_width(trigger) + self.tools_min <= width

    def tools_width(self, width: int | None, trigger: bool) -> int:
        room = self.tools_min if width is None else width - self.fixed_width(trigger)
        return max(self.tools_min, min(room, MAX_TOOLS_WIDTH))


def _candidates() -> list[TableLayout]:
    """From the richest layout to the leanest; the first that fits is used."""
    layouts = [
        TableLayout("wide", ALL_NUMBERS, False, 2, 10, ROOMY_TOOLS),
        TableLayout("short", ALL_NUMBERS, False, 1, 10, ROOMY_TOOLS),
    ]
    kept = ALL_NUMBERS
    for dropped in (None, *DROP_ORDER):
        kept = tuple(k for k in kept if k != dropped)
        tools = ROOMY_TOOLS if len(kept) >= 5 else TIGHT_TOOLS
        layouts.append(TableLayout(f"compact-{len(kept)}", kept, True, 1, 10, tools))
    layouts.append(TableLayout("minimal", kept, True, 1, 5, 11))
    return layouts


LAYOUTS = _candidates()
MIN_WIDTH = LAYOUTS[-1].fixed_width(False) + LAYOUTS[-1].tools_min  # below it: plain lines


def choose_layout(width: int | None, *, trigger: bool) -> TableLayout | None:
    """The richest layout that fits `width` (None: no limit); None when none fits."""
    return next((layout for layout in LAYOUTS if layout.fits(width, trigger=trigger)), None)


def turn_table(
    turns: Sequence[TurnEvent],
    *,
    trigger: int | None = None,
    width: int | None = None,
    layout: TableLayout | None = None,
) -> Table:
    """One row per turn; `trigger` adds the prompt's headroom below it (negative: over it).

    The layout is `layout`, else the one `choose_layout` picks for `width` (the leanest when
    nothing fits). Numbers are never cut: each column is as wide as its widest value.
    """
    chosen = layout or choose_layout(width, trigger=trigger is not None) or LAYOUTS[-1]
    table = _empty_table(chosen, trigger is not None, width)
    for turn in turns:
        table.add_row(*_turn_cells(turn, trigger, chosen))
    return table


def _empty_table(layout: TableLayout, trigger: bool, width: int | None) -> Table:
    wide = layout.name == "wide"
    # SIMPLE_HEAD draws a one-space divider; a left pad of one makes the gap two.
    padding = (0, 0, 0, 1) if layout.gap == 2 else (0, 0)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=padding)
    table.add_column("turn" if wide else "#", justify="right", no_wrap=True, width=TURN_WIDTH)
    table.add_column("stop", overflow="fold", width=layout.stop_width)
    for key in layout.keys(trigger):
        header = _HEADERS[key][0 if wide else 1]
        table.add_column(header, justify="right", no_wrap=True, width=layout.number_width(key))
    # The tools column wraps between names (a `, ` is a break point).
    table.add_column("tools", overflow="fold", width=layout.tools_width(width, trigger))
    return table


def _turn_cells(turn: TurnEvent, trigger: int | None, layout: TableLayout) -> list[str | Text]:
    usage = turn.usage
    values = {
        "in": usage.input_tokens,
        "read": usage.cache_read_input_tokens,
        "write": usage.cache_creation_input_tokens,
        "out": usage.output_tokens,
        "uses": turn.cleared_tool_uses,
        "think": turn.cleared_thinking_turns,
        "freed": turn.cleared_input_tokens,
        "trig": 0 if trigger is None else trigger - usage.prompt_tokens,
    }
    stop = turn.stop_reason
    if layout.stop_width < 10:
        stop = STOP_SHORT.get(stop, stop[: layout.stop_width])
    if turn.usage.compactions and turn.stop_reason != "compaction":
        stop = (COMPACTED + stop)[: max(layout.stop_width, len(COMPACTED) + 3)]
    cells: list[str | Text] = [
        str(turn.turn),
        safe_text(stop, _stop_style(turn.stop_reason), keep=""),
    ]
    for key in layout.keys(trigger is not None):
        cells.append(_number_cell(key, values[key], layout))
    # Tool names and memory commands come from the model: never markup, controls visible.
    tools = fmt_tools(turn.every_tool_call) or DASH
    if turn.checkpoint:  # first, so a tools cell that wraps still shows it on the turn's line
        tools = f"{CHECKPOINT_MARK} {tools}"
    cells.append(safe_text(tools, keep=""))
    return cells


def _number_cell(key: str, value: int, layout: TableLayout) -> Text:
    text = fmt_compact(value) if layout.compact else fmt_int(value)
    if len(text) > layout.number_width(key):
        text = fmt_compact(value)  # never cut a number: a shorter form of it instead
    if key == "trig":
        return Text(text, style="yellow" if value < 0 else "")
    if not value and key in ("uses", "think", "freed"):
        return Text(DASH)  # nothing cleared
    return Text(text, style="green" if key == "freed" else "")


def _stop_style(stop_reason: str) -> str:
    if stop_reason in ("end_turn", "stop_sequence"):
        return "green"
    if stop_reason in ("max_tokens", "refusal", "model_context_window_exceeded"):
        return "red"
    return ""


def summary_table(
    result: ResultEvent, turns: Sequence[TurnEvent], *, title: str = "summary"
) -> Table:
    """Totals of a run as label/value rows, with the cache hit ratio's formula spelled out."""
    table = Table(box=box.SIMPLE, show_header=False, pad_edge=False, title_justify="left")
    table.title = title
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in summary_rows(result, turns):
        table.add_row(label, safe_text(value, keep=""))
    return table


STACKED_BELOW = 60  # columns: under this, labels and values no longer fit side by side


def summary_view(
    result: ResultEvent, turns: Sequence[TurnEvent], width: int, *, title: str = "summary"
) -> RenderableType:
    """The summary table, or on a narrow terminal each label over its value (so a session id
    or a number is never folded in a narrow value column)."""
    if width >= STACKED_BELOW:
        return summary_table(result, turns, title=title)
    lines: list[RenderableType] = [Text(title)]
    for label, value in summary_rows(result, turns):
        lines += [Text(label, style="bold"), Padding(Text(value), (0, 0, 0, 2))]
    return Group(*lines)


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
        *ttl_rows(usage),
        ("output tokens", fmt_int(usage.output_tokens)),
    ]
    peak = peak_prompt(turns)
    if peak is not None:
        rows.append(("peak prompt", f"{fmt_int(peak.usage.prompt_tokens)} (turn {peak.turn})"))
    rows += [
        *edit_rows(totals, turns),
        ("cache hit ratio", f"{fmt_ratio(usage.cache_hit_ratio)}  {RATIO_FORMULA}"),
        ("estimated cost", fmt_cost(totals.cost_usd)),
    ]
    rows.extend(server_tool_rows(usage))
    checkpoint = checkpoint_text(turns)
    if checkpoint is not None:
        rows.append(("checkpoint", checkpoint))
    if usage.compactions:
        rows.append(("compactions", fmt_int(usage.compactions)))
    if totals.tool_failures:
        rows.append(("tool failures", failures_text(totals.tool_failures)))
    if totals.tool_denials:
        rows.append(("tool denials", denials_text(totals.tool_denials)))
    rows.append(("session", result.session))
    rows.append(("see it again", f"agentctl sessions show {result.session}"))
    return rows


def ttl_rows(usage: Usage) -> list[tuple[str, str]]:
    """The cache writes by TTL (`ttl_split`), when some had the 1-hour one."""
    split = ttl_split(usage)
    return [("cache write by TTL", f"5m {split[0]}, 1h {split[1]}")] if split else []


def server_tool_rows(usage: Usage) -> list[tuple[str, str]]:
    """Server tool requests of the run (only when there were any); searches are billed."""
    rows = []
    if usage.web_search_requests:
        count = fmt_int(usage.web_search_requests)
        rows.append(("web searches", f"{count} (billed per search, in the cost)"))
    if usage.web_fetch_requests:
        rows.append(("web fetches", f"{fmt_int(usage.web_fetch_requests)} (tokens only)"))
    return rows


def edit_rows(totals: Totals, turns: Sequence[TurnEvent]) -> list[tuple[str, str]]:
    """Two figures that are easy to confuse: tokens spared per turn, summed; blocks cleared."""
    edited = edited_turns(turns)
    spared = f"{fmt_int(totals.cleared_input_tokens)} prompt tokens"
    if edited:
        word = "turn" if edited == 1 else "turns"
        spared += f", summed over {edited} {word} (at most {fmt_int(most_spared(turns))} in one)"
    cleared = f"{fmt_int(distinct_results_cleared(turns))} distinct tool results"
    thinking = distinct_thinking_cleared(turns)
    if thinking:
        cleared += f", {fmt_int(thinking)} thinking turns"
    return [("spared by editing", spared), ("cleared", cleared)]
