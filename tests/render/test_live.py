"""The live TTY view, drawn on a recording Console, and the factory's choices."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from render_samples import RESULT, START, TURN1, TURNS
from rich.console import Console

from agentctl.render import make_renderer
from agentctl.render.base import MultiRenderer
from agentctl.render.live import LiveRenderer
from agentctl.render.plain import PlainRenderer
from agentctl.types import ErrorEvent, ProgressEvent, TurnEvent

SGR = re.compile(r"\x1b\[[0-9;]*m")  # colour / style codes (cursor moves are other letters)


def recording_console(width: int = 100) -> Console:
    return Console(
        file=io.StringIO(), width=width, record=True, color_system=None, force_terminal=True
    )


def text_now(renderer: LiveRenderer, width: int = 100) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderer.renderable())
    return console.export_text()


def test_status_line_follows_progress_and_turns() -> None:
    live = LiveRenderer(recording_console(), refresh_per_second=0)
    live.handle(START)
    assert "turn 1 · waiting for the model…" in text_now(live)
    live.handle(ProgressEvent(1, "thinking", 1234))
    assert "turn 1 · thinking… 1.2k chars" in text_now(live)
    live.handle(ProgressEvent(1, "text", 40))
    assert "turn 1 · writing text… 40 chars" in text_now(live)
    live.handle(ProgressEvent(1, "tool_input", 312, tool_name="memory"))
    assert "turn 1 · tool input: memory (312 chars)" in text_now(live)
    live.handle(TURN1)
    now = text_now(live)
    assert "turn 2 · waiting for the model…" in now
    assert "memory:view," in now and "read_file×2" in now
    live.close()


def test_full_run_leaves_table_and_summary() -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    for event in (START, ProgressEvent(1, "thinking", 5), *TURNS, RESULT):
        live.handle(event)
    live.close()
    final = console.export_text(styles=False)
    assert "session 20261130-074500-ab12 · claude-sonnet-5" in final
    assert "18.0k" in final or "18,000" in final
    assert "51.2%  (read / (input + read + write))" in final
    assert "agentctl sessions show 20261130-074500-ab12" in final
    assert "waiting for the model" not in text_now(live)  # status cleared at the end


def test_trigger_from_start_event_adds_headroom_column() -> None:
    live = LiveRenderer(recording_console(120), refresh_per_second=0)
    live.handle(START)
    live.handle(TURN1)
    assert "23,766" in text_now(live, width=120)  # 30,000 - (1,234 + 5,000)
    assert "23.8k" in text_now(live, width=80)  # shrunk since the start: the narrower layout
    live.close()


def test_the_run_gives_the_trigger_it_shows() -> None:
    """The loop's start event carries the run's own setting: the view does not read it back
    out of the request's context_management (None here)."""
    live = LiveRenderer(recording_console(120), refresh_per_second=0)
    live.handle(replace(START, context_management=None, trigger=40_000))
    live.handle(TURN1)
    assert "33,766" in text_now(live, width=120)  # 40,000 - (1,234 + 5,000)
    live.close()


def test_a_run_starts_with_its_settings_trigger() -> None:
    from agentctl.profile.settings import ClearToolUses

    assert ClearToolUses(trigger=40_000).input_trigger == 40_000
    assert ClearToolUses(trigger=9, trigger_kind="tool_uses").input_trigger is None
    assert ClearToolUses(enabled=False).input_trigger is None


def test_error_is_one_line() -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    live.handle(START)
    live.handle(ErrorEvent("api", "HTTP 401: invalid x-api-key; check ANTHROPIC_API_KEY"))
    live.close()
    assert "error (api): HTTP 401: invalid x-api-key; check ANTHROPIC_API_KEY" in (
        console.export_text()
    )


def test_close_idempotent_and_safe_before_start() -> None:
    live = LiveRenderer(recording_console(), refresh_per_second=0)
    live.close()
    live.close()
    started = LiveRenderer(recording_console(), refresh_per_second=8)
    started.handle(START)  # auto refresh thread running
    started.close()
    started.close()
    started.handle(TURN1)  # after close: ignored, no exception, no restart
    assert "waiting" not in text_now(started)


def run_tty(no_color: bool) -> str:
    err = io.StringIO()
    renderer = make_renderer(
        json_mode=False,
        quiet=False,
        stdout=io.StringIO(),
        stderr=err,
        is_tty=True,
        no_color=no_color,
    )
    for event in (START, *TURNS, ErrorEvent("limit", "x"), RESULT):
        renderer.handle(event)
    renderer.close()
    return err.getvalue()


def test_no_color_means_no_style_codes() -> None:
    assert SGR.search(run_tty(no_color=False))  # the check can fail: colour does show up
    plain = run_tty(no_color=True)
    assert "end_turn" in plain and not SGR.search(plain)


def test_no_color_env_is_read_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setenv("NO_COLOR", "1")
    renderer = make_renderer(
        json_mode=False, quiet=True, stdout=io.StringIO(), stderr=err, is_tty=True
    )
    renderer.handle(ErrorEvent("api", "x"))
    assert err.getvalue() == "error (api): x\n"
    monkeypatch.delenv("NO_COLOR")
    err = io.StringIO()
    renderer = make_renderer(
        json_mode=False, quiet=True, stdout=io.StringIO(), stderr=err, is_tty=True
    )
    renderer.handle(ErrorEvent("api", "x"))
    assert SGR.search(err.getvalue())


def test_factory_picks_by_tty_and_quiet() -> None:
    def kind(**kw: bool) -> type:
        return type(
            make_renderer(json_mode=False, stdout=io.StringIO(), stderr=io.StringIO(), **kw)
        )

    assert kind(quiet=False, is_tty=True) is LiveRenderer
    assert kind(quiet=False, is_tty=False) is PlainRenderer
    assert kind(quiet=True, is_tty=True) is PlainRenderer
    # is_tty None asks the stream: a StringIO is not a terminal
    assert kind(quiet=False) is PlainRenderer


def test_not_a_tty_has_no_escape_codes_at_all() -> None:
    err = io.StringIO()
    renderer = make_renderer(
        json_mode=False, quiet=False, stdout=io.StringIO(), stderr=err, is_tty=False, no_color=False
    )
    for event in (START, ProgressEvent(1, "thinking", 9), *TURNS, ErrorEvent("api", "x"), RESULT):
        renderer.handle(event)
    renderer.close()
    assert "\x1b" not in err.getvalue()
    assert "chars" not in err.getvalue()  # no progress lines off a terminal


def many_turns(count: int) -> list[TurnEvent]:
    return [replace(TURNS[i % 3], turn=i + 1) for i in range(count)]


def test_long_run_shows_newest_rows_on_screen_and_full_table_at_close() -> None:
    console = Console(
        file=io.StringIO(), width=80, height=14, record=True, color_system=None,
        force_terminal=True,
    )  # fmt: skip
    live = LiveRenderer(console, refresh_per_second=0)
    live.handle(START)
    for turn in many_turns(15):
        live.handle(turn)
    screen = console.render_lines(live.renderable(), console.options, pad=False)
    lines = ["".join(segment.text for segment in line).rstrip() for line in screen]
    assert len(lines) <= 14 - 1  # the view keeps a spare line, so Live never crops it
    assert lines[1].split()[:2] == ["#", "stop"]
    assert lines[3] == "… earlier turns (the full table follows at the end)"
    assert lines[4][:4].strip()  # a row's first line, not the tail of a wrapped row
    assert lines[-1].split()[:2] == ["15", "end_turn"]  # no status line: the run is over
    live.close()
    recorded = console.export_text()  # every frame, then what close() printed
    final = recorded[recorded.rindex("# stop") :]
    assert " 1 tool_use" in final and "15 end_turn" in final
    assert "earlier turns" not in final


def test_error_comes_after_the_full_table() -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    for event in (START, *TURNS[:2], ErrorEvent("limit", "max_turns 2 reached")):
        live.handle(event)
    live.close()
    lines = [line for line in console.export_text().splitlines() if line.strip()]
    assert lines[-1] == "error (limit): max_turns 2 reached"
    assert lines[-2].split()[:2] == ["2", "tool_use"]  # the table, printed when the display stopped


def test_stray_stderr_writes_go_above_the_live_table(capsys: pytest.CaptureFixture[str]) -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    live.handle(START)
    print("agentctl: warning: retrying after HTTP 529", file=sys.stderr)
    live.handle(TURN1)
    live.close()
    assert "agentctl: warning: retrying after HTTP 529" in console.export_text()
    assert capsys.readouterr().err == ""  # it went through the console, not around it


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_to_a_terminal_stdout_uses_plain_stderr_lines() -> None:
    err = FakeTty()
    renderer = make_renderer(json_mode=True, quiet=False, stdout=FakeTty(), stderr=err)
    assert isinstance(renderer, MultiRenderer)
    renderer.handle(TURN1)
    renderer.close()
    assert err.getvalue().startswith("turn 1  tool_use")


def test_dumb_terminal_gets_plain_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    renderer = make_renderer(json_mode=False, quiet=False, stdout=FakeTty(), stderr=FakeTty())
    assert isinstance(renderer, PlainRenderer)
    monkeypatch.setenv("TERM", "xterm-256color")
    renderer = make_renderer(json_mode=False, quiet=False, stdout=FakeTty(), stderr=FakeTty())
    assert isinstance(renderer, LiveRenderer)


def test_status_line_shows_how_long_the_turn_has_run() -> None:
    now = [100.0]
    live = LiveRenderer(recording_console(), refresh_per_second=0, clock=lambda: now[0])
    live.handle(START)
    now[0] += 7.4
    assert "turn 1 · waiting for the model… · 7s" in text_now(live)
    live.handle(ProgressEvent(1, "thinking", 2000))
    now[0] += 58
    assert "turn 1 · thinking… 2.0k chars · 1m05s" in text_now(live)  # same turn: same clock
    live.handle(TURN1)
    assert "turn 2 · waiting for the model… · 0s" in text_now(live)  # a new turn restarts it
    live.close()


def test_failure_before_any_turn_prints_no_empty_table() -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    live.handle(START)
    live.handle(ErrorEvent("api", "HTTP 401"))
    live.close()
    recorded = console.export_text()
    final = recorded[recorded.rindex("waiting for the model") :]  # after the last live frame
    assert "stop" not in final and final.rstrip().endswith("error (api): HTTP 401")


@pytest.mark.slow
def test_turns_redraw_the_table_at_the_refresh_rate_not_once_each() -> None:
    """With auto refresh (the default, 8 a second) a turn does not draw the table itself:
    100 quick turns draw it a few times, not 100 (refresh 0, as in these tests, draws each)."""
    drawn = {}
    for rate in (0, 8):
        console = recording_console()
        live = LiveRenderer(console, refresh_per_second=rate)
        live.handle(START)
        for n in range(1, 101):
            live.handle(replace(TURN1, turn=n))
        assert isinstance(console.file, io.StringIO)
        drawn[rate] = len(console.file.getvalue())
        live.close()
    assert drawn[8] * 10 < drawn[0]


@pytest.mark.parametrize("wrapped", [False, True])
def test_the_live_region_pauses_for_a_question_and_comes_back(wrapped: bool) -> None:
    console = recording_console()
    live = LiveRenderer(console, refresh_per_second=0)
    renderer = MultiRenderer((PlainRenderer(io.StringIO(), quiet=True), live)) if wrapped else live
    renderer.handle(START)
    out = console.file
    assert isinstance(out, io.StringIO)
    with renderer.paused():
        out.write("QUESTION?")
        renderer.handle(ProgressEvent(1, "thinking", 10))  # nothing drawn while it is open
        assert out.getvalue().endswith("QUESTION?")
    after = out.getvalue().rpartition("QUESTION?")[2]
    assert "turn 1 · thinking… 10 chars" in SGR.sub("", after)  # drawn again, below it
    live.close()


@pytest.mark.slow
def test_the_loop_starts_with_the_profiles_trigger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentctl
    from agentctl.profile.settings import ClearToolUses, ContextEditing, Profile
    from agentctl.types import StartEvent

    editing = ContextEditing(tool_uses=ClearToolUses(trigger=41_000, strategy="server"))
    events: list[object] = []
    monkeypatch.chdir(tmp_path)  # the run's memory root: ./memory
    agentctl.run("Say hi.", profile=Profile(context_editing=editing), offline=True,
                 on_event=events.append, record=False)  # fmt: skip
    start = next(e for e in events if isinstance(e, StartEvent))
    assert start.trigger == 41_000
    assert "trigger" not in start.to_json()  # the NDJSON line is as it was
