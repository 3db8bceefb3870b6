"""Bounded reading and matching for the workspace tools: capped lines, a regex time budget.

A workspace is someone else's data: a 3 GB file (or one 3 GB line) and a pattern that
backtracks for hours must both cost a bounded amount of memory and time, and Ctrl-C must
still stop a search. Files are read line by line with a cap on what one line may hold;
patterns run on the `regex` engine, which takes a timeout and checks for signals while it
backtracks (the stdlib `re` does neither).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from agentctl.errors import ToolError

LINE_BYTES = 64 * 1024  # what one line may hold; the rest of a longer line is skipped
CHUNK_BYTES = 1 << 20  # how much of a skipped line is read at once
CUT_MARK = " [line cut at {:,} bytes]"


class LineReader:
    """The lines of a binary file as text, each cut at LINE_BYTES; reads only what is asked."""

    def __init__(self, handle: IO[bytes], line_bytes: int = LINE_BYTES) -> None:
        self._handle = handle
        self._line_bytes = line_bytes
        self._unfinished = False  # the last line yielded was cut: its rest is still unread
        self.cut = False  # whether the last line yielded was cut

    def __iter__(self) -> Iterator[str]:
        while True:
            if self._unfinished:
                self._skip_rest()
            raw = self._handle.readline(self._line_bytes)
            if not raw:
                return
            following = b"" if raw.endswith(b"\n") else self._peek()
            self._unfinished = bool(following)
            self.cut = following not in (b"", b"\n")
            yield raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", errors="replace")

    def more(self) -> bool:
        """Whether anything follows the lines yielded so far (without reading past it)."""
        return self._unfinished or bool(self._peek())

    def _peek(self) -> bytes:
        """The next byte, left unread (b"" at the end of the file)."""
        peek: Callable[[int], bytes] | None = getattr(self._handle, "peek", None)
        return peek(1)[:1] if peek is not None else b""

    def _skip_rest(self) -> None:
        """Read on to the end of the current line, a chunk at a time, keeping nothing."""
        self._unfinished = False
        while chunk := self._handle.readline(CHUNK_BYTES):
            if chunk.endswith(b"\n"):
                return


def shown_line(line: str, reader: LineReader) -> str:
    """`line`, with a note when the reader cut it."""
    return line + CUT_MARK.format(LINE_BYTES) if reader.cut else line


class BoundedPattern:
    """A compiled pattern whose searches share one time budget; past it, a ToolError."""

    def __init__(self, pattern: str, budget_s: float) -> None:
        import regex  # only the search tool needs it

        try:
            self._compiled: Any = regex.compile(pattern)
        except (regex.error, ValueError, OverflowError) as err:
            raise ToolError(f"Error: bad regular expression: {err}") from None
        self._budget_s = budget_s
        self._spent = 0.0

    def search(self, text: str) -> bool:
        """Whether `text` matches; ToolError once the searches together pass the budget."""
        left = self._budget_s - self._spent
        started = time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            return self._compiled.search(text, timeout=left) is not None
        except TimeoutError:
            raise ToolError(
                f"Error: the pattern took more than {self._budget_s:g} s to match and was "
                "stopped; use a simpler pattern (no nested repeats such as (a+)+)"
            ) from None
        finally:
            self._spent += time.monotonic() - started
