"""render/stream.py (`--stream`): text deltas to stdout once, turns apart, escapes on a TTY."""

from __future__ import annotations

import io

from agentctl.render.factory import make_renderer
from agentctl.render.live import LiveRenderer
from agentctl.render.plain import PlainRenderer
from agentctl.render.stream import AnswerStream
from agentctl.types import ProgressEvent


def text(turn: int, delta: str, at: int) -> ProgressEvent:
    return ProgressEvent(turn, "text", at + len(delta), text=delta, at=at)


def streamed(*events: ProgressEvent, tty: bool = False) -> str:
    out = io.StringIO()
    stream = AnswerStream(out, is_tty=tty)
    for event in events:
        stream.handle(event)
    stream.close()
    stream.close()  # idempotent: MultiRenderer may close twice after an error
    return out.getvalue()


def test_turns_start_on_their_own_line_a_blank_line_apart() -> None:
    events = (text(1, "Looking.", 0), text(2, "Done", 0), text(2, ".\n", 4))
    assert streamed(*events) == "Looking.\n\nDone.\n"


def test_a_retried_request_is_not_written_twice() -> None:
    events = (text(1, "abc", 0), text(1, "def", 3), text(1, "abcd", 0), text(1, "efgh", 4))
    assert streamed(*events) == "abcdefgh\n"


def test_other_progress_and_empty_deltas_write_nothing() -> None:
    events = (
        ProgressEvent(1, "thinking", 400),
        ProgressEvent(1, "tool_input", 10, "memory"),
        text(1, "", 0),
    )
    assert streamed(*events) == ""


def test_control_characters_are_escaped_on_a_terminal_only() -> None:
    event = text(1, "red \x1b[31mtext\x1b[0m", 0)
    assert streamed(event, tty=True) == "red \\x1b[31mtext\\x1b[0m\n"
    assert streamed(event, tty=False) == "red \x1b[31mtext\x1b[0m\n"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_streamed_answer_on_the_terminal_gets_plain_lines_on_stderr() -> None:
    def side(stream: bool) -> object:
        return make_renderer(
            json_mode=False, quiet=False, stdout=Tty(), stderr=Tty(), is_tty=True, stream=stream
        )

    assert isinstance(side(stream=True), PlainRenderer)
    assert isinstance(side(stream=False), LiveRenderer)
