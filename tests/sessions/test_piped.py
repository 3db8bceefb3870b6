"""Piped `sessions list`/`show`, `stats`, `simulate`, `tune`: nothing cut, wrapped or padded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.sessions.transcript import Transcript

# Real servers or whole recorded runs per test: many short tests add up to several
# seconds, so `make test-fast` leaves this module to `make test`.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
AGGRESSIVE = str(REPO / "configs" / "aggressive.toml")


def piped(*args: str) -> str:
    """stdout of a command whose stdout is not a terminal (CliRunner's is a pipe-like buffer)."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def assert_clean(text: str) -> None:
    lines = text.splitlines()
    assert lines and not [line for line in lines if line != line.rstrip()]  # no trailing spaces
    assert "…" not in text  # no cell cut short


@pytest.mark.parametrize(
    "args",
    [
        ("stats", "last"),
        ("simulate", "last", "--profile", AGGRESSIVE),
        ("tune", "last", "--grid", "trigger=30000,60000;keep=2,4"),
        ("sessions", "show", "last"),
        ("sessions", "list"),
    ],
)
def test_piped_output_is_never_cut_and_has_no_trailing_spaces(
    research: Transcript, args: tuple[str, ...]
) -> None:
    assert_clean(piped(*args))


def test_piped_stats_carry_every_digit_of_the_ledger(research: Transcript) -> None:
    text = piped("stats", "last")
    # at 80 columns a figure such as `>= 43,027` read `>= 43`
    assert re.search(r">= \d{1,3},\d{3}\b", text) and "skip with" in text


def test_piped_session_list_is_one_line_per_session_with_its_start_time(
    research: Transcript,
) -> None:
    lines = piped("sessions", "list").splitlines()
    assert len(lines) == 3  # header, rule, one session: the title did not wrap
    assert lines[0].split()[:3] == ["session", "UTC", "task"]
    assert research.id in lines[2] and "Kestrel outage" in lines[2]


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (("stats", "last"), "edits"),
        (("simulate", "last", "--profile", AGGRESSIVE), "totals"),
        (("tune", "last", "--grid", "trigger=30000,60000"), "winner"),
    ],
)
def test_json_is_one_document(research: Transcript, args: tuple[str, ...], key: str) -> None:
    data = json.loads(piped(*args, "--json"))
    assert data["session"] == research.id and data[key]
