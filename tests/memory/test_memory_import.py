"""`memory import` on hostile archives (issue 10): all or nothing, streamed, journaled."""

from __future__ import annotations

import gzip
import io
import tarfile
import tracemalloc
from pathlib import Path

import pytest
from reliability.helpers import assert_store_consistent

from agentctl.errors import UsageError
from agentctl.memory.archive import import_archive
from agentctl.memory.journal import read_entries
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

M = "/memories"


def archive(path: Path, members: list[tuple[str, bytes | None]]) -> Path:
    """A tar.gz of (name, data) members; data None makes a directory member."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "mem")


@pytest.mark.parametrize("name", ["memories", "memories/.", "memories/./"])
def test_a_file_member_named_as_the_root_is_refused(
    store: MemoryStore, tmp_path: Path, name: str
) -> None:
    src = archive(tmp_path / "a.tar.gz", [("memories/ok.md", b"ok"), (name, b"x")])
    with pytest.raises(UsageError, match="nothing was imported"):
        import_archive(store, src)
    assert list(store.root.iterdir()) == []


@pytest.mark.dates
def test_a_directory_member_named_as_the_root_is_fine(store: MemoryStore, tmp_path: Path) -> None:
    src = archive(tmp_path / "a.tar.gz", [("memories", None), ("memories/./a.md", b"a")])
    assert import_archive(store, src) == 1
    assert (store.root / "a.md").read_text() == "a"


@pytest.mark.parametrize(
    "members",
    [
        [("memories/a", b"file"), ("memories/a/b.md", b"under it")],
        [("memories/a/b.md", b"under it"), ("memories/a", b"file")],
        [("memories/a/", None), ("memories/a", b"file")],
    ],
)
def test_a_name_that_is_both_file_and_folder_imports_nothing(
    store: MemoryStore, tmp_path: Path, members: list[tuple[str, bytes | None]]
) -> None:
    src = archive(tmp_path / "a.tar.gz", [("memories/first.md", b"1"), *members])
    with pytest.raises(UsageError, match=r"both a file and a folder.*nothing was imported"):
        import_archive(store, src)
    assert sorted(p.name for p in store.root.iterdir()) == []


@pytest.mark.dates
def test_duplicate_members_count_once_and_the_last_wins(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem", MemorySettings(max_files=1, max_total_bytes=10))
    src = archive(tmp_path / "a.tar.gz", [("memories/a.md", b"old"), ("memories/a.md", b"new!")])
    assert import_archive(store, src) == 1
    assert (store.root / "a.md").read_bytes() == b"new!"


def gzip_bomb(path: Path, size: int, *, kind: bytes = tarfile.REGTYPE) -> Path:
    """One member of `size` zero bytes (a file, or a pax header): a few kB compressed."""
    info = tarfile.TarInfo("memories/bomb.md")
    info.size, info.type = size, kind
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(info.tobuf())
        chunk = bytes(1 << 20)
        for _ in range(size >> 20):
            out.write(chunk)
        out.write(bytes(-size % 512))
    return path


def test_a_gzip_bomb_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem", MemorySettings(max_file_bytes=1000))
    src = gzip_bomb(tmp_path / "bomb.tar.gz", 64 << 20)
    assert src.stat().st_size < 200_000
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match=r"over memory\.max_file_bytes"):
            import_archive(store, src)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak} bytes allocated"
    assert list(store.root.iterdir()) == []


def test_a_bomb_in_a_tar_header_is_stopped_at_the_byte_budget(tmp_path: Path) -> None:
    settings = MemorySettings(max_total_bytes=1000, max_files=10)
    store = MemoryStore(tmp_path / "mem", settings)
    src = gzip_bomb(tmp_path / "bomb.tar.gz", 64 << 20, kind=tarfile.XHDTYPE)
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="decompresses to more than 1059816 bytes"):
            import_archive(store, src)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak} bytes allocated"


@pytest.mark.dates
def test_an_import_is_journaled_as_replayable_files(store: MemoryStore, tmp_path: Path) -> None:
    store.execute({"command": "create", "path": f"{M}/keep.md", "file_text": "k"})
    src = archive(tmp_path / "a.tar.gz", [("memories/x/a.md", b"aa"), ("memories/b.md", b"b")])
    import_archive(store, src)
    entry = read_entries(store.root)[-1]
    assert entry["command"] == "import"
    assert entry["files"] == {f"{M}/x/a.md": 2, f"{M}/b.md": 1}
    assert set(assert_store_consistent(store.root)) == {f"{M}/keep.md", f"{M}/x/a.md", f"{M}/b.md"}
