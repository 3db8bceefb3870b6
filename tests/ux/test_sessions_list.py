"""`sessions list`: newest first, `-n`, `--search`, and on a narrow terminal the model column
goes before the task column."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.render.sessions_view import sessions_table
from agentctl.sessions.catalog import SessionSummary
from agentctl.types import Totals, Usage


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def record(prompt: str, mtime: int) -> str:
    """One recorded session (a scripted model), its transcript dated `mtime`."""
    result = agentctl.run(prompt, client=agentctl.ScriptedClient("Done."), memory_root="mem")
    path = sessions_dir() / f"{result.session_id}.jsonl"
    os.utime(path, (mtime, mtime))
    return result.session_id


def listed(*args: str) -> list[str]:
    result = CliRunner().invoke(app, ["sessions", "list", "--json", *args])
    assert result.exit_code == 0, result.output
    return [row["session"] for row in json.loads(result.stdout)]


@pytest.mark.dates
def test_newest_first_the_n_newest_and_a_search() -> None:
    old = record("Summarise the kestrel outage.", 1_000)
    mid = record("Count the invoices.", 2_000)
    new = record("Find every Kestrel FINDING.", 3_000)
    assert listed() == [new, mid, old]
    assert listed("-n", "2") == [new, mid]
    assert listed("--search", "KESTREL") == [new, old]
    assert listed("-s", mid) == [mid]  # an id
    none = CliRunner().invoke(app, ["sessions", "list", "-s", "nothing like it"])
    assert none.exit_code == 0 and none.stderr.startswith("no session matches 'nothing like it'")


def row(task: str) -> SessionSummary:
    return SessionSummary(
        id="20261201-101010-abcdef", started=0.0, task=task, task_source="t.md",
        model="claude-sonnet-5", turns=23, status="end_turn",
        totals=Totals(Usage(input_tokens=552_257, output_tokens=4_141), cost_usd=0.6799),
    )  # fmt: skip


def header(width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(sessions_table([row("Kestrel outage"), row("Invoices")], width))
    return console.export_text().splitlines()[0].split()


def test_narrow_terminals_drop_the_model_before_the_task() -> None:
    assert header(120) == ["session", "UTC", "task", "model", "turns", "status", "tokens", "cost"]
    assert header(80) == ["session", "task", "model", "turns", "status", "tokens", "cost"]
    assert header(70) == ["session", "task", "turns", "status", "tokens", "cost"]


def test_a_status_no_session_has_names_the_statuses_recorded() -> None:
    """`--status finished` (a natural guess) matched nothing and said only that; it now lists
    the statuses the sessions have, so the next try can be right. A run through the SDK
    against the emulator, then a limit-stopped one."""
    agentctl.run("Count the invoices.", offline=True, memory_root="mem")
    Path("one-turn.toml").write_text("max_turns = 1\n")
    with pytest.raises(agentctl.LimitError):
        agentctl.run("Count them again.", offline=True, memory_root="mem", profile="one-turn.toml")
    none = CliRunner().invoke(app, ["sessions", "list", "--status", "finished"])
    assert none.exit_code == 0 and none.stdout == ""
    assert none.stderr == "no session matches 'finished' (statuses recorded: end_turn, limit)\n"
    other = CliRunner().invoke(app, ["sessions", "list", "-s", "nothing like it"])
    assert (
        other.stderr == "no session matches 'nothing like it' (agentctl run records one per run)\n"
    )
