"""Text from the model, a file or a server on a terminal: never markup, never raw controls."""

from __future__ import annotations

import io
import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.cli.memory import print_rich
from agentctl.render.answer import render_answer
from agentctl.render.live import LiveRenderer
from agentctl.render.memory_tree import listing_tree
from agentctl.render.plain import PlainRenderer
from agentctl.render.safe import error_line, safe_text, visible
from agentctl.render.sessions_view import sessions_table
from agentctl.sessions.catalog import UNKNOWN_COST, SessionSummary
from agentctl.sessions.transcript import SessionHeader, TranscriptWriter
from agentctl.types import (
    ErrorEvent,
    ResultEvent,
    StartEvent,
    ToolCall,
    TurnEvent,
    Usage,
)

TITLE = "\x1b]0;pwned\x07"  # sets the window title
CLEAR = "\x1b[2J"  # clears the screen
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"  # an OSC 8 hyperlink
CSI8 = "\x9b2J"  # C1 CSI: clear screen on 8-bit terminals
BIDI = "\u202egnp.exe"  # right-to-left override
HOSTILE = TITLE + CLEAR + LINK + CSI8 + BIDI
# What must never reach the terminal raw (Rich's own cursor moves use ESC [ ... only).
RAW = ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\u202e", "\x1b\\")


def assert_safe(output: str) -> None:
    leaked = [seq for seq in RAW if seq in output]
    assert not leaked, f"raw control sequences reached the terminal: {leaked!r}"


def terminal(color_system: str | None = None) -> Console:
    return Console(
        file=io.StringIO(), width=100, record=True, color_system=color_system, force_terminal=True
    )  # type: ignore[arg-type]


def written(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def test_visible_escapes_controls_and_keeps_layout() -> None:
    assert visible(HOSTILE) == (
        "\\x1b]0;pwned\\x07\\x1b[2J\\x1b]8;;http://evil.example\\x1b\\click"
        "\\x1b]8;;\\x1b\\\\x9b2J\\u202egnp.exe"
    )
    assert visible("a\r\nb\tc\n") == "a\nb\tc\n"
    assert visible("a\nb", keep="") == "a\\x0ab"
    assert (
        visible("family 👨\u200d👩\u200d👧, naïve, 漢字")
        == "family 👨\u200d👩\u200d👧, naïve, 漢字"
    )
    assert error_line("bad\n" + TITLE) == "agentctl: bad\\x0a\\x1b]0;pwned\\x07"


@given(st.text())
def test_visible_leaves_no_control_or_format_character(text: str) -> None:
    shown = visible(text)
    for char in shown:
        hidden = unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
        assert not hidden or char in "\n\t\u200c\u200d"
    if text.isprintable():
        assert shown == text


def test_safe_text_is_never_markup() -> None:
    console = terminal("truecolor")
    console.print(safe_text("[/] [link=http://evil.example]x[/link] [bold]b"))
    out = written(console)
    assert "[/] [link=http://evil.example]x[/link] [bold]b" in out
    assert "\x1b]8;" not in out


def hostile_turn() -> TurnEvent:
    calls = (
        ToolCall(id="t1", name="read_file" + TITLE, input={"path": "a"}, is_error=False),
        ToolCall(
            id="t2", name="memory", input={"command": "[/]" + CLEAR, "path": "/m"}, is_error=True
        ),
    )
    return TurnEvent(turn=1, stop_reason="tool_use" + CSI8, usage=Usage(10, 5), tool_calls=calls)


def hostile_events() -> list[object]:
    start = StartEvent(session="s1", model="[/]m" + LINK, context_management=None, profile="p")
    return [start, hostile_turn(), ErrorEvent("api", "server said " + HOSTILE)]


def test_live_table_status_and_error_show_controls_visibly() -> None:
    console = terminal()
    renderer = LiveRenderer(console, refresh_per_second=0)
    for event in hostile_events():
        renderer.handle(event)  # type: ignore[arg-type]
    renderer.close()
    out = written(console)
    assert_safe(out)
    assert "[/]m\\x1b]8;;http://evil.example" in out  # the model name, shown as it is
    assert "server said" in out and "\\x1b]0;pwned\\x07\\x1b[2J" in out


def test_summary_shows_a_hostile_stop_reason_visibly() -> None:
    from agentctl.render.table import summary_table
    from tests.render.render_samples import totals

    console = terminal()
    result = ResultEvent("s1", 1, "end_turn" + TITLE, "answer", totals())
    console.print(summary_table(result, [hostile_turn()]))
    assert_safe(written(console))
    assert "end_turn\\x1b]0;pwned" in written(console)


def test_plain_lines_have_no_escape_at_all() -> None:
    stream = io.StringIO()
    renderer = PlainRenderer(stream)
    for event in hostile_events():
        renderer.handle(event)  # type: ignore[arg-type]
    assert "\x1b" not in stream.getvalue() and "\x9b" not in stream.getvalue()
    assert "tools=read_file\\x1b]0;pwned\\x07,memory:[/]\\x1b[2J" in stream.getvalue()


def test_answer_on_a_terminal_is_visible_and_its_links_are_plain_text() -> None:
    answer = f"# Done\n\nSee [the report](http://evil.example/r) {HOSTILE}\n"
    tty = io.StringIO()
    render_answer(answer, tty, is_tty=True)
    assert_safe(tty.getvalue())
    assert "\x1b]8;" not in tty.getvalue()  # no live hyperlink
    assert "http://evil.example/r" in tty.getvalue()  # the target shown as text
    piped = io.StringIO()
    render_answer(answer, piped, is_tty=False)
    assert piped.getvalue() == answer  # piped, the answer is data: byte-exact


def test_sessions_list_with_a_markup_model_name() -> None:
    row = SessionSummary("s1", 0.0, "task " + TITLE, "t.md", "[/]m", 1, "done", UNKNOWN_COST)
    console = terminal()
    console.print(sessions_table([row], 100))
    assert "[/]m" in written(console)
    assert "task \\x1b]0;pwned\\x07" in written(console)
    assert_safe(written(console))


def test_memory_tree_and_file_view_with_hostile_names_and_bodies() -> None:
    name = "[link=mailto:a@evil.example]x" + TITLE
    listing = (
        "Here're the files and directories up to 2 levels deep in /memories, excluding "
        f"hidden items:\n4.0K\t/memories\n12\t/memories/{name}.md"
    )
    console = terminal("truecolor")
    console.print(listing_tree(listing))
    print_rich(
        f"Here's the content of /memories/[/]{name}.md with line numbers:\n{HOSTILE}", console
    )
    out = written(console)
    assert_safe(out)
    assert "\x1b]8;" not in out  # the name is not a hyperlink
    assert out.count("[link=mailto:a@evil.example]x\\x1b]0;pwned\\x07") == 2


SCRIPT = """\
final_text = "answer {title}"
[[turn]]
[[turn.tool_use]]
name = "memory"
input = {{ command = "create", path = "/memories/[/]x[link=http:]y.md", file_text = "{title}" }}
"""


@pytest.mark.slow
def test_sessions_show_and_list_with_markup_in_paths_and_model(tmp_path: Path) -> None:
    escaped = TITLE.replace("\x1b", "\\u001b").replace("\x07", "\\u0007")
    (tmp_path / "script.toml").write_text(SCRIPT.format(title=escaped))
    task = tmp_path / "task.md"
    task.write_text('+++\nemulator_script = "script.toml"\n[memory]\nroot = "mem"\n+++\nGo.\n')
    env = {"AGENTCTL_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    runner = CliRunner()
    odd = runner.invoke(app, ["run", str(task), "--offline", "--model", "[/]m" + TITLE], env=env)
    assert odd.exit_code == 1 and "model: [/]m\\x1b]0;pwned\\x07" in odd.stderr
    assert_safe(odd.stderr)
    ran = runner.invoke(app, ["run", str(task), "--offline"], env=env)
    assert ran.exit_code == 0, ran.output
    # A run the API refuses records no session: a recorded one names the hostile model.
    odd_session = tmp_path / "home" / "sessions" / "20260101-000000-aaaaaa.jsonl"
    with TranscriptWriter(odd_session) as writer:
        writer.append(SessionHeader(session=odd_session.stem, task="Go.", model="[/]m" + TITLE))
    os.utime(odd_session, (0, 0))  # older than the real run, which stays `last`
    listed = runner.invoke(app, ["sessions", "list"], env=env)
    assert listed.exit_code == 0 and "[/]m\\x1b]0;pwned\\x07" in listed.stdout
    shown = runner.invoke(app, ["sessions", "show", "last"], env=env)
    assert shown.exit_code == 0, shown.output
    assert "/memories/[/]x[link=http:]y.md" in shown.stdout
    odd_profile = tmp_path / "a[" / "b].toml"  # `[/b]` closes a tag that was never opened
    odd_profile.parent.mkdir()
    odd_profile.write_text('model = "claude-sonnet-5"\n')
    simulated = runner.invoke(app, ["simulate", "last", "--profile", str(odd_profile)], env=env)
    assert simulated.exit_code == 0, simulated.output
    assert "a[/b].toml" in simulated.stdout
