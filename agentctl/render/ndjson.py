"""`--json`: one JSON object per event on stdout, flushed at once, so pipelines see turns live."""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

from agentctl.errors import ClosedPipeError
from agentctl.redact import redact
from agentctl.render.base import write_or_stop
from agentctl.types import Event, ProgressEvent


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
            write_or_stop(self._stream, line + "\n", "stdout")
        except ClosedPipeError:
            self._broken = True
            raise

    def close(self) -> None:
        self._broken = True
