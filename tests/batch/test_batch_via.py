"""`agentctl batch --via batches`: lockstep rounds through the Message Batches endpoints of the
emulator, against `--via messages` (the default) on the same tasks. That it gives the answers
of every other way to run a batch: tests/batch/test_batch_modes.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.agent.client import AnthropicBatches
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.rounds import RoundCoordinator
from agentctl.batch import BatchSpec, ResultsStore, read_source, run_tasks
from agentctl.emulator import BatchTiming, parse_batch_faults, running
from tests.emulator.helpers import make_client

from .test_batch_cli import batch, make_tasks, results


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default memory root is ./memory


@pytest.mark.slow
def test_batches_cost_half_of_messages_for_the_same_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both against one fresh emulator each (not --offline, where every task of --via
    messages gets an emulator, and so a cache, of its own), so the usage is the same."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    tasks = make_tasks(tmp_path, 5)
    rows = {}
    for mode in ("messages", "batches"):
        with running() as emu:
            flags = ["--set", f"api.base_url={emu.base_url}", "--out", str(tmp_path / mode)]
            flags += ["--via", mode, "--parallel", "1" if mode == "messages" else "5"]
            done = batch(str(tasks), *flags, "--json")
        assert done.exit_code == 0, done.output
        rows[mode] = results(tmp_path / mode)
        end = json.loads(done.stdout.splitlines()[-1])
        assert end["pricing"] == ("batch" if mode == "batches" else "list")
    usage = ("input_tokens", "output_tokens", "cache_read_input_tokens")
    for task_id, row in rows["batches"].items():
        listed = rows["messages"][task_id]
        assert {k: row["totals"][k] for k in usage} == {k: listed["totals"][k] for k in usage}
        assert row["pricing"] == "batch" and listed["pricing"] == "list"
    total = {mode: sum(row["cost_usd"] for row in rows[mode].values()) for mode in rows}
    assert total["messages"] > 0
    assert total["batches"] == pytest.approx(total["messages"] / 2, rel=1e-4)


@pytest.mark.dates
def test_failed_requests_of_a_round_go_again_in_the_next_batch(tmp_path: Path) -> None:
    tasks = read_source(str(make_tasks(tmp_path, 3)))
    spec = BatchSpec(source="tasks", via="batches", parallel=3)
    out = tmp_path / "out"
    out.mkdir()
    store = ResultsStore(out)
    faults = parse_batch_faults("t01:errored,t02:expired*2")
    with running(batch_faults=faults) as emu:
        api = AnthropicBatches(
            api_key="k", base_url=emu.base_url, timeout_s=5, retry=RetryPolicy(0)
        )
        rounds = RoundCoordinator(api, max_retries=2)
        run_tasks(spec, tasks, out, store, lambda event: None, rounds=rounds)
    lines = results(out)
    assert {row["status"] for row in lines.values()} == {"ok"}
    assert "RENEWAL 2027-03-01" in lines["t02"]["answer"]
    creates = [r.body for r in emu.requests if r.path == "/v1/messages/batches"]
    firsts = [[q["custom_id"] for q in body["requests"]] for body in creates[:3]]
    assert firsts == [["t00", "t01", "t02"], ["t00", "t01", "t02"], ["t00", "t01", "t02"]]
    first_turns = [
        q for body in creates for q in body["requests"] if len(q["params"]["messages"]) == 1
    ]
    assert sorted(q["custom_id"] for q in first_turns) == ["t00", "t01", "t01", "t02", "t02", "t02"]
    assert rounds.stats.retried == 3


def test_an_unknown_via_is_refused(tmp_path: Path) -> None:
    done = batch(str(make_tasks(tmp_path, 1)), "--via", "carrier-pigeon")
    assert done.exit_code == 2
    assert "--via carrier-pigeon: use messages or batches" in done.stderr


@pytest.mark.slow
def test_a_batch_via_batches_resumes_the_same_way(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 4)
    out = tmp_path / "out"
    assert batch(str(tasks), "--offline", "--via", "batches", "--out", str(out)).exit_code == 0
    kept = (out / "results.jsonl").read_text().splitlines()
    kept = [line for line in kept if json.loads(line)["id"] in ("t00", "t03")]
    (out / "results.jsonl").write_text("".join(line + "\n" for line in kept))
    done = batch("--resume", str(out), "--json")
    assert done.exit_code == 0, done.output
    events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(e["id"] for e in events if e["event"] == "task_end") == ["t01", "t02"]
    assert json.loads((out / "batch.json").read_text())["via"] == "batches"
    assert {row["pricing"] for row in results(out).values()} == {"batch"}


@pytest.mark.slow
def test_ctrl_c_cancels_the_batch_in_flight(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 2)
    out = tmp_path / "out"
    with running(batch_timing=BatchTiming(ready_after=10**9)) as emu:  # never ends by itself
        flags = ["--via", "batches", "--set", f"api.base_url={emu.base_url}", "--out", str(out)]
        command = [sys.executable, "-m", "agentctl", "batch", str(tasks), *flags]
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key"}
        child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        polled = threading.Event()
        for _ in range(600):  # up to 30 s for the child to start and poll its first batch
            if any(r.method == "GET" for r in emu.requests) or polled.wait(0.05):
                break
        child.send_signal(signal.SIGINT)
        _, rest = child.communicate(timeout=60)
        cancels = [r.path for r in emu.requests if r.path.endswith("/cancel")]
        listed = make_client(emu.base_url).beta.messages.batches.list().data
    assert child.returncode == 130, rest
    assert "2 unfinished" in rest and "agentctl batch --resume" in rest
    assert [batch.id for batch in listed] == [path.split("/")[-2] for path in cancels]
    assert listed[0].processing_status == "canceling"


@pytest.mark.dates
def test_the_batch_budget_stops_tasks_in_flight(tmp_path: Path) -> None:
    """Every task is in flight at once via batches: the turn that spends the budget ends
    each task (a limit), instead of only keeping new tasks from starting."""
    out = tmp_path / "out"
    tasks = make_tasks(tmp_path, 4)
    done = batch(
        str(tasks), "--offline", "--via", "batches", "--max-usd", "0.004", "--out", str(out)
    )
    assert done.exit_code == 3, done.output
    lines = results(out)
    assert {row["status"] for row in lines.values()} == {"limit"}
    assert all(row["turns"] < 7 for row in lines.values())  # a whole task takes 7
    assert "the batch budget is spent (--max-usd 0.004)" in lines["t00"]["error"]
    # Over by less than two rounds: the one that crossed it, and the next for the tasks whose
    # turn was counted before the crossing.
    spent = sum(row["cost_usd"] for row in lines.values())
    turn = max(row["cost_usd"] / row["turns"] for row in lines.values())
    assert 0.004 <= spent < 0.004 + 2 * 4 * turn


def test_via_batches_on_ray_is_refused_before_anything_starts(tmp_path: Path) -> None:
    done = batch(
        str(make_tasks(tmp_path, 1)), "--via", "batches", "--executor", "ray", "--out", "o"
    )
    assert done.exit_code == 2
    assert "--via batches cannot be used with --executor ray" in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.dates
def test_offline_via_batches_refuses_a_task_with_its_own_web(tmp_path: Path) -> None:
    """One emulator answers every task via batches: a `web/` beside the tasks, which an
    offline run would serve, cannot be the web of that one emulator for some tasks only."""
    tasks = make_tasks(tmp_path, 2)
    (tasks / "web").mkdir()
    out = tmp_path / "out"
    done = batch(str(tasks), "--offline", "--via", "batches", "--out", str(out))
    assert done.exit_code == 1, done.output
    lines = results(out)
    assert {row["exit_code"] for row in lines.values()} == {2}
    assert "not with --via batches --offline" in lines["t00"]["error"]
    assert str(tasks / "t00.md") in lines["t00"]["error"]


@pytest.mark.dates
def test_run_batch_via_batches_from_python(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 3)
    report = agentctl.run_batch(tasks, offline=True, via="batches", out=tmp_path / "b")
    assert report.summary.counts["ok"] == 3
    assert {line["pricing"] for line in report.results} == {"batch"}
    assert json.loads((tmp_path / "b" / "batch.json").read_text())["parallel"] == 3
    with pytest.raises(agentctl.UsageError, match="--via post: use messages or batches"):
        agentctl.run_batch(tasks, via="post")


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--executor", "ray"], "--via batches cannot be used with --executor ray"),
        (["--via", "messages"], "give no source, profile, sets, out or via"),  # it did nothing
    ],
)
@pytest.mark.dates
def test_a_resume_of_a_batch_via_batches_refuses(
    flags: list[str], says: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = batch(str(make_tasks(tmp_path, 1)), "--offline", "--via", "batches", "--out", str(out))
    assert done.exit_code == 0, done.output
    again = batch("--resume", str(out), *flags)
    assert (again.exit_code, says in again.stderr) == (2, True), again.stderr
    with pytest.raises(agentctl.UsageError, match="give no source, profile, sets, out or via"):
        agentctl.run_batch(resume=out, via="messages")


@pytest.mark.dates
def test_offline_via_batches_refuses_a_task_with_its_own_server_model(tmp_path: Path) -> None:
    """The one emulator plays the batch profile's server model: a task naming another would
    silently get the batch's, so it is refused (the others run)."""
    tasks = make_tasks(tmp_path, 2)
    front = '+++\nworkspace = "ws"\n[context_editing]\nserver_model = "edited"\n+++\n'
    (tasks / "t01.md").write_text(f"{front}Summarise the notes, part 1.\n")
    out = tmp_path / "out"
    done = batch(str(tasks), "--offline", "--via", "batches", "--out", str(out))
    assert done.exit_code == 1, done.output
    lines = results(out)
    assert (lines["t00"]["status"], lines["t01"]["exit_code"]) == ("ok", 2)
    said = "context_editing.server_model 'edited': not with --via batches --offline"
    assert said in lines["t01"]["error"] and str(tasks / "t01.md") in lines["t01"]["error"]
    assert batch(str(tasks), "--offline", "--out", str(tmp_path / "o2")).exit_code == 0
