"""Lines agentctl prints itself (notes, warnings, errors), outside Rich.

On a terminal they are wrapped at spaces to its width, continuations indented two spaces, so
that the terminal does not cut a word (or a path) in two; piped or in a file each message
stays one line, for grep and for programs.
"""

from __future__ import annotations

import os
import textwrap
from typing import TextIO

INDENT = "  "
MIN_WIDTH = 20  # narrower than this, wrapping helps no one: the terminal wraps


def terminal_width(stream: TextIO) -> int | None:
    """Columns of the terminal `stream` writes to (COLUMNS first, as Rich); None if none."""
    try:
        if not stream.isatty():
            return None
        columns = os.environ.get("COLUMNS", "")
        return int(columns) if columns.isdigit() else os.get_terminal_size(stream.fileno())[0]
    except (AttributeError, OSError, ValueError):
        return None


def for_terminal(text: str, stream: TextIO) -> str:
    """`text` as it should reach `stream`: each line wrapped at spaces on a terminal."""
    width = terminal_width(stream)
    if width is None or width < MIN_WIDTH:
        return text
    wrapper = textwrap.TextWrapper(
        width=width,
        subsequent_indent=INDENT,
        break_long_words=False,  # a path longer than the line stays whole
        break_on_hyphens=False,
        replace_whitespace=False,
        drop_whitespace=True,
    )
    out = []
    for line in text.split("\n"):
        lead = line[: len(line) - len(line.lstrip(" "))]
        wrapper.initial_indent, wrapper.subsequent_indent = lead, lead + INDENT
        out.append("\n".join(wrapper.wrap(line.lstrip(" "))) if line.strip() else line)
    return "\n".join(out)


def say(text: str, stream: TextIO, *, flush: bool = False) -> None:
    """Print one of agentctl's own lines to `stream`, wrapped for a terminal."""
    print(for_terminal(text, stream), file=stream, flush=flush)
