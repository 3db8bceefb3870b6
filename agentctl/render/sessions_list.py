"""The `sessions list` table, and the plain table helpers the sessions views share.

Light on purpose: `sessions list` draws it without loading the replay code of
render.sessions_view.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentctl.render.format import fmt_compact, fmt_cost, fmt_int
from agentctl.render.safe import safe_text, visible

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from agentctl.sessions.list_row import SessionSummary

# Lazy imports: Rich's table loads when a table is drawn; a piped listing whose cells all fit
# is laid out without it (`sessions_text`).

PAD = (0, 0, 0, 1)  # two spaces between columns (SIMPLE_HEAD draws one)


def cell_len(text: str) -> int:
    """Rich's `cell_len`, without loading Rich's Unicode tables for printable ASCII (one
    cell a character), the usual listing."""
    if text.isascii() and text.isprintable():
        return len(text)
    from rich.cells import cell_len as cells

    return cells(text)


def add_row(table: Table, *cells: str | Text, flex: int | None = None) -> None:
    """add_row, and keep every column but `flex` at least as wide as its widest cell, so
    Rich shrinks only the flexible column (a task name, a settings label) on narrow screens.
    A `str` cell may come from a transcript (a task name, a model): it is never markup."""
    from rich.text import Text

    texts = [cell if isinstance(cell, Text) else safe_text(cell, keep="") for cell in cells]
    table.add_row(*texts)
    for index, (column, text) in enumerate(zip(table.columns, texts, strict=False)):
        if index != flex:
            column.min_width = max(column.min_width or 0, text.cell_len)


def plain_table(*columns: str, title: str = "") -> Table:
    from rich import box
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left", padding=PAD
    )
    table.title = safe_text(title, keep="") if title else None  # a title may name a file
    for index, name in enumerate(columns):  # a header may name a profile file
        header = safe_text(name)
        table.add_column(header, justify="left" if index == 0 else "right", no_wrap=True)
    return table


def sessions_table(rows: Sequence[SessionSummary], width: int | None = None) -> Table:
    """`sessions list`: the rows in the order given (the CLI: newest first); one line a
    session. Under 100 columns without the date and with shorter model names and token counts;
    where it is still too narrow the model goes, then the task (cut with `…` first), so the
    figures are never cut."""
    narrow = width is not None and width < 100
    names = _columns(rows, narrow)
    cells = [_session_cells(row, narrow) for row in rows]
    names, room = _fit(names, cells, width)
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=PAD)
    for name in names:
        right = name in _RIGHT
        limit = room if name == "task" else None
        table.add_column(
            name,
            no_wrap=True,
            overflow="ellipsis",
            max_width=limit,
            justify="right" if right else "left",
        )
    for row_cells in cells:
        add_row(table, *(row_cells[name] for name in names), flex=None)
    return table


def sessions_text(rows: Sequence[SessionSummary], width: int) -> str | None:
    """`sessions_table(rows, width)` as the plain text a pipe gets (lines without trailing
    spaces), laid out without Rich when no cell has to be cut (10,000 rows in a fraction of
    the time); None when something must be cut (Rich draws it then)."""
    narrow = width < 100
    names = _columns(rows, narrow)
    cells = [
        {k: visible(v, keep="") for k, v in _session_cells(row, narrow).items()} for row in rows
    ]
    kept, room = _fit(list(names), cells, width)
    widths = {n: max([cell_len(n)] + [cell_len(c[n]) for c in cells]) for n in names}
    if kept != names or (room is not None and room < widths["task"]):
        return None
    lines = [_line(dict(zip(names, names, strict=True)), names, widths)]
    lines.append("─" * (sum(widths.values()) + 2 * (len(names) - 1)))
    lines += [_line(c, names, widths) for c in cells]
    return "".join(line.rstrip() + "\n" for line in lines)


def _columns(rows: Sequence[SessionSummary], narrow: bool) -> list[str]:
    names = ["session", "task", "model", "turns", "status", "tokens", "cost"]
    if not narrow:
        names.insert(1, "UTC")
    if any(row.lineage for row in rows):  # forks: where each came from
        names.insert(names.index("status") + 1, "from")
    return names


def _line(cells: dict[str, str], names: list[str], widths: dict[str, int]) -> str:
    out = []
    for name in names:
        pad = " " * (widths[name] - cell_len(cells[name]))
        out.append(pad + cells[name] if name in _RIGHT else cells[name] + pad)
    return "  ".join(out)


_RIGHT = ("turns", "tokens", "cost")


def _session_cells(row: SessionSummary, narrow: bool) -> dict[str, str]:
    """One `sessions list` row by column name (narrow: short model names and token counts)."""
    tokens = row.prompt_tokens
    return {
        "session": row.id,
        "UTC": time.strftime("%m-%d %H:%M", time.gmtime(row.started)),
        "task": row.task,
        "model": row.model.removeprefix("claude-") if narrow else row.model,
        "turns": str(row.turns),
        "status": row.status,
        "tokens": fmt_compact(tokens) if narrow else fmt_int(tokens),
        "cost": fmt_cost(row.cost_usd),
        "from": row.lineage,
    }


# What gives way on a narrow terminal, first to last: a figure is never cut.
# The model goes before the task: the task tells sessions apart, the model rarely does.
DROP_ORDER = ("model", "from", "task", "status", "turns")
TASK_MIN = 8


def _fit(
    names: list[str], cells: list[dict[str, str]], width: int | None
) -> tuple[list[str], int | None]:
    """The columns that fit `width` whole (dropping in DROP_ORDER) and the room the task
    column may take (None: no limit)."""
    if width is None:
        return names, None

    def widest(name: str) -> int:
        return max([cell_len(name)] + [cell_len(visible(c[name], keep="")) for c in cells])

    kept, room = list(names), 0
    for dropped in (None, *DROP_ORDER):
        if dropped is not None and dropped in kept:
            kept.remove(dropped)
        others = sum(widest(name) for name in kept if name != "task")
        room = width - others - 2 * (len(kept) - 1)
        if room >= (TASK_MIN if "task" in kept else 0):
            break
    return kept, room
