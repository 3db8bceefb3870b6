"""Run `agentctl` with stderr on a pseudo-terminal of a given size; what the terminal received."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

# Escape sequences: SGR colours, cursor moves, erase-line, show/hide cursor.
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def spawn_on_pty(
    argv: list[str], *, env: dict[str, str], cwd: Path | None = None, columns: int | None = None
) -> tuple[int, str, str]:
    """(exit code, what stderr's terminal received, stdout) of `argv`, stderr on a pty."""
    master, slave = pty.openpty()
    if columns is not None:
        lines = int(env.get("LINES", "50"))
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode(), stdout


def run_on_pty(
    args: list[str], *, columns: int, cwd: Path, lines: int = 50
) -> tuple[int, str, str]:
    """`agentctl ARGS` on a terminal of `columns` x `lines` (COLUMNS/LINES and the pty size)."""
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(columns), LINES=str(lines))
    argv = [sys.executable, "-m", "agentctl", *args]
    return spawn_on_pty(argv, env=env, cwd=cwd, columns=columns)


def final_screen(received: str) -> list[str]:
    """The lines left after the live display stopped (it shows the cursor again last)."""
    tail = received.rsplit("\x1b[?25h", 1)[-1]
    return [CSI.sub("", line).rstrip() for line in tail.replace("\r", "").split("\n")]


def plain_text(received: str) -> str:
    return CSI.sub("", received).replace("\r", "")
