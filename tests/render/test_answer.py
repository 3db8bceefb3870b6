"""render_answer: raw text when piped, Rich Markdown on a terminal."""

from __future__ import annotations

import io

import pytest

from agentctl.render import render_answer

ANSWER = "# Findings\n\n- the cache **works**\n\n\n"


def test_piped_answer_is_raw_text_with_one_newline() -> None:
    out = io.StringIO()
    render_answer(ANSWER, out, is_tty=False)
    assert out.getvalue() == "# Findings\n\n- the cache **works**\n"
    out = io.StringIO()
    render_answer("no newline", out)  # is_tty None: a StringIO is no terminal
    assert out.getvalue() == "no newline\n"


def test_empty_answer_writes_nothing() -> None:
    out = io.StringIO()
    render_answer("", out, is_tty=False)
    assert out.getvalue() == ""


def test_tty_answer_is_rendered_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    render_answer(ANSWER, out, is_tty=True)
    text = out.getvalue()
    assert "Findings" in text and "**" not in text and "#" not in text
    assert "• the cache works" in text
    assert "\x1b[" not in text  # NO_COLOR is set by the test fixture
    first = text.splitlines()[0]  # a rule parts the answer from the summary above it
    assert first.startswith("─") and " answer " in first and len(first) == 60


def test_tty_answer_has_styles_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR")
    out = io.StringIO()
    render_answer(ANSWER, out, is_tty=True)
    assert "\x1b[1m" in out.getvalue()  # bold heading/emphasis


def test_a_structured_answer_is_a_json_block_on_a_terminal_and_raw_when_piped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    answer = '{"title": "# not a heading", "items": ["**a**"]}'
    out = io.StringIO()
    render_answer(answer, out, is_tty=True, structured=True)
    shown = out.getvalue()
    assert '{"title": "# not a heading", "items": ["**a**"]}' in shown  # not read as Markdown
    piped = io.StringIO()
    render_answer(answer, piped, is_tty=False, structured=True)
    assert piped.getvalue() == answer + "\n"
