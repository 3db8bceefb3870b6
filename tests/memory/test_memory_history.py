"""The history: every change recorded with who made it and both sides of each file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from history_harness import M, blob_ids, blobs_exist, contents, replay_changes

from agentctl.memory.journal import read_entries, read_history
from agentctl.memory.store import MemoryStore


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_each_change_records_both_sides_of_each_file(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", session="s1")
    store.execute(
        {"command": "create", "path": f"{M}/a.md", "file_text": "one\n"},
        turn=1,
        tool_use_id="toolu_1",
    )
    store.execute(
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "one", "new_str": "two"},
        turn=2,
        tool_use_id="toolu_2",
    )
    store.execute({"command": "rename", "old_path": f"{M}/a.md", "new_path": f"{M}/d/b.md"})
    store.write_text(f"{M}/d/c.md", "cli\n")
    store.execute({"command": "delete", "path": f"{M}/d"})
    entries = read_entries(store.root)
    assert [e["changes"] for e in entries] == [
        {f"{M}/a.md": [None, _sha("one\n")]},
        {f"{M}/a.md": [_sha("one\n"), _sha("two\n")]},
        {f"{M}/a.md": [_sha("two\n"), None], f"{M}/d/b.md": [None, _sha("two\n")]},
        {f"{M}/d/c.md": [None, _sha("cli\n")]},
        {f"{M}/d/b.md": [_sha("two\n"), None], f"{M}/d/c.md": [_sha("cli\n"), None]},
    ]
    assert [(e.get("turn"), e.get("tool_use_id")) for e in entries[:3]] == [
        (1, "toolu_1"),
        (2, "toolu_2"),
        (None, None),
    ]
    assert blobs_exist(store.root, entries)
    assert replay_changes(entries) == blob_ids(store.root) == {}


def test_clear_and_a_failed_change_keep_the_history_exact(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", session="s1")
    for i in range(3):
        store.execute({"command": "create", "path": f"{M}/x/{i}.md", "file_text": f"{i}"})
    assert replay_changes(read_entries(store.root)) == blob_ids(store.root)
    store.clear()
    entries = read_entries(store.root)
    assert entries[-1]["command"] == "clear" and len(entries[-1]["changes"]) == 3
    assert replay_changes(entries) == blob_ids(store.root) == {}


@pytest.mark.slow
def test_the_history_stays_within_its_bound(tmp_path: Path) -> None:
    from agentctl.memory.guard import open_root
    from agentctl.memory.retention import history_bytes
    from agentctl.profile.settings import MemorySettings

    root = tmp_path / "m"
    store = MemoryStore(root, MemorySettings(history_max_bytes=10_000), session="s1")
    written = 0
    for i in range(100):
        text = f"{i}\n" + "a line of notes\n" * 20
        store.write_text(f"{M}/n{i % 5}.md", text)
        written += len(text)
    fd = open_root(root)
    try:
        kept = history_bytes(fd)
    finally:
        os.close(fd)
    tree = sum(map(len, contents(root).values()))
    assert written > 30_000  # the contents written alone are three times the bound
    assert kept <= 10_000 + tree + 256 * 5 + 10_000 // 16 + 1_000
    entries = read_entries(root)
    assert entries[0]["command"] == "base"
    assert replay_changes(entries) == blob_ids(root) and blobs_exist(root, entries)
    history = read_history(root)
    assert len(history) > len(entries) and blobs_exist(root, history)
