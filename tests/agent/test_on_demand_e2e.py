"""On-demand compaction end to end, offline: the real SDK over HTTP against the emulator, from
the Python call (`RunControl`) and from an on-demand profile through the CLI (NDJSON, the
transcript, `sessions show`, `--resume` after the compaction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.sessions.transcript import load_session
from agentctl.types import Event, TurnEvent
from tests.runner.compaction_workload import FILES, setup

ON_DEMAND = ("--set", "context_editing.compaction.mode=on-demand")
TRIGGER = 50_000  # the workload's trigger (its profile's, for threshold compaction)


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def prompt(usage: dict[str, Any]) -> int:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(int(usage[k]) for k in keys)


@pytest.mark.slow
def test_the_python_call_compacts_an_offline_run(tmp_path: Path) -> None:
    path, task = setup(tmp_path, pause=False)
    # On-demand with a trigger no prompt reaches: only the call compacts.
    on_call = {"context_editing.compaction.mode": "on-demand"}
    profile = agentctl.load_profile(path, {**on_call, "context_editing.compaction.trigger": 10**9})
    control = agentctl.RunControl()

    def on_event(event: Event) -> None:
        if isinstance(event, TurnEvent) and event.turn == 6:  # three files read
            control.compact_before_next_turn("Keep every FINDING line.")

    result = agentctl.run(task, profile=profile, offline=True, control=control, on_event=on_event)
    stops = [t.stop_reason for t in result.turns]
    assert stops[:7] == ["tool_use"] * 6 + ["compaction"]
    assert stops.count("compaction") == 1 and stops[-1] == "end_turn"
    assert result.totals.usage.compactions == 1 and result.turns[6].usage.compactions == 1
    assert all(f"FINDING {i:02d}" in result.text for i in range(FILES))
    session = load_session(result.session_id)
    asking, after = session.turns[6], session.turns[7]
    assert asking.body["compaction"] == {
        "type": "summarize",
        "instructions": "Keep every FINDING line.",
    }
    assert "context_management" not in asking.body
    block = after.messages[0]["content"][0]
    assert block["type"] == "compaction" and block["signature"] and block["content"]
    assert len(after.messages[0]["content"]) == 1
    # The compaction's prompt is the conversation it closed; the model reads far less after.
    assert result.turns[7].usage.prompt_tokens < result.turns[6].usage.prompt_tokens / 5


def ndjson(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["run", *args, "--json"])
    assert result.exit_code in (0, 3), result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.slow
def test_an_on_demand_profile_compacts_and_a_resume_continues_from_the_block(
    tmp_path: Path,
) -> None:
    profile, task = setup(tmp_path, pause=False)
    lines = ndjson(str(task), "--profile", str(profile), "--offline", *ON_DEMAND)
    turns = [e for e in lines if e["event"] == "turn"]
    compacting = [t for t in turns if t["stop_reason"] == "compaction"]
    assert compacting and all(t["usage"]["compactions"] == 1 for t in compacting)
    assert lines[-1]["totals"]["compactions"] == len(compacting)
    assert all(f"FINDING {i:02d}" in lines[-1]["text"] for i in range(FILES))
    index = turns.index(compacting[0])
    assert prompt(turns[index - 1]["usage"]) >= TRIGGER
    assert prompt(turns[index + 1]["usage"]) < TRIGGER / 5
    shown = CliRunner().invoke(app, ["sessions", "show", "last"])
    assert shown.exit_code == 0, shown.output
    assert "compaction" in shown.stdout or "cmpct" in shown.stdout

    # Stopped right after the compaction, a resumed run starts from the signed block.
    (tmp_path / "again").mkdir()
    profile, task = setup(tmp_path / "again", pause=False)
    stop_at = ("--max-turns", str(index + 1))
    first = ndjson(str(task), "--profile", str(profile), "--offline", *ON_DEMAND, *stop_at)
    assert [e for e in first if e["event"] == "turn"][-1]["stop_reason"] == "compaction"
    rest = ndjson("--resume", "last", "--max-turns", "120")
    resumed = [e for e in rest if e["event"] == "turn"]
    assert rest[-1]["event"] == "result", rest[-1]
    assert all(f"FINDING {i:02d}" in rest[-1]["text"] for i in range(FILES))
    assert prompt(resumed[0]["usage"]) < TRIGGER / 5 and resumed[0]["usage"]["compactions"] == 0
