"""blame, diff and revert answer from the history, and agree with it after a 16-writer churn."""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path
from typing import Any

import pytest
from history_harness import M, blob_ids, contents, replay_changes

from agentctl.errors import ToolError
from agentctl.memory.blame import blame as blame_lines
from agentctl.memory.blame import changes_of, merge3, session_changes
from agentctl.memory.store import MemoryStore


def _store(root: Path, session: str) -> MemoryStore:
    return MemoryStore(root, session=session)


def _run(store: MemoryStore, command: str, path: str, **fields: Any) -> None:
    store.execute({"command": command, "path": f"{M}/{path}", **fields})


def test_blame_names_the_session_and_turn_of_each_line(tmp_path: Path) -> None:
    root = tmp_path / "m"
    one, two = _store(root, "s1"), _store(root, "s2")
    one.execute(
        {"command": "create", "path": f"{M}/a.md", "file_text": "x\ny\nz\n"},
        turn=1,
        tool_use_id="toolu_a",
    )
    two.execute(
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "y", "new_str": "Y"},
        turn=4,
        tool_use_id="toolu_b",
    )
    two.execute({"command": "rename", "old_path": f"{M}/a.md", "new_path": f"{M}/d/b.md"})
    got = blame_lines(one.history(), f"{M}/d/b.md", b"x\nY\nz\nhand\n", one.read_blob)
    assert [(b.text, b.origin.session, b.origin.turn, b.origin.tool_use_id) for b in got] == [
        ("x\n", "s1", 1, "toolu_a"),
        ("Y\n", "s2", 4, "toolu_b"),
        ("z\n", "s1", 1, "toolu_a"),
        ("hand\n", None, None, None),  # not in the history: unrecorded
    ]
    assert got[3].origin.command == "unrecorded"


def test_merge3_takes_both_sides_and_refuses_overlaps() -> None:
    base = ["a\n", "b\n", "c\n", "d\n", "e\n"]
    ours = ["A\n", "b\n", "c\n", "d\n", "e\n"]
    theirs = ["a\n", "b\n", "c\n", "d\n", "E\n", "f\n"]
    assert merge3(base, ours, theirs) == ["A\n", "b\n", "c\n", "d\n", "E\n", "f\n"]
    assert merge3(base, ours, ["X\n", *base[1:]]) is None
    assert merge3(base, ours, ours) == ours


def test_revert_undoes_a_session_and_keeps_later_changes(tmp_path: Path) -> None:
    root = tmp_path / "m"
    one, two, three = (_store(root, s) for s in ("s1", "s2", "s3"))
    _run(one, "create", "a.md", file_text="1\n2\n3\n4\n5\n6\n")
    _run(two, "str_replace", "a.md", old_str="2\n", new_str="two\n")
    _run(two, "create", "new.md", file_text="by s2\n")
    _run(three, "str_replace", "a.md", old_str="5\n", new_str="five\n")
    assert two.revert("s2") == ([f"{M}/a.md", f"{M}/new.md"], [])
    assert contents(root) == {f"{M}/a.md": b"1\n2\n3\n4\nfive\n6\n"}  # s3's change kept
    assert replay_changes(one.history()) == blob_ids(root)
    entry = one.history()[-1]
    assert (entry["command"], entry["reverts"], entry["removed"]) == (
        "revert",
        "s2",
        [f"{M}/new.md"],
    )


def test_revert_refuses_where_a_later_session_changed_the_same_lines(tmp_path: Path) -> None:
    root = tmp_path / "m"
    one, two = _store(root, "s1"), _store(root, "s2")
    _run(one, "create", "a.md", file_text="keep 3\n")
    _run(two, "str_replace", "a.md", old_str="keep 3", new_str="keep 4")
    before = contents(root)
    changed, conflicts = one.revert("s1")
    assert changed == [] and [(c.path, c.why) for c in conflicts] == [
        (f"{M}/a.md", "changed since by s2")
    ]
    assert contents(root) == before


def _churn(root: str, writer: int) -> None:
    store = MemoryStore(Path(root), session=f"w{writer:02d}")
    rng = random.Random(writer)
    own = f"{M}/own/w{writer:02d}.md"
    store.execute({"command": "create", "path": own, "file_text": f"w{writer} start\n"})
    for i in range(12):
        step = rng.choice(["own", "own", "shared", "shared-new"])
        try:
            if step == "own":
                store.execute(
                    {
                        "command": "insert",
                        "path": own,
                        "insert_line": 1,
                        "insert_text": f"w{writer} line {i}\n",
                    }
                )
            elif step == "shared":
                store.execute(
                    {
                        "command": "insert",
                        "path": f"{M}/shared.md",
                        "insert_line": 0,
                        "insert_text": f"w{writer} shared {i}\n",
                    }
                )
            else:
                store.execute(
                    {
                        "command": "create",
                        "path": f"{M}/shared.md",
                        "file_text": f"w{writer} made it\n",
                    }
                )
        except ToolError:  # shared.md missing, or made by another writer first
            pass


@pytest.mark.slow
def test_blame_diff_and_revert_agree_with_the_history_after_16_writers(tmp_path: Path) -> None:
    root = tmp_path / "m"
    MemoryStore(root)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_churn, args=(str(root), k)) for k in range(16)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert [p.exitcode for p in procs] == [0] * 16
    store = MemoryStore(root, session="check")
    history = store.history()
    assert replay_changes(history) == blob_ids(root)
    # blame: every line comes from a change whose written content holds that line
    # (one writer can make two changes within the same millisecond: an origin names them all)
    by_time: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for e in history:
        by_time.setdefault((e["time"], e.get("session")), []).append(e)
    for path, data in contents(root).items():
        lines = blame_lines(history, path, data, store.read_blob)
        assert "".join(line.text for line in lines).encode() == data
        for line in lines:
            entries = by_time[(line.origin.time, line.origin.session)]
            written = [
                store.read_blob(a) or b""
                for entry in entries
                for _, a in changes_of(entry).values()
                if a
            ]
            assert any(line.text.encode() in w for w in written), (path, line)
    # diff: each session's changes are exactly its entries' changes, in order
    for k in range(16):
        session = f"w{k:02d}"
        mine = [
            (p, pair)
            for e in history
            if e.get("session") == session
            for p, pair in changes_of(e).items()
        ]
        got = session_changes(history, session, store.read_blob)
        assert [(c.path, c.after) for c in got] == [
            (p, store.read_blob(a) if a else None) for p, (_, a) in mine
        ]
    # revert: all or nothing; never touches what the session did not change
    for k in (0, 7, 15):
        session = f"w{k:02d}"
        before = contents(root)
        changed, conflicts = store.revert(session)
        after = contents(root)
        assert (changed == []) == bool(conflicts)
        untouched = {p for p in before if p not in changed}
        assert {p: after.get(p) for p in untouched} == {p: before[p] for p in untouched}
        assert f"{M}/own/w{k:02d}.md" not in after or conflicts
        assert replay_changes(store.history()) == blob_ids(root)
