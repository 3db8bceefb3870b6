"""Compaction end to end: offline runs through the emulator with a compaction profile (the
API's minimum trigger, 50,000 tokens, passed by a sweep of 16 files of ~3,800 tokens each),
paused and not, NDJSON and transcript, and `--resume` across a compaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records

from .compaction_workload import FILES, setup


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def ndjson(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["run", *args, "--json"])
    assert result.exit_code in (0, 3), result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def turns(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in lines if e["event"] == "turn"]


def prompt(turn: dict[str, Any]) -> int:
    usage = turn["usage"]
    return int(
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )


def all_found(text: str) -> bool:
    return all(f"FINDING {i:02d}" in text for i in range(FILES))


@pytest.mark.slow
@pytest.mark.parametrize("pause", [True, False])
def test_offline_run_compacts_and_still_answers(tmp_path: Path, pause: bool) -> None:
    profile, task = setup(tmp_path, pause)
    lines = ndjson(str(task), "--profile", str(profile), "--offline")
    start, result = lines[0], lines[-1]
    assert [e["type"] for e in start["context_management"]["edits"]] == ["compact_20260112"]
    compacting = [t for t in turns(lines) if t["usage"]["compactions"]]
    assert len(compacting) == 1
    assert (compacting[0]["stop_reason"] == "compaction") is pause
    assert result["totals"]["compactions"] == 1
    assert all_found(result["text"])
    # The prompt after the compaction is far below the one that reached the trigger.
    index = turns(lines).index(compacting[0])
    assert prompt(turns(lines)[index - 1]) > 45_000
    assert prompt(turns(lines)[index + 1]) < 10_000
    records = read_records(next(sessions_dir().glob("*.jsonl")))
    sent = [r for r in records if r["type"] == "message" and r["message"]["role"] == "assistant"]
    blocks = [b for r in sent for b in r["message"]["content"] if b["type"] == "compaction"]
    assert len(blocks) == 1 and set(blocks[0]) == {"type", "content"}  # no null extras


@pytest.mark.slow
def test_resume_after_a_compaction(tmp_path: Path) -> None:
    profile, task = setup(tmp_path, True)
    first = ndjson(str(task), "--profile", str(profile), "--offline", "--max-turns", "17")
    assert any(t["stop_reason"] == "compaction" for t in turns(first))
    rest = ndjson("--resume", "last", "--max-turns", "120")
    assert rest[-1]["event"] == "result" and all_found(rest[-1]["text"])
    assert not any(t["usage"]["compactions"] for t in turns(rest))  # the summary was resent
    assert prompt(turns(rest)[0]) < 10_000  # the resent history starts at the summary
