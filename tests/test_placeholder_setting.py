"""The server model's placeholder: the cleared-result text (not public) is a setting end to end.

The offline emulator substitutes it, its tokens change what clearing frees, and `simulate` with
the run's own profile reproduces the run exactly because it uses the same setting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app


def _task(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for i in range(6):
        body = "\n".join(f"line {n} of report {i}: latency budget notes" for n in range(120))
        (workspace / f"report{i}.txt").write_text(f"Finding {i}: latency rose {i}%\n{body}\n")
    task = tmp_path / "task.md"
    task.write_text(
        '+++\n[memory]\nroot = "mem"\n[context_editing.tool_uses]\n'
        'trigger = 4000\nkeep = 1\nclear_at_least = 1\nexclude_tools = ["memory"]\n+++\n'
        "Report every finding about latency.\n"
    )
    return task


def _run(task: Path, placeholder: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(task),
            "--offline",
            "--json",
            "--set",
            f"context_editing.server_model=unedited,placeholder={placeholder}",
        ],
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def _cleared(events: list[dict[str, Any]]) -> int:
    result = next(e for e in events if e["event"] == "result")
    return int(result["totals"]["cleared_input_tokens"])


@pytest.mark.dates
def test_a_longer_placeholder_frees_fewer_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    short_dir, long_dir = tmp_path / "a", tmp_path / "b"
    short_dir.mkdir()
    long_dir.mkdir()
    short = _cleared(_run(_task(short_dir), "[gone]"))
    long_text = "[this tool result was removed by server-side context editing " + "x" * 200 + "]"
    long = _cleared(_run(_task(long_dir), long_text))
    assert short > 0
    assert long < short


@pytest.mark.dates
def test_simulate_with_the_runs_own_placeholder_reproduces_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    events = _run(_task(tmp_path), "[gone]")
    session = next(e for e in events if e["event"] == "start")["session"]
    profile = tmp_path / "p.toml"
    profile.write_text(
        'context_editing.server_model = "unedited,placeholder=[gone]"\n'
        "[context_editing.tool_uses]\n"
        'trigger = 4000\nkeep = 1\nclear_at_least = 1\nexclude_tools = ["memory"]\n'
    )
    out = CliRunner().invoke(app, ["simulate", session, "--profile", str(profile), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    recorded = [t["applied_edits"] for t in events if t["event"] == "turn"]
    assert any(recorded)
    assert report["totals"]["simulated"] == report["totals"]["recorded"]
    assert [t["simulated"]["applied_edits"] for t in report["turns"]] == recorded
