"""NO_COLOR holds on a real terminal (a pty) for every command that draws with Rich, not only
`run`: no escape sequence at all reaches the screen; without it they do colour."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

import agentctl

COMMANDS = [
    ["profile", "show"],
    ["sessions", "list"],
    ["sessions", "show", "last"],
    ["stats", "last"],
    ["tune", "last", "--top", "2"],
    ["memory", "view", "--root", "mem"],
]


def on_a_pty(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What `agentctl ARGS` writes to a pty (stdout and stderr both)."""
    reader, writer = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentctl", *args],
            stdin=subprocess.DEVNULL, stdout=writer, stderr=writer, env=env, cwd=cwd,
        )  # fmt: skip
        os.close(writer)
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([reader], [], [], 60)
            assert ready, f"{args}: no output within 60 s"
            try:
                chunk = os.read(reader, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 0, b"".join(chunks).decode(errors="replace")
        return b"".join(chunks).decode(errors="replace")
    finally:
        os.close(reader)


@pytest.mark.slow
def test_no_color_means_no_escape_codes_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    client = agentctl.ScriptedClient("**Done.** Nothing else to do.")
    agentctl.run("Look at memory.", client=client, memory_root="mem")
    (tmp_path / "mem" / "notes.md").write_text("a note\n")
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    coloured = on_a_pty(["stats", "last"], env, tmp_path)
    assert "\x1b[" in coloured  # the check can fail: Rich does style this terminal
    for args in COMMANDS:
        screen = on_a_pty(args, {**env, "NO_COLOR": "1"}, tmp_path)
        assert screen.strip(), args
        assert "\x1b" not in screen, (args, screen[:200])
