"""agentctl's own lines (errors, notes, warnings: printed outside Rich) wrap at spaces on a
terminal, never mid-word; piped, each stays one line."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from agentctl.cli.exit_codes import report
from agentctl.errors import UsageError
from tests.render.pty_run import plain_text, spawn_on_pty
from tests.ux.test_answer_pty import END, terminal

MESSAGE = (
    "profile /home/someone/projects/a-rather-long-folder-name/agentctl.toml: "
    "context_editing.tool_uses.trigger must be a whole number of input tokens"
)


def words_kept(lines: list[str], text: str) -> bool:
    return " ".join(" ".join(lines).split()) == " ".join(text.split())


def test_an_error_line_wraps_at_spaces_on_a_60_column_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    with terminal() as (out, reader):
        assert report(UsageError(MESSAGE), out) == 2
        out.write(f"{END}\n")
        out.flush()
        raw = b""
        while END.encode() not in raw:
            raw += os.read(reader, 1 << 16)
    lines = raw.decode().replace("\r\n", "\n").partition(END)[0].rstrip("\n").split("\n")
    assert len(lines) > 1
    # A word longer than the line (the path) stays whole, on a line of its own.
    assert all(len(line) <= 60 or " " not in line.strip() for line in lines), lines
    assert all(line.startswith("  ") for line in lines[1:])
    assert words_kept(lines, f"agentctl: {MESSAGE}")


def test_piped_the_error_stays_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    report(UsageError(MESSAGE), out)
    assert out.getvalue() == f"agentctl: {MESSAGE}\n"


@pytest.mark.slow
def test_the_cli_error_wraps_on_a_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder-with-a-long-name-for-this-test"
    folder.mkdir()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="60")
    env.pop("NO_COLOR", None)
    argv = [sys.executable, "-m", "agentctl", "run", str(folder / "no-such-task.md")]
    code, received, _ = spawn_on_pty(argv, env=env, cwd=tmp_path, columns=60)
    assert code == 2
    lines = [line for line in plain_text(received).split("\n") if line]
    assert lines[0].startswith("agentctl: ") and len(lines) > 1, lines
    assert all(len(line) <= 60 or " " not in line.strip() for line in lines), lines
    assert any(str(folder) in line for line in lines), lines
