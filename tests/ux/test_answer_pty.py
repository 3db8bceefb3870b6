"""On a terminal (a real pty) the answer shows text in angle brackets as typed."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import pytest

from agentctl.render.answer import render_answer

ANSI = re.compile(r"\x1b\[[0-9;]*m")
END = "END-OF-ANSWER-7f3a"


@contextmanager
def terminal() -> Iterator[tuple[TextIO, int]]:
    """A pty: the writer's end as a text file, the reader's end as an fd."""
    reader, writer = os.openpty()
    try:
        with open(writer, "w", encoding="utf-8", closefd=False) as out:
            yield out, reader
    finally:
        os.close(writer)
        os.close(reader)


def shown(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    with terminal() as (out, reader):
        assert out.isatty()
        render_answer(text, out)
        out.write(f"\n{END}\n")  # read up to here: the answer may come in several writes
        out.flush()
        raw = b""
        while END.encode() not in raw:
            raw += os.read(reader, 1 << 16)
    screen = raw.decode().partition(END)[0]
    return " ".join(ANSI.sub("", screen).replace("\r\n", "\n").split())


def test_angle_brackets_are_shown_as_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Use Vec<u8>, not `Vec<i8>`; see <built-in> and <https://example.org>.\n\n<div>x</div>"
    screen = shown(text, monkeypatch)
    assert "Use Vec<u8>, not Vec<i8>; see <built-in> and https://example.org" in screen
    assert "<div>x</div>" in screen


def test_markdown_still_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = shown("# Title\n\n- **one** item\n- [a link](https://example.org)", monkeypatch)
    assert "Title" in screen and "# Title" not in screen and "**" not in screen
    assert "a link (https://example.org)" in screen
