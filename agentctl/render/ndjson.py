"""`--json`: one JSON object per event on stdout, flushed at once, so pipelines see turns live."""

from __future__ import annotations

import json
import math
import os
from typing import Any, TextIO

from agentctl.errors import ClosedPipeError
from agentctl.redact import redact
from agentctl.render.base import MultiRenderer, Renderer
from agentctl.types import Event, ProgressEvent

# Renderer and MultiRenderer lived here first; agentctl.cli.run imports Renderer from here.
__all__ = ["MultiRenderer", "NdjsonWriter", "Renderer", "event_line", "finite", "silence"]


def event_line(event: Event) -> str | None:
    """The NDJSON line of an event (no newline), or None for events that are not written."""
    if isinstance(event, ProgressEvent):
        return None
    return redact(json.dumps(finite(event.to_json()), allow_nan=False))


def finite(value: Any) -> Any:
    """NaN / infinity (the loop's "unknown price" cost) become null: JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite(item) for item in value]
    return value


class NdjsonWriter:
    """Writes `event_line` + newline and flushes; a closed pipe stops the run (ClosedPipeError)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._broken = False

    def handle(self, event: Event) -> None:
        line = event_line(event)
        if line is None or self._broken:
            return
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except BrokenPipeError:
            # `agentctl run --json | head -2`: nobody reads the events any more, and every
            # further turn costs money: stop the run (it is recorded as interrupted).
            self._broken = True
            silence(self._stream)
            raise ClosedPipeError("stdout was closed by its reader; the run stopped") from None

    def close(self) -> None:
        self._broken = True


def silence(stream: TextIO) -> None:
    """Point the dead pipe's descriptor at /dev/null, so the flush at exit cannot fail again.

    This is what the Python docs advise for SIGPIPE; file-likes without a descriptor are left.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
