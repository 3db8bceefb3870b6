"""Pick the renderer for a run from the flags and the terminal: live, plain, quiet, NDJSON."""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console

from agentctl.render.base import MultiRenderer, Renderer
from agentctl.render.format import isatty
from agentctl.render.live import LiveRenderer
from agentctl.render.ndjson import NdjsonWriter
from agentctl.render.plain import PlainRenderer
from agentctl.render.table import MIN_WIDTH


def make_renderer(
    *,
    json_mode: bool,
    quiet: bool,
    stdout: TextIO,
    stderr: TextIO,
    is_tty: bool | None = None,
    no_color: bool | None = None,
    stream: bool = False,
) -> Renderer:
    """stderr: live table on a TTY, plain lines otherwise, errors only when quiet; NDJSON on stdout.

    `is_tty` None asks `stderr.isatty()`; `no_color` None reads NO_COLOR (any non-empty value);
    `stream`: the answer streams to stdout (`--stream`).
    """
    # A dumb terminal cannot move the cursor: treat it as no terminal.
    tty = isatty(stderr) and os.environ.get("TERM") != "dumb" if is_tty is None else is_tty
    color = not (bool(os.environ.get("NO_COLOR")) if no_color is None else no_color)
    side: Renderer
    console = make_console(stderr, no_color=not color) if tty else None
    # Below MIN_WIDTH no table layout fits without cutting: plain lines, which the terminal
    # wraps whole.
    narrow = console is not None and console.width < MIN_WIDTH
    # NDJSON or a streamed answer written to the same terminal would tear a live display too.
    shared = (json_mode or stream) and isatty(stdout)
    if quiet or console is None or narrow or shared:
        side = PlainRenderer(stderr, quiet=quiet, color=tty and color)
    else:
        side = LiveRenderer(console)
    return MultiRenderer((NdjsonWriter(stdout), side)) if json_mode else side


def make_console(stream: TextIO, *, no_color: bool) -> Console:
    """A terminal Console on `stream`; without colour it emits no style codes at all."""
    return Console(
        file=stream,
        force_terminal=True,
        no_color=no_color,
        color_system=None if no_color else "auto",
        highlight=False,
    )
