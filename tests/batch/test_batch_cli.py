"""`agentctl batch` end to end: CliRunner, each task against its own emulator over real HTTP."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from signal import SIGINT
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.memory.lock import LOCK_NAME


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default memory root is ./memory


def make_tasks(folder: Path, count: int) -> Path:
    """`count` task files sharing a two-file workspace (the emulator's answers quote it)."""
    tasks = folder / "tasks"
    (tasks / "ws").mkdir(parents=True)
    (tasks / "ws" / "a.txt").write_text("alpha: RENEWAL 2027-03-01\n")
    (tasks / "ws" / "b.txt").write_text("beta: NOTICE 30 days\n")
    for n in range(count):
        front = '+++\nworkspace = "ws"\n+++\n'
        (tasks / f"t{n:02}.md").write_text(f"{front}Summarise the notes, part {n}.\n")
    return tasks


def batch(*args: str) -> Any:
    return CliRunner().invoke(app, ["batch", *args])


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes() if path.is_file() else b"<dir>")
    return digest.hexdigest()


@pytest.mark.slow
def test_the_budget_stops_new_tasks(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 4)
    out = tmp_path / "out"
    done = batch(str(tasks), "--offline", "--max-usd", "0.000001", "--out", str(out), "--json")
    assert done.exit_code == 3, done.output
    (first,) = results(out).values()
    assert (first["id"], first["status"], first["exit_code"]) == ("t00", "limit", 3)
    assert "cost budget reached" in first["error"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    skipped = [e["id"] for e in events if e["event"] == "task_skipped"]
    assert skipped == ["t01", "t02", "t03"]
    assert events[-1]["counts"]["skipped"] == 3


def test_a_bad_jsonl_line_names_file_and_line(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    good = json.dumps({"id": "a", "task": "Say hi."})
    source.write_text(f'{good}\n\n{{"id": "b", "task": "x", "sett": {{}}}}\n')
    done = batch(str(source), "--offline", "--out", str(tmp_path / "out"))
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines() == [
        f"agentctl: batch source {source}:3: sett: unknown key (use id, task, set)"
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[1, 2]", "SRC:1: must be a JSON object with id and task"),
        ('{"id": "a/b", "task": "x"}', "SRC:1: id: must be letters, digits"),
        ('{"id": "a", "task": ""}', "SRC:1: task: must be a non-empty string"),
        ('{"id": "a", "task": "x", "set": []}', "SRC:1: set: must be an object"),
        ('{"id": "a", "task": "x"', "SRC:1: not valid JSON"),
        ('{"id": "a", "task": "x", "set": {"max_turnz": 1}}', "SRC:1: front matter: max_turnz"),
        ('{"id": "a", "task": "x"}\n{"id": "a", "task": "y"}', "SRC:2: id a already used by SRC:1"),
    ],
)
@pytest.mark.dates
def test_bad_jsonl_lines(tmp_path: Path, text: str, says: str) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text(text + "\n")
    done = batch(str(source), "--offline")
    assert done.exit_code == 2
    assert says.replace("SRC", str(source)) in done.stderr


@pytest.mark.slow
def test_a_jsonl_set_may_tune_but_not_widen(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    rows = [
        {"id": "tuned", "task": "Say hi.", "set": {"max_turns": 1, "tools.workspace": False}},
        {"id": "widened", "task": "Say hi.", "set": {"api.base_url": "http://elsewhere:1"}},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = batch(str(source), "--offline", "--out", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output  # a task failed
    lines = results(tmp_path / "out")
    assert (lines["tuned"]["status"], lines["tuned"]["turns"]) == ("limit", 1)
    assert (lines["widened"]["status"], lines["widened"]["exit_code"]) == ("failed", 2)
    assert "api.base_url" in lines["widened"]["error"]
    assert "--trust-task" in lines["widened"]["error"]


@pytest.mark.dates
def test_an_out_folder_holding_a_batch_is_not_reused(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"id": "a", "task": "x", "set": {"tools.workspace": false}}\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "batch.json").write_text("{}")
    done = batch(str(source), "--offline", "--out", str(tmp_path / "out"))
    assert done.exit_code == 2
    assert "already holds a batch; continue it with --resume" in done.stderr


def _jsonl_with_a_blocker(path: Path, count: int, blocker: int) -> None:
    """Tasks without the memory tool, but task `blocker` uses it (and so waits for its lock)."""
    rows = [
        {"id": f"t{n}", "task": f"Summarise part {n}.", "set": {"tools.memory": n == blocker}}
        for n in range(count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _blocked_batch(tmp_path: Path, count: int, blocker: int) -> tuple[Any, Path, int]:
    """`agentctl batch` in a subprocess (shared memory, --parallel 1) whose task `blocker`
    waits for the memory root's lock, held here: (the process, its out folder, the lock fd)."""
    import fcntl

    source, out, memory = tmp_path / "tasks.jsonl", tmp_path / "out", tmp_path / "memory"
    _jsonl_with_a_blocker(source, count, blocker)
    memory.mkdir()
    lock = os.open(memory / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    flags = ["--offline", "--memory", "shared", "--set", f"memory.root={memory}"]
    # A workspace of its own (the current folder may not hold the batch folder): the blocker
    # lists it and writes its notes, so it waits for the lock held here (a view takes none).
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "part.txt").write_text("FINDING: part\n")
    flags += ["--set", f"tools.workspace_root={workspace}"]
    command = [sys.executable, "-m", "agentctl", "batch", str(source), *flags, "--out", str(out)]
    child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    return child, out, lock


@pytest.mark.slow
def test_a_killed_batch_resumes_without_redoing_finished_tasks(tmp_path: Path) -> None:
    child, out, lock = _blocked_batch(tmp_path, 5, blocker=3)
    progress: list[str] = []
    for line in child.stderr:  # three tasks done, the fourth blocked: kill it there
        progress += [line] if line.startswith("[") else []
        if len(progress) == 3:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    os.close(lock)
    assert sorted(results(out)) == ["t0", "t1", "t2"]
    first = results(out)
    again = batch("--resume", str(out), "--json")
    assert again.exit_code == 0, again.output
    events = [json.loads(line) for line in again.stdout.splitlines()]
    started = [e["id"] for e in events if e["event"] == "task_start"]
    assert started == ["t3", "t4"]
    final = results(out)
    assert sorted(final) == ["t0", "t1", "t2", "t3", "t4"]
    assert all(final[k] == first[k] for k in first)


def _interrupted_after_one_task(
    tmp_path: Path, interrupt: Callable[[subprocess.Popen[str]], None]
) -> tuple[str, Path]:
    """A 4-task batch whose second task is blocked, interrupted once the first has finished:
    its stderr after that (it must exit 130) and its out folder."""
    child, out, lock = _blocked_batch(tmp_path, 4, blocker=1)  # busy when Ctrl-C comes
    try:
        for line in child.stderr or ():
            if line.startswith("[1/4]"):
                break
        interrupt(child)
        _, rest = child.communicate(timeout=60)  # a batch that hangs fails here, not forever
    finally:
        child.kill()
        os.close(lock)
    assert child.returncode == 130
    return rest, out


@pytest.mark.slow
def test_ctrl_c_stops_the_batch_and_says_how_to_resume(tmp_path: Path) -> None:
    rest, out = _interrupted_after_one_task(tmp_path, lambda child: child.send_signal(SIGINT))
    assert sorted(results(out)) == ["t0"]
    assert "1 ok, 3 unfinished" in rest
    said = "agentctl: batch stopped by Ctrl-C; continue with: agentctl batch --resume"
    assert f"{said} {out}" in rest


# tgkill(2): a signal to one thread of another process (x86_64 and aarch64 numbers).
TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


@pytest.mark.slow
@pytest.mark.skipif(TGKILL is None or sys.platform != "linux", reason="needs Linux tgkill")
def test_ctrl_c_that_reaches_a_worker_thread_still_stops_the_batch(tmp_path: Path) -> None:
    """The kernel may hand a process's SIGINT to any thread; the main thread, waiting for
    events, must still stop the batch (it used to wait forever on a blocked worker)."""
    import ctypes

    def to_a_worker(child: subprocess.Popen[str]) -> None:
        others = [int(t) for t in os.listdir(f"/proc/{child.pid}/task") if int(t) != child.pid]
        assert others, "the batch runs its tasks on worker threads"
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall(TGKILL, child.pid, min(others), SIGINT) == 0

    rest, out = _interrupted_after_one_task(tmp_path, to_a_worker)
    assert "agentctl: batch stopped by Ctrl-C; continue with: agentctl batch --resume" in rest
    assert sorted(results(out)) == ["t0"]


@pytest.mark.slow
def test_shared_memory_gets_every_tasks_notes_through_one_root(tmp_path: Path) -> None:
    tasks = make_tasks(tmp_path, 6)
    shared = tmp_path / "shared-memory"
    flags = ["--offline", "--parallel", "3", "--memory", "shared"]
    done = batch(str(tasks), *flags, "--set", f"memory.root={shared}", "--out", str(tmp_path / "o"))
    assert done.exit_code == 0, done.output
    assert {row["memory"] for row in results(tmp_path / "o").values()} == {str(shared)}
    assert len(list(shared.glob("*.md"))) == 6  # one note per task, none lost


def test_resume_names_a_broken_results_line(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"id": "a", "task": "x"}\n')
    out = tmp_path / "out"
    out.mkdir()
    manifest = {"format": "agentctl-batch-1", "source": str(source)}
    (out / "batch.json").write_text(json.dumps(manifest))
    (out / "results.jsonl").write_text('{"id": "a"}\nnot json\n{"id": "b", "sta')
    done = batch("--resume", str(out))
    assert done.exit_code == 2
    assert f"agentctl: {out / 'results.jsonl'}:2: not a result line" in done.stderr
    assert (out / "results.jsonl").read_text() == '{"id": "a"}\nnot json\n'  # the cut tail went


def test_resume_of_a_folder_that_is_no_batch(tmp_path: Path) -> None:
    done = batch("--resume", str(tmp_path))
    assert done.exit_code == 2
    assert f"agentctl: {tmp_path / 'batch.json'}: not a batch folder" in done.stderr
