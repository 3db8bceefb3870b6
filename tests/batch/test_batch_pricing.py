"""A session run through Message Batches stays at batch price after the batch: `sessions
list`, `stats` and `simulate` of it show half the cost of the same task via messages (JSON
rounds to 6 decimals: the exact 0.5x is checked on values in tests/sessions/test_batch_priced.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app

from .test_batch_cli import batch, make_tasks, results

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default memory root is ./memory


def _json(*args: str) -> Any:
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _session_of(tasks: Path, out: Path, via: str) -> str:
    """The one task, offline (one fresh emulator either way, so the same usage)."""
    done = batch(str(tasks), "--offline", "--via", via, "--out", str(out))
    assert done.exit_code == 0, done.output
    (row,) = results(out).values()
    assert row["pricing"] == ("batch" if via == "batches" else "list")
    return str(row["session"])


@pytest.mark.slow  # two batches and a replay: over a second
def test_a_batch_session_is_priced_at_half_everywhere(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 1)
    ids = {via: _session_of(tasks, tmp_path / via, via) for via in ("messages", "batches")}
    listed = {row["session"]: row for row in _json("sessions", "list")}
    rows = {via: listed[ids[via]] for via in ids}
    assert (rows["batches"]["pricing"], rows["messages"]["pricing"]) == ("batch", "list")
    assert rows["batches"]["prompt_tokens"] == rows["messages"]["prompt_tokens"]
    assert rows["messages"]["cost_usd"] > 0
    assert rows["batches"]["cost_usd"] == pytest.approx(rows["messages"]["cost_usd"] / 2, abs=1e-6)
    stats = {via: _json("stats", ids[via]) for via in ids}
    assert stats["batches"]["pricing"] == "batch"
    totals = {via: stats[via]["totals"] for via in ids}
    assert totals["batches"]["input_tokens"] == totals["messages"]["input_tokens"]
    half = totals["messages"]["cost_usd"] / 2
    assert totals["batches"]["cost_usd"] == pytest.approx(half, abs=1e-6)
    profile = str(REPO / "configs" / "balanced.toml")
    sims = {via: _json("simulate", ids[via], "--profile", profile) for via in ids}
    assert sims["batches"]["pricing"] == "batch" and sims["messages"]["pricing"] == "list"
    for side in ("recorded", "simulated"):
        half = sims["messages"]["totals"][side]["cost_usd"] / 2
        assert sims["batches"]["totals"][side]["cost_usd"] == pytest.approx(half, abs=1e-6)
