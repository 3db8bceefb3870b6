"""`batch --resume` of tasks that stopped on a limit (issue 21): a plain resume leaves them and
says how to go on; a raised `--max-turns` / `--max-usd` continues exactly those tasks from
their own transcripts, each task against its own emulator over real HTTP."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentctl.batch import ResultsStore, run_batch
from agentctl.batch.launch import BatchRequest, plan_batch
from agentctl.errors import UsageError

from .test_batch_cli import batch, make_tasks, results
from .test_batch_state import jsonl


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of its own (the default memory root ./memory, the default workspace .), beside
    the batch folder (which may not lie inside the workspace)."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


def source_with_short_tasks(tmp_path: Path) -> Path:
    """Three tasks; `a` and `c` may take 2 turns, fewer than the emulator's answer needs."""
    return jsonl(
        tmp_path / "src",
        {"id": "a", "task": "Summarise the notes, part a.", "set": {"max_turns": 2}},
        {"id": "b", "task": "Summarise the notes, part b."},
        {"id": "c", "task": "Summarise the notes, part c.", "set": {"max_turns": 2}},
    )


def turns_recorded(session: str) -> int:
    """The turns the session's transcript holds (docs/run.md, "Transcript format"): numbered
    1, 2, ... in one file, with a `resume` record where it was continued."""
    path = Path(os.environ["AGENTCTL_HOME"]) / "sessions" / f"{session}.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    turns = [r["turn"] for r in records if r["type"] == "response"]
    assert turns == list(range(1, len(turns) + 1))
    return len(turns)


def resumes_recorded(session: str) -> int:
    path = Path(os.environ["AGENTCTL_HOME"]) / "sessions" / f"{session}.jsonl"
    return sum(json.loads(line)["type"] == "resume" for line in path.read_text().splitlines())


@pytest.mark.slow
def test_a_plain_resume_leaves_limit_stops_and_a_raised_one_continues_them(
    tmp_path: Path,
) -> None:
    """Before: a task stopped by max_turns counted as done, and no resume could go on with it."""
    out = tmp_path / "out"
    first = batch(str(source_with_short_tasks(tmp_path)), "--offline", "--out", str(out))
    assert first.exit_code == 3, first.output
    stopped = results(out)
    assert [(row["status"], row.get("limit")) for row in stopped.values()] == [
        ("limit", "max_turns"),
        ("ok", None),
        ("limit", "max_turns"),
    ]
    again = batch("--resume", str(out), "--json")
    assert again.exit_code == 3, again.output
    assert f"agentctl: batch: 2 tasks stopped on a limit, left as they are: a (max_turns), c " \
        f"(max_turns); to continue them from where they stopped, raise the limit: agentctl " \
        f"batch --resume {out} --max-turns N\n" in again.stderr  # fmt: skip
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert [e["event"] for e in events] == ["batch_start", "executor", "batch_end"]
    assert events[-1]["counts"]["limit"] == 2 and events[-1]["tasks"] == 3

    raised = batch("--resume", str(out), "--max-turns", "20", "--json")
    assert raised.exit_code == 0, raised.output
    events = [json.loads(line) for line in raised.stdout.splitlines()]
    assert events[0]["todo"] == 2
    assert sorted(e["id"] for e in events if e["event"] == "task_start") == ["a", "c"]
    now = results(out)  # an id's last line counts
    assert {key: row["status"] for key, row in now.items()} == {"a": "ok", "b": "ok", "c": "ok"}
    assert now["b"] == stopped["b"]  # not run again
    for key in ("a", "c"):
        before, after = stopped[key], now[key]
        assert after["session"] == before["session"]  # the same transcript, continued
        assert after["turns"] == turns_recorded(after["session"]) > before["turns"] == 2
        assert resumes_recorded(after["session"]) == 1
        assert after["cost_usd"] > before["cost_usd"]
        assert after["error"] is None and "file(s)" in after["answer"], after
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b", "c", "a", "c"]
    total = sum(row["cost_usd"] for row in now.values())
    assert events[-1]["cost_usd"] == pytest.approx(total, abs=1e-6)
    assert events[-1]["counts"]["ok"] == 3 and events[-1]["tasks"] == 3


@pytest.mark.slow
def test_a_raised_budget_continues_the_task_it_stopped(tmp_path: Path) -> None:
    """The batch budget stops the first task and skips the rest; `--max-usd` higher on resume
    continues that task from its transcript and starts the others, within the new budget."""
    out = tmp_path / "out"
    tasks = make_tasks(tmp_path, 3)
    first = run_batch(tasks, offline=True, max_usd=0.005, out=out)
    (stopped,) = first.results
    assert (stopped["id"], stopped["status"], stopped["limit"]) == ("t00", "limit", "max_usd")
    assert first.skipped == ("t01", "t02")
    plain = run_batch(resume=out)
    assert plain.skipped == ("t01", "t02") and plain.results == first.results

    done = run_batch(resume=out, max_usd=1.0)
    rows = {row["id"]: row for row in done.results}
    assert {key: row["status"] for key, row in rows.items()} == {"t00": "ok", "t01": "ok",
                                                                "t02": "ok"}  # fmt: skip
    assert rows["t00"]["session"] == stopped["session"]
    assert rows["t00"]["turns"] == rows["t01"]["turns"] == turns_recorded(stopped["session"])
    assert rows["t00"]["cost_usd"] > stopped["cost_usd"]
    assert done.summary.cost_usd == pytest.approx(sum(r["cost_usd"] for r in rows.values()))
    assert done.summary.counts["skipped"] == 0 and done.summary.tasks == 3


def test_only_the_limit_raised_is_continued(tmp_path: Path) -> None:
    """--max-usd continues cost stops, not turn stops (and the other way round)."""
    lines = [
        {"id": "a", "status": "limit", "limit": "max_turns", "session": "s1", "cost_usd": 0.1},
        {"id": "b", "status": "limit", "limit": "max_usd", "session": "s2", "cost_usd": 0.2},
        {"id": "c", "status": "limit", "limit": "max_input_tokens", "session": "s3"},
        {"id": "d", "status": "ok", "session": "s4"},
    ]
    out = saved(tmp_path, lines)
    for flags, expected in [
        ({}, []),
        ({"max_turns": 5}, ["a"]),
        ({"max_usd": 5.0}, ["b"]),
        ({"max_turns": 5, "max_usd": 5.0}, ["a", "b"]),
    ]:
        ready = plan_batch(BatchRequest(resume=out, **flags))  # type: ignore[arg-type]
        ready.lock.release()
        assert sorted(ready.raised.lines) == expected, flags
        assert ready.todo == len(expected)
        left = [line["id"] for line in ready.left_at_limit()]
        assert left == [key for key in ("a", "b", "c") if key not in expected]


def test_a_note_for_limits_no_batch_flag_raises(tmp_path: Path) -> None:
    out = saved(tmp_path, [{"id": "c", "status": "limit", "limit": "max_input_tokens"}])
    done = batch("--resume", str(out), "--max-turns", "5")
    assert done.exit_code == 3, done.output
    assert (
        "agentctl: batch: 1 task stopped on a limit, left as it is: c (max_input_tokens); "
        "no batch flag raises these; continue one with agentctl run --resume SESSION --set\n"
    ) in done.stderr


def test_continuing_on_ray_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = saved(tmp_path, [{"id": "a", "status": "limit", "limit": "max_turns", "session": "s"}])
    with pytest.raises(UsageError) as caught:
        plan_batch(BatchRequest(resume=out, executor="ray", max_turns=5))
    assert str(caught.value) == (
        "--max-turns/--max-usd on --resume continue 1 tasks stopped on a limit from their "
        "transcripts, here: not with --executor ray; add --executor local"
    )


def test_max_turns_on_a_new_batch_is_the_profile_key(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "src", {"id": "a", "task": "hi"})
    ready = plan_batch(BatchRequest(str(source), offline=True, out=tmp_path / "out", max_turns=4))
    ready.lock.release()
    assert ready.spec.sets == ("max_turns=4",)
    assert ready.raised.lines == {}


def test_an_ids_last_line_is_the_one_read_back(tmp_path: Path) -> None:
    out = saved(tmp_path, [{"id": "a", "status": "limit"}, {"id": "b"}, {"id": "a", "turns": 9}])
    store = ResultsStore(out)
    assert store.lines == [{"id": "a", "turns": 9}, {"id": "b"}]
    store.write({"id": "b", "status": "ok"})
    assert store.lines == [{"id": "a", "turns": 9}, {"id": "b", "status": "ok"}]
    assert len((out / "results.jsonl").read_text().splitlines()) == 4


def saved(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    """A batch folder of a JSONL source with the ids of `lines`, holding those result lines."""
    ids = sorted({str(line["id"]) for line in lines})
    source = jsonl(tmp_path / "src", *({"id": key, "task": "x"} for key in ids))
    out = tmp_path / "out"
    out.mkdir()
    spec = {"format": "agentctl-batch-1", "source": str(source), "offline": True}
    (out / "batch.json").write_text(json.dumps(spec))
    (out / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


@pytest.mark.slow
def test_a_batch_via_batches_continues_through_batches(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tasks = make_tasks(tmp_path, 2)
    flags = ["--offline", "--via", "batches", "--out", str(out), "-q"]
    assert batch(str(tasks), *flags, "--max-turns", "2").exit_code == 3
    done = batch("--resume", str(out), "--max-turns", "10", "-q")
    assert done.exit_code == 0, done.output
    rows = results(out)
    assert {row["status"] for row in rows.values()} == {"ok"}
    assert {row["pricing"] for row in rows.values()} == {"batch"}
    assert all(row["turns"] == turns_recorded(row["session"]) > 2 for row in rows.values())
