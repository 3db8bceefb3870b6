"""TTY stderr: a live Rich table that grows a row per turn, a status line while a turn streams."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from agentctl.context.edits import trigger_from
from agentctl.render.format import CHECKPOINT_LEGEND, fmt_elapsed, fmt_progress, fmt_waiting
from agentctl.render.plain import format_error_line
from agentctl.render.safe import safe_text, visible
from agentctl.render.table import (
    LAYOUTS,
    TABLE_LEGEND,
    TableLayout,
    choose_layout,
    summary_view,
    turn_table,
)
from agentctl.types import (
    ErrorEvent,
    Event,
    ProgressEvent,
    ResultEvent,
    StartEvent,
    TurnEvent,
)

HEADER_LINES = 3  # two header lines and the rule under them
STATUS_LINES = 2  # the status line, and one spare so the live region never touches the top


class TurnTableView:
    """The turn table in `layout` (None: the one that fits the width it is drawn at).

    With `fit_screen`, a table taller than the terminal keeps its header and its newest rows
    (Rich's Live cannot redraw what has scrolled off); the full table is printed at the end.
    """

    def __init__(
        self,
        turns: Sequence[TurnEvent],
        trigger: int | None,
        *,
        fit_screen: bool = False,
        layout: TableLayout | None = None,
    ) -> None:
        self.turns = turns
        self.trigger = trigger
        self.fit_screen = fit_screen
        self.layout = layout
        # Live redraws several times a second; the lines only change when a turn is added.
        self._cache: tuple[tuple[int, int, int, int | None], list[list[Segment]]] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.fit_screen:
            yield self._table(self.turns, options.max_width)
            return
        key = (len(self.turns), options.max_width, options.size.height, self.trigger)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._screen_lines(console, options))
        for line in self._cache[1]:
            yield from line
            yield Segment.line()

    def _screen_lines(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        room = max(options.size.height - STATUS_LINES, HEADER_LINES + 2)
        # Every row takes a line at least, so older turns cannot reach the screen anyway.
        shown = self.turns[-room:]
        lines = console.render_lines(self._table(shown, options.max_width), options, pad=False)
        if len(lines) <= room and len(shown) == len(self.turns):
            return lines
        note = Text("… earlier turns (the full table follows at the end)", style="dim")
        kept = lines[HEADER_LINES:][-(room - HEADER_LINES - 1) :]
        while len(kept) > 1 and _continues_row(kept[0]):
            kept = kept[1:]
        return [*lines[:HEADER_LINES], *console.render_lines(note, options), *kept]

    def _table(self, turns: Sequence[TurnEvent], width: int) -> RenderableType:
        layout = self.layout
        if layout is not None and not layout.fits(width, trigger=self.trigger is not None):
            layout = None  # the terminal shrank since the start: fit the new width
        return turn_table(turns, trigger=self.trigger, width=width, layout=layout)


def _continues_row(line: list[Segment]) -> bool:
    """A wrapped row's second line: its turn cell (the first 4 columns) is blank."""
    return not "".join(segment.text for segment in line)[:4].strip()


class StatusLine:
    """The line under the table: what the current turn is doing, and for how long it has run."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.text = ""
        self.turn = 0
        self.since = clock()

    def set(self, turn: int, text: str) -> None:
        if turn != self.turn:
            self.turn, self.since = turn, self._clock()
        self.text = visible(text, keep="")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        elapsed = fmt_elapsed(self._clock() - self.since)
        yield Text(f"{self.text} · {elapsed}", style="cyan", end="")


class LiveRenderer:
    """Draws on a terminal Console; `close()` stops the display and leaves the table in place."""

    def __init__(
        self,
        console: Console,
        *,
        refresh_per_second: float = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._console = console
        self._refresh = refresh_per_second
        self._turns: list[TurnEvent] = []
        self._view = TurnTableView(self._turns, None, fit_screen=True)
        self._live: Live | None = None
        self._status = StatusLine(clock)
        self._busy = False  # whether a turn is running (the status line shows)
        # One spinner for the run, so its animation does not restart with every update.
        self._spinner = Spinner("dots", text=self._status)
        self._closed = False
        self._paused = False  # a question is open on the terminal: draw nothing

    def handle(self, event: Event) -> None:
        if self._closed:
            return
        if isinstance(event, ProgressEvent):
            # Streams can report often: let the auto refresh (8/s) draw these, when it runs.
            self._show(event.turn, fmt_progress(event), force=self._refresh <= 0)
        elif isinstance(event, TurnEvent):
            self._turns.append(event)
            # Redrawn by the auto refresh, at most `refresh_per_second` times a second
            # however fast turns come (a table drawn per turn cost more than the turn).
            force = self._refresh <= 0
            # Only tool_use, pause_turn and compaction lead to another request.
            if event.stop_reason in ("tool_use", "pause_turn", "compaction"):
                self._show(event.turn + 1, fmt_waiting(event.turn + 1), force=force)
            else:
                self._show(None, "", force=force)
        elif isinstance(event, StartEvent):
            self._on_start(event)
        elif isinstance(event, ResultEvent):
            self._on_result(event)
        elif isinstance(event, ErrorEvent):
            # Errors come last (before a non-zero exit): the table above, the error under it.
            self._stop_live()
            self._console.print(safe_text(format_error_line(event), "bold red", keep=""))

    def close(self) -> None:
        """Stop the live display and leave the whole table on screen; idempotent."""
        if not self._closed:
            self._closed = True
            self._stop_live()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The live region cleared for the block (a question on the terminal), then redrawn."""
        live, self._live = self._live, None
        self._paused = True
        if live is not None:
            live.stop()
        try:
            yield
        finally:
            self._paused = False
            if live is not None and not self._closed:
                self._live = self._start_live()
                self._live.update(self._renderable(), refresh=True)

    def renderable(self) -> RenderableType:
        """What the live display shows now (the table and, while a turn runs, the status line)."""
        return self._renderable()

    def _on_start(self, event: StartEvent) -> None:
        # The run's own setting; a start event built by hand carries only the request's field.
        trigger = event.trigger or trigger_from(event.context_management)
        self._view.trigger = trigger
        # Chosen once, from the width: the header never changes while the run goes.
        fits = choose_layout(self._console.width, trigger=trigger is not None)
        self._view.layout = fits or LAYOUTS[-1]
        header = f"session {event.session} · {event.model} · profile {event.profile}"
        self._console.print(safe_text(header, "dim", keep=""))
        self._show(1, fmt_waiting(1))

    def _on_result(self, event: ResultEvent) -> None:
        self._stop_live()
        if any(turn.applied_edits for turn in self._turns):
            self._console.print(Text(TABLE_LEGEND, style="dim"))
        if any(turn.checkpoint for turn in self._turns):
            self._console.print(Text(CHECKPOINT_LEGEND, style="dim"))
        self._console.print()
        self._console.print(summary_view(event, self._turns, self._console.width))

    def _show(self, turn: int | None, status: str, *, force: bool = True) -> None:
        """Status `status` for turn `turn`; turn None: no turn running, no status line."""
        self._busy = turn is not None
        if turn is not None:
            self._status.set(turn, status)
        if self._paused:
            return  # drawn when the question is answered
        if self._live is None:
            self._live = self._start_live()
        self._live.update(self._renderable(), refresh=force)

    def _start_live(self) -> Live:
        live = Live(
            console=self._console,
            # Transient, because _stop_live() prints the whole table once the region is gone:
            # while live, a long run shows only its newest rows.
            transient=True,
            auto_refresh=self._refresh > 0,
            refresh_per_second=self._refresh or 4,
            # stdout carries the answer or NDJSON: never capture it. Stray stderr writes
            # (warnings, tracebacks) are printed above the table instead of tearing it.
            redirect_stdout=False,
            redirect_stderr=True,
        )
        live.start()
        return live

    def _stop_live(self) -> None:
        self._busy = False
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()
            if self._turns:  # an empty table (a run that failed at once) says nothing
                view = TurnTableView(self._turns, self._view.trigger, layout=self._view.layout)
                self._console.print(view)

    def _renderable(self) -> RenderableType:
        return Group(self._view, self._spinner) if self._busy else self._view
