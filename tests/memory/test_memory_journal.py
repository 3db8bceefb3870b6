"""The journal across kill -9: intent lines first, interrupted changes settled from the disk."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
from history_harness import blob_ids, blobs_exist, replay_changes

from agentctl.errors import ToolError
from agentctl.memory.fsops import RESERVED_PREFIX
from agentctl.memory.journal import CRASH_ENV, JOURNAL_NAME, read_entries
from agentctl.memory.store import MemoryStore

M = "/memories"


def tree(root: Path) -> dict[str, int]:
    """Memory files (agentctl's own and temp files left out): path -> size."""
    return {
        f"{M}/{p.relative_to(root).as_posix()}": p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(RESERVED_PREFIX) for part in p.parts)
    }


def replay(entries: list[dict[str, Any]]) -> dict[str, int]:
    """The tree the journal describes, from an empty root (docs/memory.md, "Journal")."""
    files: dict[str, int] = {}
    for e in entries:
        command, path = e["command"], e["path"]
        if command in ("create", "str_replace", "insert", "edit"):
            files[path] = e["bytes"]
        elif command in ("delete", "recover"):
            gone = [p for p in (path, e.get("new_path")) if p]
            files = {p: s for p, s in files.items() if not any(_under(p, g) for g in gone)}
            files.update(e.get("files", {}))
        elif command == "import":
            files.update(e["files"])
        elif command == "rename":
            new = e["new_path"]
            files = {(new + p[len(path) :] if _under(p, path) else p): s for p, s in files.items()}
        else:
            raise AssertionError(e)
    return files


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def _churn(root: str, seed: int, crash_at: str) -> None:
    """Change the store until the journal's crash point (AGENTCTL_CRASH_AT) kills the process."""
    os.environ[CRASH_ENV] = crash_at  # this forked child only
    store = MemoryStore(Path(root), session=f"churn-{seed}")
    rng = random.Random(seed)
    for i in range(100_000):
        name = f"{M}/d{rng.randrange(3)}/f{rng.randrange(6)}.md"
        step: dict[str, Any] = rng.choice(
            [
                {"command": "create", "path": name, "file_text": "x" * rng.randrange(1, 50)},
                {"command": "insert", "path": name, "insert_line": 0, "insert_text": f"{i}"},
                {"command": "delete", "path": name},
                {"command": "delete", "path": f"{M}/d{rng.randrange(3)}"},
                {"command": "rename", "old_path": name, "new_path": f"{M}/d{i % 3}/r{i}"},
            ]
        )
        with contextlib.suppress(ToolError):  # refusals (exists, missing): go on
            store.execute(step)


@pytest.mark.slow
def test_kill_at_any_point_leaves_the_journal_exact(tmp_path: Path) -> None:
    # Each child kills itself (kill -9) at a seeded change, by construction right after its
    # intent line, before the change and its entry: the journal must be settled by a `recover`.
    # (A change made but not journaled: test_an_intent_left_last_is_settled_... below.)
    root = tmp_path / "m"
    MemoryStore(root)
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(7)
    for seed in range(12):
        point = f"intent:{rng.randint(1, 40)}"
        proc = ctx.Process(target=_churn, args=(str(root), seed, point))
        proc.start()
        proc.join()
        assert proc.exitcode == -signal.SIGKILL, f"child {seed} was not killed at {point}"
        last = json.loads((root / JOURNAL_NAME).read_text().splitlines()[-1])
        assert "intent" in last, f"after kill {seed}"
        entries = read_entries(root)
        assert entries[-1]["command"] == "recover" and entries[-1]["session"] == f"churn-{seed}"
        assert replay(entries) == tree(root), f"after kill {seed} at {point}"
        assert replay_changes(entries) == blob_ids(root) and blobs_exist(root, entries)
        MemoryStore(root, session="next").execute(  # the next writer settles it on disk
            {"command": "create", "path": f"{M}/next{seed}.md", "file_text": "n"}
        )
        assert replay(read_entries(root)) == tree(root), f"after the write that followed {seed}"


def _append_line(root: Path, record: dict[str, Any]) -> None:
    with (root / JOURNAL_NAME).open("a") as handle:
        handle.write(json.dumps(record) + "\n")


@pytest.mark.dates
def test_an_intent_left_last_is_settled_by_readers_and_the_next_writer(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", session="s1")
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "hello\n"})
    # A writer killed after its change, before the entry: its intent is last.
    (store.root / "a.md").write_text("hello, changed\n")
    intent = {"time": "t", "intent": "str_replace", "path": f"{M}/a.md", "new_path": None,
              "bytes": 15, "session": "dead", "v": 1}  # fmt: skip
    _append_line(store.root, intent)
    entries = read_entries(store.root)
    assert [e["command"] for e in entries] == ["create", "recover"]
    assert entries[-1]["files"] == {f"{M}/a.md": 15} and entries[-1]["session"] == "dead"
    assert entries[-1]["interrupted"] == "str_replace"
    assert replay(entries) == tree(store.root)
    # The next writer records the outcome before its own change.
    other = MemoryStore(store.root, session="s2")
    other.execute({"command": "create", "path": f"{M}/b.md", "file_text": "b"})
    lines = [json.loads(x) for x in (store.root / JOURNAL_NAME).read_text().splitlines()]
    assert [x.get("command") or "intent:" + x["intent"] for x in lines] == [
        "intent:create", "create", "intent:str_replace", "recover", "intent:create", "create",
    ]  # fmt: skip
    assert [e["command"] for e in read_entries(store.root)] == ["create", "recover", "create"]
    assert replay(read_entries(store.root)) == tree(store.root)


@pytest.mark.dates
def test_an_interrupted_change_that_never_happened_records_the_old_state(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.execute({"command": "create", "path": f"{M}/d/a.md", "file_text": "a"})
    intent = {"time": "t", "intent": "rename", "path": f"{M}/d", "new_path": f"{M}/e/d"}
    _append_line(store.root, intent)
    entries = read_entries(store.root)
    assert entries[-1]["files"] == {f"{M}/d/a.md": 1}
    assert replay(entries) == tree(store.root) == {f"{M}/d/a.md": 1}


@pytest.mark.dates
def test_views_and_refusals_write_no_journal_lines(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "a"})
    size = (store.root / JOURNAL_NAME).stat().st_size
    store.execute({"command": "view", "path": M})
    for bad in (
        {"command": "create", "path": f"{M}/a.md", "file_text": "again"},
        {"command": "delete", "path": f"{M}/nope"},
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "zz", "new_str": "y"},
    ):
        with pytest.raises(ToolError):
            store.execute(bad)
    assert (store.root / JOURNAL_NAME).stat().st_size == size
