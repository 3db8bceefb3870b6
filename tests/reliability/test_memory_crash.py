"""A writer killed mid-write leaves a temp file; the next store to write on the root removes it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctl.memory.store import MemoryStore

from .helpers import assert_store_consistent, scan

M = "/memories"


# Linux never gives out a pid at or above 2**22 (PID_MAX_LIMIT), macOS none above 99999: a
# writer with such a pid is dead for sure. (The pid of a child that just exited may already
# belong to a new process.)
NEVER_A_PID = 1 << 22


def dead_pid(n: int) -> int:
    return NEVER_A_PID + n


@pytest.mark.dates
def test_stale_temp_files_of_dead_writers_are_swept_on_the_first_write(tmp_path: Path) -> None:
    root = tmp_path / "m"
    MemoryStore(root).execute({"command": "create", "path": f"{M}/d/a.md", "file_text": "a\n"})
    stale = [
        root / f".agentctl-tmp-{dead_pid(1)}-00aa",
        root / "d" / f".agentctl-tmp-{dead_pid(2)}-bb",
    ]
    live = root / "d" / ".agentctl-tmp-1-cc"  # pid 1 is alive: another writer, never touched
    for path in [*stale, live]:
        path.write_bytes(b"half a fi")
    assert len(scan(root).temp_files) == 3
    store = MemoryStore(root)
    store.execute({"command": "view", "path": M})  # reads never sweep
    assert len(scan(root).temp_files) == 3
    store.execute(
        {"command": "insert", "path": f"{M}/d/a.md", "insert_line": 1, "insert_text": "b"}
    )
    assert scan(root).temp_files == ["d/.agentctl-tmp-1-cc"]
    live.unlink()
    assert assert_store_consistent(root) == {f"{M}/d/a.md": 4}
    assert not any(p.exists() for p in stale) and os.path.exists(root / "d" / "a.md")
