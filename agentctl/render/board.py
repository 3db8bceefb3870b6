"""TTY stderr for a batch: finished tasks scroll above one live line (done, running, failed,
tokens, cost, ETA). It knows counts, not batch events: the command feeds it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rich.console import Console
from rich.live import Live
from rich.text import Text

from agentctl.render.format import fmt_cost, fmt_elapsed, fmt_int
from agentctl.render.safe import safe_text
from agentctl.types import Totals


@dataclass
class BoardState:
    """What the live line shows; `before` tasks had finished when this invocation started."""

    total: int
    before: int = 0
    done: int = 0
    running: int = 0
    failed: int = 0
    totals: Totals = field(default_factory=Totals)  # the finished tasks' (no price: $0)

    def finished(self, totals: Totals, *, failed: bool) -> None:
        """A task ended, its result line's `totals` added (its cost when it has a price: the
        summary's total adds those alone too)."""
        self.running, self.done = self.running - 1, self.done + 1
        self.failed += failed
        self.totals += replace(totals, cost_usd=totals.known_cost or 0.0)


def status_text(state: BoardState, elapsed: float) -> str:
    """`12/40 done · 4 running · 1 failed · 123,456 tokens · $0.4321 · ETA 1m05s`."""
    finished = state.before + state.done
    parts = [f"{finished}/{state.total} done", f"{state.running} running"]
    parts += [f"{state.failed} failed"] if state.failed else []
    parts += [f"{fmt_int(state.totals.usage.tokens)} tokens", fmt_cost(state.totals.cost_usd)]
    left = state.total - finished
    if state.done and left:
        parts.append(f"ETA {fmt_elapsed(elapsed / state.done * left)}")
    return " · ".join(parts)


class Board:
    """A Rich Live region on `console` holding the status line; `line` prints above it."""

    def __init__(
        self, console: Console, state: BoardState, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.state, self._clock = state, clock
        self._started = clock()
        self._live = Live(
            self,
            console=console,
            transient=True,
            refresh_per_second=4,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def __rich__(self) -> Text:
        return Text(status_text(self.state, self._clock() - self._started), style="dim")

    def start(self) -> None:
        self._live.start()

    def line(self, text: str) -> None:
        self._live.console.print(safe_text(text, keep=""))
        self._live.refresh()

    def close(self) -> None:
        self._live.stop()
