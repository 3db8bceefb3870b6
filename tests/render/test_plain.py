"""The non-TTY line format, exactly, and quiet mode."""

from __future__ import annotations

import io

from render_samples import RESULT, START, TURN1, TURN2, TURN3, TURNS

from agentctl.render.plain import PlainRenderer, format_turn_line
from agentctl.types import ErrorEvent, ProgressEvent


def test_turn_line_format_exact() -> None:
    assert format_turn_line(TURN1) == (
        "turn 1  tool_use  in=1,234 cache_read=0 cache_write=5,000 out=210  "
        "cleared: tool_uses=0 thinking=0 tokens=0  tools=memory:view,read_file*2"
    )
    assert format_turn_line(TURN2) == (
        "turn 2  tool_use  in=18,000 cache_read=8,000 cache_write=1,200 out=95  "
        "cleared: tool_uses=2 thinking=0 tokens=4,100  tools=memory:str_replace!"
    )
    assert format_turn_line(TURN3).endswith("tokens=0  tools=-")


def feed(renderer: PlainRenderer, *events: object) -> None:
    for event in events:
        renderer.handle(event)  # type: ignore[arg-type]
    renderer.close()


def test_plain_run_is_stable_ascii_lines() -> None:
    out = io.StringIO()
    progress = ProgressEvent(1, "thinking", 1200)
    feed(PlainRenderer(out), START, progress, *TURNS, RESULT)
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "start  session=20261130-074500-ab12 model=claude-sonnet-5 profile=configs/balanced.toml"
    )
    assert [line.split()[:2] for line in lines[1:4]] == [
        ["turn", "1"],
        ["turn", "2"],
        ["turn", "3"],
    ]
    assert lines[4:] == [
        "summary  turns=3 stop=end_turn",
        "  tokens: in=19,534 cache_read=27,000 cache_write=6,200 out=817",
        "  edits: spared_tokens=4,100 turns=1 max_per_turn=4,100 distinct_results_cleared=2 "
        "distinct_thinking_cleared=0",
        "  cache_hit_ratio=51.2% peak_prompt=27,200@turn2 cost=$0.0123",
        "  session=20261130-074500-ab12  see it again: agentctl sessions show 20261130-074500-ab12",
    ]
    assert out.getvalue().isascii()


def test_quiet_prints_only_errors() -> None:
    out = io.StringIO()
    error = ErrorEvent("api", "HTTP 529 overloaded (request req_9); retried 3 times")
    feed(PlainRenderer(out, quiet=True), START, *TURNS, error, RESULT)
    assert out.getvalue() == "error (api): HTTP 529 overloaded (request req_9); retried 3 times\n"


def test_error_red_only_with_color() -> None:
    out = io.StringIO()
    feed(PlainRenderer(out, color=True), ErrorEvent("limit", "max_turns 3"))
    assert out.getvalue() == "\x1b[31merror (limit): max_turns 3\x1b[0m\n"


def test_close_is_idempotent_and_later_events_are_dropped() -> None:
    out = io.StringIO()
    renderer = PlainRenderer(out)
    renderer.close()
    renderer.close()
    renderer.handle(TURN1)
    assert out.getvalue() == ""
