"""On a terminal (a real pty) `ask` prompts with the live table paused, and y / n / a work."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentctl.emulator import Emulator, Script, ScriptTurn, ToolCall, running
from agentctl.tools.approval import DENIED

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
PROMPT = "for the rest of the run: "
WAIT_S = 60  # a deadline for a stuck child, not a pause: every read returns as output comes


def read_until(fd: int, marker: str, seen: list[str]) -> str:
    """What the child writes until `marker` shows (controls stripped); fails at the deadline."""
    text = ""
    while marker not in text:
        ready, _, _ = select.select([fd], [], [], WAIT_S)
        assert ready, f"no {marker!r} within {WAIT_S} s; the screen so far:\n{text}"
        try:
            chunk = os.read(fd, 1 << 16).decode(errors="replace")
        except OSError:  # the child closed the terminal
            break
        text += ANSI.sub("", chunk)
    seen.append(text)
    return text


def results(emu: Emulator) -> list[dict[str, object]]:
    return [
        block
        for message in emu.requests[-1].body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@contextmanager
def on_a_pty(
    tmp_path: Path, emu: Emulator, args: list[str], **popen: Any
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`agentctl ARGS` with stdout and stderr on a new pty (and stdin, unless `popen` says
    otherwise); yields the pty's main end and the child, and stops the child by its PID."""
    main, child_end = os.openpty()
    env = dict(
        os.environ,
        ANTHROPIC_BASE_URL=emu.base_url,
        ANTHROPIC_API_KEY="test-key",
        COLUMNS="120",
        LINES="40",
        TERM="xterm",
        NO_COLOR="1",
    )
    popen = {"stdin": child_end, **popen}
    child = subprocess.Popen(
        [sys.executable, "-m", "agentctl", *args],
        cwd=tmp_path,
        env=env,
        stdout=child_end,
        stderr=child_end,
        **popen,
    )
    os.close(child_end)
    try:
        yield main, child
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(main)


@pytest.mark.slow
def test_y_n_a_at_a_real_prompt(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "ws" / f"{name}.txt").write_text(f"text of {name}\n")
    (tmp_path / "p.toml").write_text(
        '[memory]\nroot = "mem"\n[approval]\nask = ["read_file", "memory:create"]\n'
    )
    (tmp_path / "task.md").write_text("Read the files.\n")
    read = [ToolCall("read_file", {"path": f"{n}.txt"}) for n in ("a", "b", "c")]
    create = ToolCall("memory", {"command": "create", "path": "/memories/x.md", "file_text": "x"})
    turns = (
        ScriptTurn(text="First.", tool_calls=(read[0],)),  # y
        ScriptTurn(tool_calls=(create,)),  # n
        ScriptTurn(tool_calls=(read[1],)),  # a
        ScriptTurn(tool_calls=(read[2],)),  # not asked
    )
    seen: list[str] = []
    args = ["run", "task.md", "--profile", "p.toml", "--workspace", "ws"]
    with running(script=Script(turns, "All read.")) as emu:
        with on_a_pty(tmp_path, emu, args) as (main, child):
            for answer in ("y", "n", "a"):
                read_until(main, PROMPT, seen)
                os.write(main, f"{answer}\n".encode())
            rest = read_until(main, "All read.", seen)
            assert child.wait(timeout=WAIT_S) == 0
        sent = results(emu)
    screen = "".join(seen)
    assert screen.count(PROMPT) == 3 and PROMPT not in rest  # c.txt was not asked about
    assert "the model wants to call read_file (turn 1)" in seen[0]
    assert 'input: {"path": "a.txt"}' in seen[0]
    assert "the model wants to call memory:create (turn 2)" in seen[1]
    assert [bool(r.get("is_error")) for r in sent] == [False, True, False, False]
    assert "text of a" in str(sent[0]["content"]) and "text of c" in str(sent[3]["content"])
    assert sent[1]["content"] == (
        f'{DENIED}the user refused this memory:create call (ask pattern "memory:create")'
    )
    assert not (tmp_path / "mem" / "x.md").exists()
    assert "tool denials" in rest and "memory:create⊘" in rest


@pytest.mark.slow
def test_task_on_stdin_the_answer_comes_from_the_controlling_terminal(tmp_path: Path) -> None:
    """`run -` reads the task from a pipe; the prompt reads its answer from /dev/tty."""
    import fcntl
    import termios

    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("text of a\n")
    (tmp_path / "p.toml").write_text('[memory]\nroot = "mem"\n[approval]\nask = ["read_file"]\n')
    turns = (ScriptTurn(tool_calls=(ToolCall("read_file", {"path": "a.txt"}),)),)
    seen: list[str] = []

    def take_the_terminal() -> None:  # in the child, after setsid: the pty becomes its tty
        fcntl.ioctl(2, termios.TIOCSCTTY, 0)

    args = ["run", "-", "--profile", "p.toml", "--workspace", "ws"]
    with running(script=Script(turns, "Read it.")) as emu:
        pty = on_a_pty(
            tmp_path,
            emu,
            args,
            stdin=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=take_the_terminal,
        )
        with pty as (main, child):
            assert child.stdin is not None
            child.stdin.write(b"Read the file.\n")
            child.stdin.close()
            read_until(main, PROMPT, seen)
            os.write(main, b"y\n")
            rest = read_until(main, "Read it.", seen)
            assert child.wait(timeout=WAIT_S) == 0
        sent = results(emu)
    assert "the model wants to call read_file (turn 1)" in seen[0]
    assert "nobody can be asked" not in "".join(seen)
    assert [bool(r.get("is_error")) for r in sent] == [False]
    assert "text of a" in str(sent[0]["content"]) and "tool denials" not in rest
