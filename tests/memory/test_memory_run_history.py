"""A run's memory writes are in the history under its session, turn and tool_use id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl import run
from agentctl.cli.main import app
from agentctl.memory.journal import read_history

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memory-carryover"


@pytest.mark.slow
def test_a_runs_writes_carry_its_session_turn_and_tool_use_id(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "ex")
    result = run(tmp_path / "ex" / "task.md", offline=True)
    calls = {c.id: t.turn for t in result.turns for c in t.tool_calls if c.name == "memory"}
    writes = [e for e in read_history(tmp_path / "ex" / "memory") if e.get("changes")]
    assert writes and all(e["session"] == result.session_id for e in writes)
    assert all(calls[e["tool_use_id"]] == e["turn"] for e in writes)
    out = CliRunner().invoke(app, ["sessions", "show", result.session_id], env={"COLUMNS": "200"})
    assert f"history: agentctl memory log --session {result.session_id}" in out.stdout
