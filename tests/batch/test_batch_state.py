"""Batch sources, folders and state held to what they may do (issue 20): `set` paths, file
modes, two resumes at once, what a resume runs with, records read back, where `--out` may be."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctl.agent.retry import RetryGate
from agentctl.batch import read_source, run_batch
from agentctl.batch.launch import BatchRequest, plan_batch
from agentctl.batch.task_run import Budget, TaskContext, plan_task
from agentctl.errors import AgentctlError, UsageError
from tests.reliability.helpers import private_mode_problems

from .test_batch_cli import batch, make_tasks


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of its own (the default memory root is ./memory, the default workspace .),
    beside the batch folders the tests make (a folder a task sees may not hold one)."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


def jsonl(folder: Path, *lines: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def user_profile(home: Path, text: str = 'model = "claude-sonnet-5"\n') -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "profile.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("key", ["tools.workspace_root", "memory.root"])
@pytest.mark.dates
def test_a_set_path_is_the_one_checked_and_used(tmp_path: Path, key: str) -> None:
    """`set: {key: "."}` means the source's folder, where it was checked; before the fix it
    was used against the profile's folder (a user profile in AGENTCTL_HOME: the sessions)."""
    profile = user_profile(tmp_path / "home")
    source = jsonl(tmp_path / "src", {"id": "a", "task": "hi", "set": {key: "."}})
    asked = BatchRequest(
        str(source), profile=profile, offline=True, memory="shared", out=tmp_path / "out"
    )
    prepared = plan_batch(asked)
    context = TaskContext(prepared.spec, prepared.out, RetryGate(), Budget(None))
    plan = plan_task(prepared.tasks[0], context)
    used = (
        plan.profile.tools.workspace_root if key.startswith("tools") else plan.profile.memory.root
    )
    assert Path(str(used)).resolve() == source.parent.resolve()


def test_a_set_path_out_of_the_source_folder_is_refused(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "src", {"id": "a", "task": "hi", "set": {"memory.root": ".."}})
    with pytest.raises(AgentctlError) as caught:
        tasks = read_source(str(source))
        asked = BatchRequest(str(source), profile=user_profile(tmp_path), offline=True,
                             memory="shared", out=tmp_path / "out")  # fmt: skip
        prepared = plan_batch(asked)
        plan_task(tasks[0], TaskContext(prepared.spec, prepared.out, RetryGate(), Budget(None)))
    assert "memory.root" in str(caught.value) and "\n" not in str(caught.value)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.slow
@pytest.mark.usefixtures("umask_022")
def test_batch_files_are_private_under_umask_022(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix AGENTCTL_HOME and batches/ were 0755, batch.json and results.jsonl
    0644: other users could read the answers."""
    home = tmp_path / "new" / "agentctl"
    monkeypatch.setenv("AGENTCTL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    done = batch(str(make_tasks(tmp_path, 1)), "--offline", "--quiet")
    assert done.exit_code == 0, done.output
    made = [tmp_path / "new", home, *home.glob("batches/*/*")]
    assert {p.name for p in made} >= {"batch.json", "results.jsonl", "tasks"}
    assert private_mode_problems(tmp_path / "new") == [], private_mode_problems(tmp_path / "new")
    assert oct((tmp_path / "new").stat().st_mode & 0o777) == "0o700"


def two_folders(tmp_path: Path, a_profile: str | None) -> tuple[Path, Path, Path]:
    """Folder A (where the batch starts, with `a_profile` as ./agentctl.toml), folder B
    (with a profile of its own), and a one-task source."""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
    if a_profile is not None:
        (a / "agentctl.toml").write_text(a_profile)
    (b / "agentctl.toml").write_text('[memory]\nroot = "mem-b"\n')
    source = jsonl(tmp_path / "src", {"id": "t1", "task": "Say hi."})
    return a, b, source


@pytest.mark.parametrize(
    ("a_profile", "sets", "expected"),
    [
        ('[memory]\nroot = "mem-a"\n', (), "a/mem-a"),  # the implicit ./agentctl.toml
        (None, ("memory.root=rel",), "a/rel"),  # a relative --set path
        (None, (), "a/memory"),  # no profile at all: the built-in defaults, from A
    ],
)
@pytest.mark.dates
def test_a_resume_runs_with_what_the_batch_started_with(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    a_profile: str | None,
    sets: tuple[str, ...],
    expected: str,
) -> None:
    """Before the fix a resume from B ran with B's ./agentctl.toml and read --set paths
    against B (the memory root was b/mem-b)."""
    a, b, source = two_folders(tmp_path, a_profile)
    monkeypatch.chdir(a)
    out = tmp_path / "out"
    asked = BatchRequest(str(source), sets=sets, offline=True, memory="shared", out=out)
    plan_batch(asked).lock.release()
    monkeypatch.chdir(b)
    done = run_batch(resume=out)
    assert [line["status"] for line in done.results] == ["ok"], done.results
    assert Path(str(done.results[0]["memory"])) == (tmp_path / expected).resolve()


@pytest.mark.dates
def test_a_batch_folder_runs_one_resume_at_a_time(tmp_path: Path) -> None:
    """Before the fix two `batch --resume DIR` at once both ran every task (each id twice in
    results.jsonl, paid twice): nothing held the folder."""
    source = jsonl(tmp_path / "src", {"id": "t1", "task": "Say hi."})
    out = tmp_path / "out"
    first = plan_batch(BatchRequest(str(source), offline=True, out=out))
    with pytest.raises(UsageError) as caught:
        plan_batch(BatchRequest(resume=out))
    assert "another agentctl batch is running this batch" in str(caught.value)
    first.lock.release()
    done = run_batch(resume=out)
    assert [line["id"] for line in done.results] == ["t1"]
    assert done.summary.counts["ok"] == 1, done.results[0]["error"]


def saved_batch(tmp_path: Path, lines: str, **manifest: object) -> Path:
    source = jsonl(tmp_path / "src", {"id": "a", "task": "x"})
    out = tmp_path / "out"
    out.mkdir()
    spec = {"format": "agentctl-batch-1", "source": str(source), **manifest}
    (out / "batch.json").write_text(json.dumps(spec))
    (out / "results.jsonl").write_text(lines)
    return out


@pytest.mark.parametrize(
    "line",
    [
        {"id": "a", "totals": [1, 2]},
        {"id": "a", "totals": {"input_tokens": "many"}},
        {"id": "a", "totals": {"input_tokens": True}},
        {"id": "a", "turns": "3"},
        {"id": "a", "turns": -1},
        {"id": "a", "cost_usd": "free"},
        {"id": "a", "cost_usd": -1000},  # would lift the batch's --max-usd on resume
        {"id": "a", "status": ["ok"]},
        {"id": "a", "pricing": 5},
    ],
)
def test_every_result_line_read_back_is_validated(tmp_path: Path, line: object) -> None:
    """Before the fix `totals` that is not an object crashed --resume with a traceback."""
    out = saved_batch(tmp_path, json.dumps(line) + "\n")
    done = batch("--resume", str(out))
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: {out / 'results.jsonl'}:1: ")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.output


@pytest.mark.parametrize(
    "manifest",
    [
        {"parallel": "x"},
        {"sets": "abc"},
        {"sets": [1]},
        {"max_usd": "lots"},
        {"offline": "yes"},
        {"source": 5},
        {"memory": "elsewhere"},
    ],
)
def test_a_manifest_read_back_is_validated(tmp_path: Path, manifest: dict[str, object]) -> None:
    out = saved_batch(tmp_path, "", **manifest)
    done = batch("--resume", str(out))
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: {out / 'batch.json'}: ")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.output


@pytest.mark.parametrize("inside", ["cwd/memory", "tasks/ws", "tasks/ws/deeper"])
@pytest.mark.dates
def test_the_batch_folder_is_never_inside_a_root_a_task_sees(tmp_path: Path, inside: str) -> None:
    """Before the fix `--out` inside the memory root copied the root into itself hundreds of
    levels deep (RecursionError), and inside a workspace let tasks read each other's answers."""
    tasks = make_tasks(tmp_path, 2)  # their workspace: tasks/ws; memory: ./memory
    (tmp_path / "cwd" / "memory").mkdir()
    (tmp_path / "cwd" / "memory" / "note.md").write_text("a note\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    out = tmp_path / inside / "out"
    done = batch(str(tasks), "--offline", "--out", str(out))
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: --out {out}: inside ")
    assert len(done.stderr.splitlines()) == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.dates
def test_an_isolated_copy_is_bounded_by_the_memory_limits(tmp_path: Path) -> None:
    """Before the fix a sparse 256 MB file in the base root was copied at full size for each
    task (256 MB of disk per task); now a base root past the limits is refused."""
    memory = tmp_path / "cwd" / "memory"
    memory.mkdir()
    (memory / "small.md").write_text("a note\n")
    with open(memory / "sparse.bin", "wb") as handle:
        handle.truncate(256 * 2**20)
    tasks = make_tasks(tmp_path, 1)
    done = batch(str(tasks), "--offline", "--out", str(tmp_path / "out"), "--json")
    line = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    assert line["status"] == "failed", line
    assert "memory.max_file_bytes" in line["error"] and "sparse.bin" in line["error"]
    assert not (tmp_path / "out" / "tasks" / "t00" / "memory" / "sparse.bin").exists()
    assert done.exit_code == 1
