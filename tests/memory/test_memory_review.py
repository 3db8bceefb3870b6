"""memory.review = "queue": a run's writes wait in a pending layer; the base root is untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from history_harness import M, contents
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.errors import AgentctlError
from agentctl.memory.pending import Layer, layers, open_for_run
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings
from agentctl.profile.trust import refusal


def tree_hash(root: Path) -> str:
    """Every file under the root, agentctl's own too: names, modes and bytes."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def base(tmp_path: Path) -> MemorySettings:
    root = tmp_path / "mem"
    store = MemoryStore(root, session="earlier")
    store.execute({"command": "create", "path": f"{M}/notes.md", "file_text": "a\nb\nc\nd\ne\n"})
    return MemorySettings(root=root, review="queue")


def _queued_run(settings: MemorySettings, session: str = "run1") -> MemoryStore:
    store = open_for_run(settings, session)
    store.execute(
        {"command": "str_replace", "path": f"{M}/notes.md", "old_str": "a\n", "new_str": "A\n"}
    )
    store.execute({"command": "create", "path": f"{M}/new.md", "file_text": "new\n"})
    return store


def test_a_queued_run_reads_its_writes_and_leaves_the_base_byte_for_byte(
    base: MemorySettings,
) -> None:
    before = tree_hash(base.root)
    store = _queued_run(base)
    assert store.read_text(f"{M}/notes.md") == "A\nb\nc\nd\ne\n"  # the run sees its write
    assert tree_hash(base.root) == before
    pending = Layer(base.root, "run1").changes()
    assert [(p.path, p.start, p.now) for p in pending] == [
        (f"{M}/new.md", None, b"new\n"),
        (f"{M}/notes.md", b"a\nb\nc\nd\ne\n", b"A\nb\nc\nd\ne\n"),
    ]
    assert [layer.session for layer in layers(base.root)] == ["run1"]


def test_apply_merges_into_the_base_as_it_is_now_under_the_runs_session(
    base: MemorySettings,
) -> None:
    _queued_run(base)
    MemoryStore(base.root, session="other").execute(
        {"command": "str_replace", "path": f"{M}/notes.md", "old_str": "e\n", "new_str": "E\n"}
    )
    assert Layer(base.root, "run1").settle(base, [], apply=True) == [f"{M}/new.md", f"{M}/notes.md"]
    assert contents(base.root) == {f"{M}/notes.md": b"A\nb\nc\nd\nE\n", f"{M}/new.md": b"new\n"}
    last = MemoryStore(base.root).history()[-1]
    assert (last["command"], last["session"]) == ("review", "run1")
    assert layers(base.root) == []  # settled: the layer is gone


def test_apply_refuses_overlapping_changes_and_drop_settles_one_file(
    base: MemorySettings,
) -> None:
    _queued_run(base)
    MemoryStore(base.root, session="other").execute(
        {"command": "str_replace", "path": f"{M}/notes.md", "old_str": "a\n", "new_str": "x\n"}
    )
    before = tree_hash(base.root)
    layer = Layer(base.root, "run1")
    with pytest.raises(AgentctlError, match="in the same lines; nothing was applied"):
        layer.settle(base, [], apply=True)
    assert tree_hash(base.root) == before
    assert layer.settle(base, [f"{M}/notes.md"], apply=False) == [f"{M}/notes.md"]
    assert [p.path for p in layer.changes()] == [f"{M}/new.md"]
    assert layer.settle(base, [f"{M}/new.md"], apply=True) == [f"{M}/new.md"]
    assert contents(base.root)[f"{M}/new.md"] == b"new\n" and layers(base.root) == []


def test_the_review_command_lists_applies_and_drops(base: MemorySettings) -> None:
    _queued_run(base, "run1")
    _queued_run(base, "run2")
    root = str(base.root)
    listed = CliRunner().invoke(app, ["memory", "review", "--json", "--root", root])
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["session"], r["path"]) for r in rows] == [
        ("run1", f"{M}/new.md"), ("run1", f"{M}/notes.md"),
        ("run2", f"{M}/new.md"), ("run2", f"{M}/notes.md"),
    ]  # fmt: skip
    assert "+A" in rows[1]["diff"]
    done = CliRunner().invoke(app, ["memory", "review", "--drop", "run2", "--json", "--root", root])
    assert json.loads(done.stdout) == {
        "session": "run2",
        "dropped": [f"{M}/new.md", f"{M}/notes.md"],
    }
    done = CliRunner().invoke(app, ["memory", "review", "--apply", "run1", "--root", root])
    assert done.exit_code == 0 and done.stdout.startswith("Applied run1: 2 files")
    gone = CliRunner().invoke(app, ["memory", "review", "--apply", "run1", "--root", root])
    assert gone.exit_code == 2 and "has nothing pending" in gone.stderr


def test_a_task_cannot_turn_the_review_off(tmp_path: Path) -> None:
    why = refusal("memory.review", "off", "queue", tmp_path)
    assert why == "a task file may not turn off the review of memory writes"
    assert refusal("memory.review", "queue", "off", tmp_path) is None  # turning it on is fine


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "memory-carryover"


@pytest.mark.slow
def test_queued_run_and_shared_batch_leave_the_base_untouched(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "ex")
    root = tmp_path / "ex" / "memory"
    MemoryStore(root).execute({"command": "create", "path": f"{M}/base.md", "file_text": "b\n"})
    before = tree_hash(root)
    task = str(tmp_path / "ex" / "task.md")
    ran = CliRunner().invoke(app, ["run", task, "--offline", "--memory-review", "queue", "-q"])
    assert ran.exit_code == 0, ran.stderr
    assert tree_hash(root) == before and len(layers(root)) == 1
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("one", "two"):
        (tasks / f"{name}.md").write_text((tmp_path / "ex" / "task.md").read_text())
    shared = ["batch", str(tasks), "--offline", "--memory", "shared", "--memory-review", "queue"]
    done = CliRunner().invoke(app, [*shared, "--set", f"memory.root={root}", "-q"])
    assert done.exit_code == 0, done.stderr
    assert tree_hash(root) == before and len(layers(root)) == 3
