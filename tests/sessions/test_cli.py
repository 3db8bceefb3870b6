"""The sessions, stats, simulate and tune commands end to end (CliRunner on real transcripts)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.sessions.transcript import Transcript
from agentctl.types import Usage

from .conftest import REPO

# Real servers or whole recorded runs per test: many short tests add up to several
# seconds, so `make test-fast` leaves this module to `make test`.
pytestmark = pytest.mark.slow


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})
    return result.exit_code, result.stdout, result.stderr


def test_list_json_has_one_row_per_session(research: Transcript, thinking: Transcript) -> None:
    code, out, _ = invoke("sessions", "list", "--json")
    rows = json.loads(out)
    assert code == 0
    assert {r["session"] for r in rows} == {research.id, thinking.id} and len(rows) == 2
    row = next(r for r in rows if r["session"] == research.id)
    assert (row["turns"], row["status"], row["model"]) == (
        len(research.turns), "end_turn", "claude-sonnet-5",
    )  # fmt: skip
    assert row["task"] == "Kestrel outage" and row["task_source"].endswith("task.md")
    assert row["cost_usd"] == pytest.approx(
        research.result["totals"]["cost_usd"] if research.result else 0
    )


def test_list_table_and_empty_list(research: Transcript) -> None:
    code, out, _ = invoke("sessions", "list")
    assert code == 0 and research.id in out and "end_turn" in out
    research.path.unlink()
    code, out, err = invoke("sessions", "list")
    assert (code, out) == (0, "") and "no sessions yet" in err


def test_show_has_turns_answer_and_memory_operations(research: Transcript) -> None:
    code, out, _ = invoke("sessions", "show", research.id[:12])
    assert code == 0
    assert "memory operations" in out and "str_replace" in out
    assert "From my notes" in out  # the final answer
    assert "cache hit ratio" in out


@pytest.mark.parametrize("ref", ["nope", "2"])
def test_unknown_or_ambiguous_ids_are_one_line_errors(
    research: Transcript, thinking: Transcript, ref: str
) -> None:
    code, out, err = invoke("sessions", "show", ref)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"agentctl: session {ref}:")
    assert ("ambiguous" in err) == (ref == "2")


def test_last_is_the_newest(research: Transcript, thinking: Transcript, tmp_path: Path) -> None:
    code, out, _ = invoke("sessions", "export", "last")
    assert code == 0 and json.loads(out)["session"] == thinking.id


def test_export_to_a_file(research: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code, out, err = invoke("sessions", "export", research.id, "-o", str(target))
    data = json.loads(target.read_text())
    assert code == 0 and out == "" and "wrote" in err
    assert data["format"] == "agentctl-session-export" and data["status"] == "end_turn"
    assert len(data["turns"]) == len(research.turns) >= 20
    assert data["turns"][-1]["event"]["applied_edits"]
    assert data["turns"][0]["request"]["model"] == "claude-sonnet-5"
    assert data["messages"][0]["role"] == "user" and data["result"]["turns"] == len(research.turns)


def test_rm_asks_and_refuses_without_a_terminal(research: Transcript) -> None:
    code, _, err = invoke("sessions", "rm", research.id)
    assert code == 2 and "--yes" in err and research.path.exists()
    code, _, err = invoke("sessions", "rm", research.id, "--yes")
    assert code == 0 and not research.path.exists() and research.id in err


def test_stats_prints_the_chart_and_writes_svg(research: Transcript, tmp_path: Path) -> None:
    svg = tmp_path / "chart.svg"
    code, out, err = invoke("stats", research.id, "--svg", str(svg))
    assert code == 0 and "wrote" in err
    assert "prompt size per turn" in out and "✂ new" in out and "break-even" in out
    text = svg.read_text()
    assert text.startswith("<svg") and "prompt&#160;size&#160;per&#160;turn" in text
    assert 'url("' not in text and "cdnjs" not in text  # nothing fetched when it is opened
    assert 'local("FiraCode-Regular")' in text and "monospace" in text  # local, else generic
    assert len(set(re.findall(r"fill: (#[0-9a-f]{6})", text))) >= 4  # coloured despite NO_COLOR


def test_stats_json(research: Transcript) -> None:
    code, out, _ = invoke("stats", research.id, "--json")
    data = json.loads(out)
    assert code == 0 and data["trigger"] == 60_000
    turns = {t.turn: t for t in research.turns}
    for row in data["turns"]:
        turn = turns[row["turn"]]
        assert row["seen"] == turn.usage.prompt_tokens
        assert row["sent"] == row["seen"] + turn.cleared_input_tokens
        assert row["edited"] == bool(turn.event.applied_edits)
    assert [e["turn"] for e in data["edits"]] == [
        r["turn"] for r in data["turns"] if r["new_clearing"]
    ]
    assert data["remedies"] and data["totals"]["cost_usd"] > 0


def test_tune_refuses_a_model_without_a_price(research: Transcript) -> None:
    lines = research.path.read_text().splitlines()
    header = json.loads(lines[0])
    header["model"] = header["profile"]["model"] = "claude-unknown-9"
    research.path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    code, _, err = invoke("tune", research.id)
    assert code == 2 and "no price for model claude-unknown-9" in err
    code, out, _ = invoke("sessions", "list")
    assert code == 0 and "n/a" in out
    prices = {"input": 1.0, "output": 1.0, "cache_write_5m": 1.0, "cache_write_1h": 1.0}
    header["profile"]["prices"] = {"claude-unknown-9": {**prices, "cache_read": 1.0}}
    research.path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    (row,) = json.loads(invoke("sessions", "list", "--json")[1])
    usage = sum((t.usage for t in research.turns), Usage())
    assert row["cost_usd"] == pytest.approx((usage.prompt_tokens + usage.output_tokens) / 1e6)
    code, out, _ = invoke("tune", research.id, "--grid", "keep=2")
    assert code == 0 and "Pareto front" in out


def test_simulate_json_side_by_side(research: Transcript) -> None:
    code, out, _ = invoke(
        "simulate", research.id, "--profile", str(REPO / "configs" / "aggressive.toml"), "--json"
    )
    data = json.loads(out)
    assert code == 0
    assert data["replay_matches_recording"] is True and data["reconstructed"] is False
    assert data["calibration"]["factor"] == 1.0
    assert len(data["turns"]) == len(research.turns)
    assert data["totals"]["recorded"]["cost_usd"] == pytest.approx(
        research.result["totals"]["cost_usd"] if research.result else 0
    )
    assert (
        data["totals"]["simulated"]["cleared_input_tokens"]
        != data["totals"]["recorded"]["cleared_input_tokens"]
    )
    assert "cannot know how the model would have acted" in data["limits"]
    fixes = data["edits"]["remedies"]["recorded"]
    assert fixes and all(
        f["base_cost_usd"] == data["totals"]["recorded"]["cost_usd"] for f in fixes
    )


def test_simulate_table_says_what_it_cannot_know(research: Transcript) -> None:
    code, out, _ = invoke(
        "simulate", research.id, "--profile", str(REPO / "configs" / "no-editing.toml")
    )
    assert code == 0 and "replay of recorded settings" in out and "exact" in out
    assert "cannot know how the model would have acted" in out


def test_simulate_says_it_keeps_the_recorded_model(research: Transcript) -> None:
    profile = str(REPO / "configs" / "aggressive.toml")
    args = ("simulate", research.id, "--profile", profile, "--set", 'model="claude-opus-5-5"')
    code, out, _ = invoke(*args)
    assert code == 0 and "keeps the recorded model claude-sonnet-5" in out


def test_simulate_with_a_missing_profile_is_a_config_error(research: Transcript) -> None:
    code, _, err = invoke("simulate", research.id, "--profile", "nope.toml")
    assert code == 2 and "nope.toml" in err


def test_tune_writes_the_winner(research: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "tuned.toml"
    code, out, err = invoke(
        "tune", research.id, "--grid", "trigger=20000;keep=1,4", "--write", str(target)
    )
    assert code == 0 and "Pareto front" in out and "◀ recorded" in out
    assert "keep = 1" in target.read_text()
    code, _, err = invoke("tune", research.id, "--grid", "keep=x")
    assert code == 2 and "keep" in err


def test_tune_json(research: Transcript) -> None:
    code, out, _ = invoke("tune", research.id, "--grid", "trigger=30000;keep=2", "--json")
    data = json.loads(out)
    assert code == 0 and data["candidates"] == 3
    assert data["winner"]["cost_usd"] <= data["recorded"]["cost_usd"]


@pytest.mark.slow
def test_sessions_list_does_not_import_the_sdk(research: Transcript) -> None:
    code = (
        "import sys\n"
        "from agentctl.cli.main import main\n"
        "sys.argv = ['agentctl', 'sessions', 'list', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'anthropic' not in sys.modules and 'httpx' not in sys.modules, 'heavy import'\n"
    )
    env_home = str(research.path.parent.parent)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env={"AGENTCTL_HOME": env_home, "PATH": "/usr/bin:/bin"}, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["session"] == research.id


@pytest.mark.slow
def test_stats_and_simulate_do_not_import_the_sdk(research: Transcript) -> None:
    aggressive = str(REPO / "configs" / "aggressive.toml")
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from agentctl.cli.main import app\n"
        f"r = CliRunner().invoke(app, ['stats', {research.id!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        f"r = CliRunner().invoke(app, ['simulate', {research.id!r}, '--profile', {aggressive!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env={"AGENTCTL_HOME": str(research.path.parent.parent), "PATH": "/usr/bin:/bin"},
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
