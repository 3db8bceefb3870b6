"""The prompt-size chart of `agentctl stats`: one stacked bar per turn, drawn with Rich text.

Each bar is as long as the prompt the client sent (unedited); its parts, left to right: what
the model read from cache, the rest of what it saw after edits, and what editing cleared.
A tick marks the clear_tool_uses trigger; a scissors mark turns where an edit applied.
Pure: rows in (`sessions.chart_rows`), a Rich renderable out (the CLI prints it and exports
it to SVG).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentctl.errors import UsageError
from agentctl.render.format import fmt_compact, fmt_int
from agentctl.render.safe import safe_text
from agentctl.sessions.chart_rows import ChartRow

READ, SEEN, CLEARED, EMPTY, TICK = "█", "▓", "░", " ", "┊"
STYLES = {READ: "green", SEEN: "blue", CLEARED: "red", TICK: "yellow"}
EDIT_MARK = "✂"
NEW_EDIT_MARK = "✂ new"


def bar(row: ChartRow, scale: float, width: int, trigger_at: int | None) -> Text:
    """One stacked bar `width` cells wide; `scale` tokens per cell."""
    cells = [EMPTY] * width
    parts = ((READ, row.read), (SEEN, row.seen), (CLEARED, row.sent))
    start = 0
    for glyph, upto in parts:
        end = min(width, round(upto / scale)) if scale else 0
        for i in range(start, end):
            cells[i] = glyph
        start = max(start, end)
    if trigger_at is not None and 0 <= trigger_at < width and cells[trigger_at] == EMPTY:
        cells[trigger_at] = TICK
    text = Text()
    for glyph in cells:
        text.append(glyph, style=STYLES.get(glyph, ""))
    return text


def prompt_chart(
    rows: Sequence[ChartRow], *, width: int = 100, trigger: int | None = None, title: str = ""
) -> RenderableType:
    """The chart for a console `width` columns wide (at least 60)."""
    bar_width = max(width - 42, 18)
    peak = max((r.sent for r in rows), default=0)
    top = max(peak, trigger or 0) if trigger and trigger <= peak * 1.5 else peak
    scale = top / bar_width if top else 0.0
    trigger_at = round(trigger / scale) if trigger and scale and trigger <= top else None
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column(f"prompt tokens, 0 .. {fmt_int(top)}", no_wrap=True, width=bar_width)
    table.add_column("seen", justify="right", no_wrap=True)
    table.add_column("sent", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    for row in rows:
        mark = NEW_EDIT_MARK if row.new_clearing else EDIT_MARK if row.edited else ""
        sent = fmt_compact(row.sent) if row.sent != row.seen else ""
        cells = (str(row.turn), bar(row, scale, bar_width, trigger_at), fmt_compact(row.seen))
        table.add_row(*cells, sent, mark)
    heading = safe_text(title, "bold", keep="")  # names the recorded model
    return Group(heading, table, legend(trigger_at is not None))


def legend(with_trigger: bool) -> Text:
    """What the glyphs mean."""
    text = Text()
    for glyph, meaning in (
        (READ, "read from cache"),
        (SEEN, "rest of what the model saw"),
        (CLEARED, "cleared by editing (sent, not seen)"),
    ):
        text.append(glyph, style=STYLES[glyph]).append(f" {meaning}   ")
    if with_trigger:
        text.append(TICK, style=STYLES[TICK]).append(" trigger   ")
    return text.append(f"{EDIT_MARK} an edit applied")


def svg_format() -> str:
    """Rich's SVG template without its web fonts: a chart must not fetch anything when opened
    (offline viewers, mail clients). Locally installed Fira Code, else any monospace font."""
    from rich._export_format import CONSOLE_SVG_FORMAT

    return re.sub(r",\s*url\([^)]*\) format\([^)]*\)", "", CONSOLE_SVG_FORMAT)


def save_svg(parts: Sequence[RenderableType], width: int, path: Path) -> None:
    """Render `parts` into an SVG image, in colour whatever NO_COLOR says (a file for reports,
    not terminal output)."""
    console = Console(
        file=io.StringIO(), width=width, record=True, color_system="truecolor", no_color=False
    )
    for part in parts:
        console.print(part)
    try:
        console.save_svg(str(path), title="agentctl stats", code_format=svg_format())
    except OSError as err:
        raise UsageError(f"{path}: cannot write: {err.strerror or err}") from None
