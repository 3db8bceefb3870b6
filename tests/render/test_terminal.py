"""The live view on a real pseudo-terminal: a subprocess with stderr on a pty, stdout on a pipe."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from pty_run import spawn_on_pty

DEMO = Path(__file__).with_name("live_demo.py")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def run_on_pty(*args: str, env: dict[str, str]) -> tuple[str, str]:
    """(what the terminal received on stderr, what stdout received)."""
    code, screen, stdout = spawn_on_pty([sys.executable, str(DEMO), "--fast", *args], env=env)
    assert code == 0
    return screen, stdout


@pytest.fixture
def term_env() -> dict[str, str]:
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="100", LINES="40")
    env.pop("NO_COLOR", None)
    return env


@pytest.mark.slow
def test_live_view_on_a_terminal_and_raw_answer_on_the_pipe(term_env: dict[str, str]) -> None:
    screen, stdout = run_on_pty(env=term_env)
    assert "\x1b[?25l" in screen  # Live hides the cursor while it draws
    assert SGR.search(screen)  # colour, since NO_COLOR is unset
    text = SGR.sub("", screen)
    assert "memory:str_replace!" in text and "51.2%  (read / (input + read + write))" in text
    assert stdout == "# Findings\n\n- the cache **works**\n"  # piped: raw Markdown


@pytest.mark.slow
def test_no_color_on_a_terminal(term_env: dict[str, str]) -> None:
    screen, _ = run_on_pty(env=dict(term_env, NO_COLOR="1"))
    assert "agentctl sessions show" in screen and not SGR.search(screen)


@pytest.mark.slow
def test_json_mode_on_a_terminal(term_env: dict[str, str]) -> None:
    screen, stdout = run_on_pty("--json", env=term_env)
    kinds = [line.split('"event": "')[1].split('"')[0] for line in stdout.splitlines()]
    assert kinds == ["start", "turn", "turn", "turn", "result"]
    assert "summary" in screen  # the table still shows on the terminal
