"""NDJSON on stdout: one parseable line per event, flushed as it happens, through a real pipe."""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace

import pytest
from render_samples import RESULT, START, TURN2, TURNS, totals

from agentctl.errors import ClosedPipeError
from agentctl.render import make_renderer
from agentctl.render.base import MultiRenderer
from agentctl.render.ndjson import NdjsonWriter
from agentctl.types import ErrorEvent, Event, ProgressEvent


class FlushRecorder(io.StringIO):
    """Records, at each flush, how much text had been written: proves line-by-line flushing."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed_at: list[int] = []

    def flush(self) -> None:
        self.flushed_at.append(len(self.getvalue()))
        super().flush()


def test_each_event_is_one_flushed_line() -> None:
    out = FlushRecorder()
    writer = NdjsonWriter(out)
    events: list[Event] = [START, ProgressEvent(1, "text", 10), *TURNS, RESULT]
    for event in events:
        writer.handle(event)
    lines = out.getvalue().splitlines()
    assert [json.loads(line)["event"] for line in lines] == [
        "start",
        "turn",
        "turn",
        "turn",
        "result",
    ]
    ends = [sum(len(line) + 1 for line in lines[: i + 1]) for i in range(len(lines))]
    assert out.flushed_at == ends  # a flush right after every line, none for progress


def test_lines_carry_the_event_fields() -> None:
    out = io.StringIO()
    NdjsonWriter(out).handle(TURN2)
    record = json.loads(out.getvalue())
    assert record["applied_edits"] == [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 4100}
    ]
    assert record["memory_ops"] == [
        {"command": "str_replace", "path": "/memories/notes.md", "ok": False}
    ]
    assert record["usage"]["cache_read_input_tokens"] == 8000


def test_json_mode_through_a_pipe_reads_lines_as_they_come() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd) as reader, os.fdopen(write_fd, "w") as writer:
        renderer = make_renderer(json_mode=True, quiet=True, stdout=writer, stderr=io.StringIO())
        renderer.handle(START)
        # Readable before anything else is written or closed: the line was flushed.
        assert json.loads(reader.readline())["session"] == START.session
        renderer.handle(ErrorEvent("api", "boom"))
        assert json.loads(reader.readline()) == {"event": "error", "kind": "api", "message": "boom"}
        renderer.close()


def test_json_mode_keeps_stderr_lines_unless_quiet() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = make_renderer(json_mode=True, quiet=False, stdout=out, stderr=err, is_tty=False)
    renderer.handle(TURN2)
    renderer.close()
    assert json.loads(out.getvalue())["turn"] == 2
    assert err.getvalue().startswith("turn 2  tool_use  in=18,000")
    assert RESULT.text not in out.getvalue()


class BrokenPipe(io.StringIO):
    """A stdout whose reader went away (`agentctl run --json | head -1`)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def write(self, text: str) -> int:
        self.attempts += 1
        raise BrokenPipeError


def test_broken_pipe_stops_the_run_once_and_never_writes_again() -> None:
    pipe = BrokenPipe()
    writer = NdjsonWriter(pipe)
    with pytest.raises(ClosedPipeError) as caught:
        writer.handle(START)
    assert caught.value.exit_code == 141 and caught.value.kind == "interrupted"
    writer.handle(ErrorEvent("interrupted", "stdout was closed"))  # the stop's own event
    assert pipe.attempts == 1  # no second try on the dead pipe


class FailingClose:
    def __init__(self) -> None:
        self.closed = 0

    def handle(self, event: object) -> None:
        del event

    def close(self) -> None:
        self.closed += 1
        raise RuntimeError("close failed")


def test_multi_closes_all_and_reraises_first_error() -> None:
    first, second = FailingClose(), FailingClose()
    multi = MultiRenderer([first, second])
    try:
        multi.close()
    except RuntimeError as err:
        assert str(err) == "close failed"
    else:
        raise AssertionError("close error was swallowed")
    assert (first.closed, second.closed) == (1, 1)


def test_unknown_cost_is_null_not_nan() -> None:
    out = io.StringIO()
    NdjsonWriter(out).handle(replace(RESULT, totals=totals(float("nan"))))
    assert "NaN" not in out.getvalue()
    assert json.loads(out.getvalue())["totals"]["cost_usd"] is None


def test_broken_real_pipe_is_silenced_for_the_exit_flush() -> None:
    read_fd, write_fd = os.pipe()
    os.close(read_fd)  # the reader went away (`| head -1` after its line)
    stream = os.fdopen(write_fd, "w")
    writer = NdjsonWriter(stream)
    with pytest.raises(ClosedPipeError):
        writer.handle(START)
    stream.write("more\n")
    stream.close()  # would raise BrokenPipeError had the descriptor not been redirected
    assert stream.closed
