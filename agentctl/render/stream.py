"""`agentctl run --stream`: the model's text on stdout as it arrives, each character once."""

from __future__ import annotations

from typing import TextIO

from agentctl.render.base import write_or_stop
from agentctl.render.format import isatty
from agentctl.render.safe import visible
from agentctl.types import Event, ProgressEvent, TurnEvent


class AnswerStream:
    """A Renderer writing the text deltas of every turn to `stdout` as they arrive.

    Each turn's text starts on a line of its own, a blank line after the previous turn's, and
    ends its line when the turn ends (a terminal shared with stderr's rows stays legible). A
    request that is retried streams its text from the start again: what was written already
    (by offset in the turn's text) is not written twice. On a terminal, control characters
    are shown as escapes (`render.safe.visible`); a pipe gets the text as the model wrote it.
    """

    def __init__(self, stdout: TextIO, *, is_tty: bool | None = None) -> None:
        self._out = stdout
        self._tty = isatty(stdout) if is_tty is None else is_tty
        self._turn: int | None = None
        self._written = 0  # characters of the current turn's text written
        self._last = ""  # the last character written ("" before any)

    def handle(self, event: Event) -> None:
        if isinstance(event, TurnEvent):
            self.close()  # the turn's text ends its line before stderr's row of the turn
            return
        if not isinstance(event, ProgressEvent) or event.kind != "text" or not event.text:
            return
        if event.turn != self._turn:
            if self._last:
                self._write("\n" if self._last == "\n" else "\n\n")
            self._turn, self._written = event.turn, 0
        skip = self._written - event.at
        if skip >= len(event.text):
            return  # a retried request sending again what was written
        self._write(event.text[max(skip, 0) :])
        self._written = event.at + len(event.text)

    def close(self) -> None:
        """End the text with a newline (idempotent)."""
        if self._last and self._last != "\n":
            self._write("\n")

    def _write(self, text: str) -> None:
        write_or_stop(self._out, visible(text) if self._tty else text, "stdout")
        self._last = text[-1]
