"""What agentctl displays never carries raw controls (issue 20): `sessions show` piped shows
the answer's escape sequences escaped; `memory cat` on a terminal shows a note's controls
escaped, raw only with --raw (and then says so on stderr); piped, `memory cat` is the file."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.helpers import invoke, make_workspace, only_session

pytestmark = pytest.mark.slow  # subprocesses on a pseudo-terminal

AGENTCTL = [sys.executable, "-m", "agentctl"]
NOTE = "title\n\x1b[2J\x1b]0;owned\x07 cleared? \x9b31m red\n"


def on_a_terminal(args: list[str], cwd: Path) -> tuple[bytes, str, int]:
    """`agentctl ARGS` with stdout on a pseudo-terminal: (what the terminal got, stderr, code)."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([*AGENTCTL, *args], cwd=cwd, stdout=follower,
                             stderr=subprocess.PIPE, env=os.environ.copy())  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    _, err = child.communicate(timeout=60)
    return shown, err.decode(), child.returncode


def note_root(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "note.md").write_text(NOTE)
    return root


def test_memory_cat_on_a_terminal_shows_controls_escaped(tmp_path: Path) -> None:
    """Before the fix the note's ESC[2J reached the terminal (it cleared the screen)."""
    root = note_root(tmp_path)
    shown, err, code = on_a_terminal(["memory", "cat", "note.md", "--root", str(root)], tmp_path)
    assert code == 0, err
    assert b"\x1b" not in shown and b"\x07" not in shown and "\x9b".encode() not in shown
    assert b"\\x1b[2J" in shown and b"cleared?" in shown


def test_memory_cat_raw_on_a_terminal_says_so(tmp_path: Path) -> None:
    root = note_root(tmp_path)
    args = ["memory", "cat", "note.md", "--root", str(root), "--raw"]
    shown, err, code = on_a_terminal(args, tmp_path)
    assert code == 0, err
    assert b"\x1b[2J" in shown
    assert "agentctl: --raw: the text as it is, control characters included" in err.splitlines()


def test_memory_cat_piped_is_the_file(tmp_path: Path) -> None:
    root = note_root(tmp_path)
    done = invoke("memory", "cat", "note.md", "--root", str(root))
    assert done.exit_code == 0 and done.stdout == NOTE


def test_sessions_show_piped_shows_the_answers_controls_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix `sessions show | cat` printed the answer's escape sequences raw."""
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 1)
    (tmp_path / "workspace" / "note0.txt").write_text("FINDING 0: \x1b[2J\x1b]0;owned\x07 x\n")
    done = invoke("run", str(task), "--offline", "--quiet")
    assert done.exit_code == 0 and "\x1b[2J" in done.stdout  # run's answer piped: verbatim
    piped = subprocess.run([*AGENTCTL, "sessions", "show", only_session()], cwd=tmp_path,
                           capture_output=True, env=os.environ.copy(), timeout=60)  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert b"\x1b" not in piped.stdout and b"\x07" not in piped.stdout
    assert b"\\x1b[2J" in piped.stdout
