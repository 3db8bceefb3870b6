"""Limits, view truncation, journal, modes, atomicity and the cross-process lock."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentctl.errors import ToolError
from agentctl.memory import fsops
from agentctl.memory.fsops import RESERVED_PREFIX
from agentctl.memory.journal import JOURNAL_NAME, read_entries
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

M = "/memories"


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(RESERVED_PREFIX) for part in p.parts)
    }


def refused(store: MemoryStore, command: dict[str, Any]) -> str:
    before = files(store.root)
    with pytest.raises(ToolError) as info:
        store.execute(command)
    assert files(store.root) == before  # nothing written
    return str(info.value)


@pytest.mark.dates
def test_max_file_bytes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_file_bytes=10))
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "0123456789"})
    msg = refused(store, {"command": "create", "path": f"{M}/b.md", "file_text": "x" * 11})
    assert msg.startswith("File /memories/b.md would be 11 bytes, over the limit of 10 bytes")
    msg = refused(
        store, {"command": "insert", "path": f"{M}/a.md", "insert_line": 0, "insert_text": "more"}
    )
    assert "over the limit of 10 bytes" in msg
    msg = refused(
        store, {"command": "str_replace", "path": f"{M}/a.md", "old_str": "0", "new_str": "00"}
    )
    assert "over the limit" in msg
    assert not (store.root / "b.md").exists()


def test_max_file_bytes_counts_utf8_bytes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_file_bytes=5))
    msg = refused(store, {"command": "create", "path": f"{M}/u.md", "file_text": "ééé"})
    assert "would be 6 bytes" in msg


@pytest.mark.dates
def test_max_total_bytes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_total_bytes=20))
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "x" * 15})
    msg = refused(store, {"command": "create", "path": f"{M}/d/b.md", "file_text": "y" * 6})
    assert "would hold 21 bytes, over the limit of 20 bytes" in msg
    assert not (store.root / "d").exists()  # not even the parent directory
    # Replacing a file counts its new size instead of the old one.
    store.execute(
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "x" * 15, "new_str": "z" * 20}
    )
    assert (store.root / "a.md").read_text() == "z" * 20


@pytest.mark.dates
def test_max_files(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_files=2))
    for name in ("a", "b"):
        store.execute({"command": "create", "path": f"{M}/{name}", "file_text": name})
    msg = refused(store, {"command": "create", "path": f"{M}/c", "file_text": "c"})
    assert "already holds 2 files, the limit" in msg
    store.execute({"command": "insert", "path": f"{M}/a", "insert_line": 1, "insert_text": "z"})


@pytest.mark.dates
def test_long_file_view_is_cut_with_a_range_to_read_on(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_view_chars=300))
    text = "".join(f"line number {i:03d}\n" for i in range(1, 101))
    store.execute({"command": "create", "path": f"{M}/long.md", "file_text": text})
    out = store.execute({"command": "view", "path": f"{M}/long.md"})
    body, marker = out.rsplit("\n", 1)
    assert len(body) <= 300
    assert marker.startswith("[Output truncated at 300 characters: showing lines 1-")
    start = int(marker.split("view_range [")[1].split(",")[0])
    assert body.endswith(f"line number {start - 1:03d}")
    rest = store.execute({"command": "view", "path": f"{M}/long.md", "view_range": [start, -1]})
    assert rest.split("\n")[1] == f"{start:6d}\tline number {start:03d}"


@pytest.mark.dates
def test_one_huge_line_is_cut_inside(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_view_chars=100))
    store.execute({"command": "create", "path": f"{M}/w.md", "file_text": "x" * 500 + "\nend"})
    out = store.execute({"command": "view", "path": f"{M}/w.md"})
    assert "line 1 is longer than that and was cut" in out
    assert "view_range [2, -1]" in out


@pytest.mark.dates
def test_long_listing_is_cut(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_view_chars=400))
    for i in range(40):
        store.execute({"command": "create", "path": f"{M}/file{i:02d}.md", "file_text": "x"})
    out = store.execute({"command": "view", "path": M})
    assert out.splitlines()[-1].startswith("[Listing truncated: ")
    assert "View a subdirectory of /memories" in out


@pytest.mark.dates
def test_journal_records_changes_not_views(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", session="sess-1")
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "hello\n"})
    store.execute({"command": "view", "path": f"{M}/a.md"})
    store.execute(
        {"command": "str_replace", "path": f"{M}/a.md", "old_str": "hello", "new_str": "bye"}
    )
    store.execute({"command": "rename", "old_path": f"{M}/a.md", "new_path": f"{M}/b/a.md"})
    store.execute({"command": "delete", "path": f"{M}/b"})
    with pytest.raises(ToolError):
        store.execute({"command": "delete", "path": f"{M}/b"})
    entries = read_entries(store.root)
    assert [e["command"] for e in entries] == ["create", "str_replace", "rename", "delete"]
    assert entries[0]["bytes"] == 6 and entries[1]["bytes"] == 4
    assert entries[2]["path"] == f"{M}/a.md" and entries[2]["new_path"] == f"{M}/b/a.md"
    assert {e["session"] for e in entries} == {"sess-1"}
    assert all(e["v"] == 1 and e["time"].endswith("Z") for e in entries)
    listing = store.execute({"command": "view", "path": M})
    assert RESERVED_PREFIX not in listing
    lines = (store.root / JOURNAL_NAME).read_text().splitlines()
    assert all(json.loads(line) for line in lines)


@pytest.mark.dates
def test_modes_under_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store = MemoryStore(tmp_path / "new" / "m")
        store.execute({"command": "create", "path": f"{M}/d/e/f.md", "file_text": "x"})
        store.execute(
            {"command": "insert", "path": f"{M}/d/e/f.md", "insert_line": 0, "insert_text": "y"}
        )
    finally:
        os.umask(old)
    for path in (tmp_path / "new", store.root, store.root / "d", store.root / "d" / "e"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert stat.S_IMODE((store.root / "d" / "e" / "f.md").stat().st_mode) == 0o600


@pytest.mark.dates
def test_no_temp_files_left_behind(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "a"})
    with pytest.raises(ToolError):
        store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "b"})
    store.execute({"command": "insert", "path": f"{M}/a.md", "insert_line": 1, "insert_text": "c"})
    names = sorted(p.name for p in store.root.iterdir())
    own = ["-history", "-journal.jsonl", "-tally.json", ".lock"]
    assert names == [RESERVED_PREFIX + name for name in own] + ["a.md"]
    assert not [p for p in (store.root / ".agentctl-history").iterdir() if "tmp" in p.name]
    assert (store.root / "a.md").read_text() == "a\nc\n"


@pytest.mark.dates
def test_write_text_and_clear_for_the_cli(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.write_text(f"{M}/x/y.md", "one")
    store.write_text(f"{M}/x/y.md", "two")
    assert store.read_text(f"{M}/x/y.md") == "two"
    assert store.clear() == 1
    assert files(store.root) == {}
    assert [e["command"] for e in read_entries(store.root)] == ["edit", "edit", "clear"]


def _append_lines(root: str, worker: int, count: int) -> None:
    store = MemoryStore(Path(root), session=f"w{worker}")
    for i in range(count):
        store.execute(
            {
                "command": "insert",
                "path": f"{M}/log.md",
                "insert_line": 0,
                "insert_text": f"w{worker}-{i}",
            }
        )
        store.execute(
            {
                "command": "str_replace",
                "path": f"{M}/count.md",
                "old_str": f"w{worker}:{i}\n",
                "new_str": f"w{worker}:{i + 1}\n",
            }
        )


@pytest.mark.slow
def test_concurrent_processes_lose_no_update(tmp_path: Path) -> None:
    workers, count = 4, 30
    store = MemoryStore(tmp_path / "m")
    store.execute({"command": "create", "path": f"{M}/log.md", "file_text": ""})
    counters = "".join(f"w{w}:0\n" for w in range(workers))
    store.execute({"command": "create", "path": f"{M}/count.md", "file_text": counters})
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_append_lines, args=(str(store.root), w, count)) for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [p.exitcode for p in procs] == [0] * workers
    lines = (store.root / "log.md").read_text().splitlines()
    assert sorted(lines) == sorted(f"w{w}-{i}" for w in range(workers) for i in range(count))
    assert (store.root / "count.md").read_text() == "".join(
        f"w{w}:{count}\n" for w in range(workers)
    )
    assert len(read_entries(store.root)) == 2 + 2 * workers * count


@pytest.mark.slow
def test_store_imports_no_sdk_and_no_terminal_libraries() -> None:
    from import_probe import loaded_after

    code = "import agentctl.memory.store, agentctl.memory.archive\n"
    assert loaded_after(code, ["anthropic", "httpx", "pydantic", "typer", "rich"])[1] == []


def test_unusable_root_is_a_config_error(tmp_path: Path) -> None:
    from agentctl.errors import ConfigError

    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match=r"memory root .*file/m: cannot create it"):
        MemoryStore(tmp_path / "file" / "m")
    with pytest.raises(ConfigError, match="not a directory"):
        MemoryStore(tmp_path / "file")


def test_os_errors_reach_the_model_without_host_paths(tmp_path: Path) -> None:
    import errno

    from agentctl.memory.store import os_error_text

    err = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "secret"))
    assert str(os_error_text("create", err)) == (
        "The create command failed: No space left on device"
    )
    gone = FileNotFoundError(errno.ENOENT, "gone", str(tmp_path))
    assert str(os_error_text("insert", gone)) == (
        "The insert command failed: No such file or directory (changed concurrently? try again)"
    )


@pytest.mark.dates
def test_root_removed_by_hand_is_made_again(tmp_path: Path) -> None:
    import shutil

    store = MemoryStore(tmp_path / "m")
    store.execute({"command": "create", "path": f"{M}/a.md", "file_text": "a"})
    shutil.rmtree(store.root)
    out = store.execute({"command": "view", "path": M})
    assert out.endswith("\n4K\t/memories")
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700


def _create(store: MemoryStore, path: str, text: str = "x") -> str:
    return store.execute({"command": "create", "path": f"{M}/{path}", "file_text": text})


@pytest.mark.slow
def test_creates_do_not_walk_the_tree_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_files=10_000))
    for d in range(20):
        for f in range(10):
            _create(store, f"d{d}/f{f}.md")
    calls = []
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    for n in range(50):
        _create(store, f"new/n{n}.md")
    # A walk per create would scan the 21+ folders 50 times; the kept usage scans none.
    assert len(calls) < 10, len(calls)


@pytest.mark.dates
def test_usage_seen_by_two_stores_on_one_root(tmp_path: Path) -> None:
    settings = MemorySettings(max_files=4, max_total_bytes=100)
    a = MemoryStore(tmp_path / "m", settings, session="a")
    b = MemoryStore(tmp_path / "m", settings, session="b")
    _create(a, "a1.md", "a" * 10)
    _create(b, "b1.md", "b" * 10)  # b walks: sees a's file
    _create(a, "a2.md", "a" * 10)  # a's kept figure is stale (b journaled): walks again
    _create(b, "d/b2.md", "b" * 10)
    with pytest.raises(ToolError, match="already holds 4 files"):
        _create(a, "a3.md")
    b.execute({"command": "delete", "path": f"{M}/d"})  # a folder: b walks next time
    msg = refused(a, {"command": "create", "path": f"{M}/big.md", "file_text": "z" * 71})
    assert "would hold 101 bytes" in msg
    _create(a, "ok.md", "z" * 70)
    b.execute({"command": "str_replace", "path": f"{M}/ok.md", "old_str": "z" * 70, "new_str": ""})
    grow = {
        "command": "str_replace",
        "path": f"{M}/a1.md",
        "old_str": "a" * 10,
        "new_str": "a" * 80,
    }
    a.execute(grow)  # 100 bytes again: a must know that ok.md shrank in b
    with pytest.raises(ToolError, match="would hold 102 bytes"):
        b.execute({"command": "insert", "path": f"{M}/ok.md", "insert_line": 0, "insert_text": "!"})


@pytest.mark.dates
def test_kept_usage_matches_a_walk_after_every_command(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m", MemorySettings(max_files=100, max_total_bytes=10_000))
    steps: list[dict[str, Any]] = [
        {"command": "create", "path": f"{M}/a.md", "file_text": "hello\n"},
        {"command": "create", "path": f"{M}/d/b.md", "file_text": "é" * 5},
        {"command": "insert", "path": f"{M}/a.md", "insert_line": 1, "insert_text": "more"},
        {"command": "str_replace", "path": f"{M}/d/b.md", "old_str": "é" * 5, "new_str": "ab"},
        {"command": "rename", "old_path": f"{M}/d", "new_path": f"{M}/e/d"},
        {"command": "delete", "path": f"{M}/a.md"},
        {"command": "create", "path": f"{M}/e/c.md", "file_text": "c"},
        {"command": "delete", "path": f"{M}/e"},
        {"command": "create", "path": f"{M}/z.md", "file_text": "zz"},
    ]
    for step in steps:
        store.execute(step)
        with store.locked() as fd:
            assert store.usage(fd) == fsops.usage(fd), step
    store.write_text(f"{M}/z.md", "longer text")
    store.write_text(f"{M}/w.md", "new")
    with store.locked() as fd:
        assert store.usage(fd) == fsops.usage(fd)
    store.clear()
    with store.locked() as fd:
        assert store.usage(fd) == fsops.usage(fd) == fsops.Usage(0, 0)


def _create_big(dir_path: str, size: int) -> None:
    fd = os.open(dir_path, os.O_RDONLY | os.O_DIRECTORY)
    fsops.create_exclusive(fd, "big.md", b"x" * size)


@pytest.mark.skipif(not fsops._unnamed_ok, reason="no O_TMPFILE on this system")
@pytest.mark.slow
def test_create_killed_mid_write_leaves_nothing_behind(tmp_path: Path) -> None:
    import signal
    import time

    size = 64 * 2**20
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_create_big, args=(str(tmp_path), size))
    proc.start()
    time.sleep(0.15)  # inside the write or the fsync of 64 MiB
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    left = {p.name: p.stat().st_size for p in tmp_path.iterdir()}
    # Complete or absent, and never a named temp file for the next writer to sweep.
    assert left in ({}, {"big.md": size}), {n: s for n, s in left.items()}


def test_create_without_unnamed_files_uses_a_temp_name(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fsops._create_via_temp(fd, "a.md", b"hello")
        with pytest.raises(FileExistsError):
            fsops._create_via_temp(fd, "a.md", b"again")
        with pytest.raises(FileExistsError):
            fsops.create_exclusive(fd, "a.md", b"again")
    finally:
        os.close(fd)
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]
    assert (tmp_path / "a.md").read_bytes() == b"hello"
    assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == 0o600
