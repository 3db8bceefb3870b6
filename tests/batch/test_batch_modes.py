"""The ways a batch can run (`--parallel`, `--via batches`, `--executor ray`) give the same
answers, keep the base memory unchanged and resume; plus the Python API (`agentctl.run_batch`).

Ray tests share one local Ray instance per module (2 CPUs, no dashboard): starting one costs
seconds, a task on it well under one.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.memory.lock import LOCK_NAME

from .test_batch_cli import batch, make_tasks, results, tree_hash

# mode -> the flags that select it; each must give the answers of the local batch at
# --parallel 1 (a new way to run a batch adds a line here).
MODES: dict[str, list[str]] = {
    "local-parallel-4": ["--parallel", "4"],
    "via-batches": ["--via", "batches"],
    "ray": ["--executor", "ray", "--parallel", "4"],
}
NEEDS_RAY = {"ray"}


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    """One local Ray instance for the module, its workers started with the suite's safe
    environment (no key, no reachable API)."""
    ray = pytest.importorskip("ray")
    term = signal.getsignal(signal.SIGTERM)  # ray.init replaces it in this process
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AGENTCTL_PROFILE"):
            env.delenv(name, raising=False)
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    yield ray
    ray.shutdown()
    signal.signal(signal.SIGTERM, term)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The answers of 20 tasks run locally at --parallel 1 (its own home and folder)."""
    root = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AGENTCTL_HOME", str(root / "home"))
        env.chdir(root)
        tasks = make_tasks(root, 20)
        done = batch(str(tasks), "--offline", "--out", str(root / "out"))
    assert done.exit_code == 0, done.output
    return {"tasks": tasks, "answers": _answers(results(root / "out"))}


def _answers(lines: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {task_id: line["answer"] for task_id, line in lines.items()}


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default memory root is ./memory


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(MODES))
def test_twenty_tasks_give_the_answers_of_a_local_batch(
    mode: str, reference: dict[str, Any], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if mode in NEEDS_RAY:
        request.getfixturevalue("ray_instance")
    out = tmp_path / "out"
    done = batch(str(reference["tasks"]), "--offline", *MODES[mode], "--out", str(out))
    assert done.exit_code == 0, done.output
    lines = results(out)
    assert len(lines) == 20 and {line["status"] for line in lines.values()} == {"ok"}
    assert _answers(lines) == reference["answers"]
    assert "RENEWAL 2027-03-01" in lines["t07"]["answer"]
    assert len({line["session"] for line in lines.values()}) == 20
    assert "batch: 20 tasks: 20 ok" in done.stderr
    for task_id, line in lines.items():  # transcripts and memory landed here, as locally
        assert line["memory"] == str((out / "tasks" / task_id / "memory").resolve())
        assert len(list(Path(line["memory"]).glob("*.md"))) == 1
        transcript = Path(os.environ["AGENTCTL_HOME"]) / "sessions" / f"{line['session']}.jsonl"
        header = json.loads(transcript.read_text().splitlines()[0])
        assert (header["session"], header["memory_root"]) == (line["session"], line["memory"])
        assert header["workspace"] == str((reference["tasks"] / "ws").resolve())
        assert header["profile"]["memory"]["root"] == line["memory"]


@pytest.mark.slow
def test_ray_says_where_the_tasks_run(ray_instance: Any, tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 1)
    done = batch(str(tasks), "--offline", "--executor", "ray", "--json", "--out", "o")
    assert done.exit_code == 0, done.output
    events = [json.loads(line) for line in done.stdout.splitlines()]
    said = [e for e in events if e["event"] == "executor"]
    assert said == [{"event": "executor", "executor": "ray", "where": said[0]["where"]}]
    assert f"agentctl: batch: tasks run on {said[0]['where']}" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(MODES))
def test_isolated_memory_leaves_the_base_root_unchanged(
    mode: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if mode in NEEDS_RAY:
        request.getfixturevalue("ray_instance")
    tasks = make_tasks(tmp_path, 3)
    base = tmp_path / "base-memory"
    (base / "projects").mkdir(parents=True)
    (base / "projects" / "notes.md").write_text("# Earlier notes\n- kept\n")
    (base / LOCK_NAME).write_text("")
    before = tree_hash(base)
    out = tmp_path / "out"
    flags = ["--offline", *MODES[mode], "--set", f"memory.root={base}"]
    done = batch(str(tasks), *flags, "--out", str(out))
    assert done.exit_code == 0, done.output
    assert tree_hash(base) == before
    for task_id, row in results(out).items():
        memory = Path(row["memory"])
        assert memory == (out / "tasks" / task_id / "memory").resolve()
        assert (memory / "projects" / "notes.md").read_text() == "# Earlier notes\n- kept\n"
        assert len(list(memory.glob("*.md"))) == 1  # the note this task wrote (brought back)


@pytest.mark.slow
def test_a_cut_batch_resumes_on_ray_without_redoing_finished_tasks(
    ray_instance: Any, tmp_path: Path
) -> None:
    tasks, out = make_tasks(tmp_path, 5), tmp_path / "out"
    assert batch(str(tasks), "--offline", "--out", str(out)).exit_code == 0
    kept = (out / "results.jsonl").read_text().splitlines(keepends=True)[:3]
    (out / "results.jsonl").write_text("".join(kept) + kept[0][:20])  # killed mid-line
    first = {line["id"]: line for line in map(json.loads, kept)}
    again = batch("--resume", str(out), "--executor", "ray", "--json")
    assert again.exit_code == 0, again.output
    events = [json.loads(line) for line in again.stdout.splitlines()]
    started = {e["id"] for e in events if e["event"] == "task_start"}
    assert started == {"t00", "t01", "t02", "t03", "t04"} - set(first)
    final = results(out)
    assert len(final) == 5 and all(final[k] == first[k] for k in first)
    assert json.loads((out / "batch.json").read_text())["executor"] == "local"  # as saved


def test_ray_refuses_shared_memory_before_starting(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 1)
    done = batch(str(tasks), "--offline", "--executor", "ray", "--memory", "shared")
    assert done.exit_code == 2
    assert "--memory shared cannot be used with --executor ray" in done.stderr
    assert not list((Path(os.environ["AGENTCTL_HOME"])).glob("batches/*"))


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--executor", "dask"], "--executor dask: use local or ray"),
        (["--address", "ray://h:1"], "--address names a Ray cluster: use it with --executor ray"),
    ],
)
def test_bad_executor_flags(tmp_path: Path, flags: list[str], says: str) -> None:
    done = batch(str(make_tasks(tmp_path, 1)), "--offline", *flags)
    assert (done.exit_code, done.stderr.strip()) == (2, f"agentctl: {says}")


@pytest.mark.dates
def test_run_batch_from_python(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    rows = [
        {"id": f"q{n}", "task": f"Say hi {n}.", "set": {"tools.workspace": False}} for n in (1, 2)
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    seen: list[str] = []
    report = agentctl.run_batch(
        source,
        offline=True,
        parallel=2,
        out=tmp_path / "b",
        on_event=lambda e: seen.append(type(e).__name__),
    )
    assert isinstance(report, agentctl.BatchResult)
    assert report.out == tmp_path / "b" and not report.interrupted
    assert sorted(line["id"] for line in report.results) == ["q1", "q2"]
    assert report.summary.counts["ok"] == 2
    assert seen.count("TaskEnded") == 2 and seen[0] == "ExecutorReady"
    again = agentctl.run_batch(resume=tmp_path / "b")
    assert len(again.results) == 2 and again.summary.counts["ok"] == 2
    with pytest.raises(agentctl.UsageError, match="runs a saved batch as it was"):
        agentctl.run_batch(source, resume=tmp_path / "b")


@pytest.mark.parametrize("via", ["messages", "batches"])
def test_a_result_line_carries_the_structured_output(tmp_path: Path, via: str) -> None:
    schema = tmp_path / "answer.schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {"summary": {"type": "string"}},
                "required": ["summary"],
                "additionalProperties": False,
            }
        )
    )
    source = tmp_path / "tasks.jsonl"
    rows = [{"id": f"q{n}", "task": f"Say hi {n}."} for n in (1, 2)]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = agentctl.run_batch(
        source,
        offline=True,
        via=via,
        out=tmp_path / "b",
        sets=[f"output.schema={schema}", "tools.workspace=false"],
    )
    lines = {line["id"]: line for line in report.results}
    assert report.summary.counts["ok"] == 2, lines
    for line in lines.values():
        assert isinstance(line["output"], dict) and isinstance(line["output"]["summary"], str)
        assert json.loads(line["answer"]) == line["output"]


def test_a_result_line_without_a_schema_has_no_output(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text(json.dumps({"id": "q1", "task": "Say hi."}) + "\n")
    report = agentctl.run_batch(
        source, offline=True, out=tmp_path / "b", sets=["tools.workspace=false"]
    )
    assert [line["output"] for line in report.results] == [None]


@pytest.mark.slow
def test_ctrl_c_stops_a_ray_batch_and_resume_finishes_it(ray_instance: Any, tmp_path: Path) -> None:
    tasks, out = make_tasks(tmp_path, 6), tmp_path / "out"

    def interrupt(event: Any) -> None:  # Ctrl-C as the first task starts
        if type(event).__name__ == "TaskStarted":
            raise KeyboardInterrupt

    cut = agentctl.run_batch(
        tasks, offline=True, executor="ray", parallel=2, out=out, on_event=interrupt
    )
    assert cut.interrupted and cut.results == ()
    assert cut.unfinished == tuple(f"t{n:02}" for n in range(6))
    assert cut.summary.counts["unfinished"] == 6
    done = agentctl.run_batch(resume=out)  # the executor saved in batch.json: ray
    assert not done.interrupted and done.summary.counts["ok"] == 6


@pytest.mark.slow
def test_an_interrupted_ray_batch_returns_once_no_task_is_being_planned(
    ray_instance: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ray task is planned in this process (its memory copied into the batch folder):
    Ctrl-C returns only when no plan is under way and starts none, so a resume started at
    once cannot meet one (it used to, under load: FileExistsError on a task's memory)."""
    from agentctl.batch import ray_executor

    real, under_way = ray_executor.plan_task, []
    entered, finish = threading.Event(), threading.Event()

    def held_plan(task: Any, context: Any, **options: Any) -> Any:
        under_way.append(task.id)
        entered.set()
        finish.wait(60)  # a bound, so that a broken wait cannot hang the suite
        try:
            return real(task, context, **options)
        finally:
            under_way.remove(task.id)

    def interrupt(event: Any) -> None:  # Ctrl-C while the first task is being planned
        if type(event).__name__ == "TaskStarted":
            assert entered.wait(60)
            # Set later from another thread: code that does not wait returns before it.
            threading.Timer(0.5, finish.set).start()
            raise KeyboardInterrupt

    monkeypatch.setattr(ray_executor, "plan_task", held_plan)
    out = tmp_path / "out"
    tasks = make_tasks(tmp_path, 2)
    cut = agentctl.run_batch(
        tasks, offline=True, executor="ray", parallel=1, out=out, on_event=interrupt
    )
    assert cut.interrupted and under_way == []  # the plan under way ended before the return
    done = agentctl.run_batch(resume=out)
    assert not done.interrupted and done.summary.counts["ok"] == 2


@pytest.mark.dates
def test_without_ray_installed_the_batch_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    done = batch(str(make_tasks(tmp_path, 1)), "--offline", "--executor", "ray", "--out", "o")
    assert done.exit_code == 2
    assert "agentctl: --executor ray needs Ray on this machine: pip install 'agentctl[ray]'" in (
        done.stderr
    )
    assert not (tmp_path / "o" / "results.jsonl").exists()


@pytest.mark.slow
def test_on_ray_the_budget_counts_when_a_task_comes_back(ray_instance: Any, tmp_path: Path) -> None:
    tasks, out = make_tasks(tmp_path, 4), tmp_path / "out"
    flags = ["--offline", "--executor", "ray", "--max-usd", "0.000001", "--json"]
    done = batch(str(tasks), *flags, "--out", str(out))
    assert done.exit_code == 3, done.output
    (first,) = results(out).values()  # planned with the whole budget as its own limit
    assert (first["id"], first["status"], first["exit_code"]) == ("t00", "limit", 3)
    assert "cost budget reached" in first["error"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["id"] for e in events if e["event"] == "task_skipped"] == ["t01", "t02", "t03"]
