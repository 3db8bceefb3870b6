"""Portable memory archives (tar.gz, entries under `memories/`): export, and a guarded import.

Import reads members straight from the archive (nothing is extracted by tarfile), refuses the
whole archive if any entry escapes the root, is a link or a device, or is reserved, and checks
the store's limits before writing anything.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from agentctl.errors import UsageError
from agentctl.memory import fsops
from agentctl.memory.guard import PathRefusedError, open_dir, split_relative
from agentctl.memory.store import MemoryStore

PREFIX = "memories"


@dataclass(frozen=True)
class ArchivedFile:
    """One file to import: its components below the root and its bytes."""

    parts: tuple[str, ...]
    data: bytes


def export_archive(store: MemoryStore) -> tuple[bytes, int]:
    """The root as tar.gz bytes (agentctl's own files and symlinks left out), and files count."""
    buffer = io.BytesIO()
    count = 0
    with store.opened() as fd, tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for parts, st in _walk(fd, ()):
            info = tarfile.TarInfo("/".join((PREFIX, *parts)))
            info.mtime, info.mode = int(st.st_mtime), stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
                continue
            data = _read(fd, parts)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            count += 1
    return buffer.getvalue(), count


def _walk(fd: int, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], os.stat_result]]:
    out: list[tuple[tuple[str, ...], os.stat_result]] = []
    with _Dir(fd, parts) as dir_fd:
        for entry in fsops.scan_sorted(dir_fd):
            if not parts and entry.name.startswith(fsops.RESERVED_PREFIX):
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                out.append(((*parts, entry.name), st))
                out.extend(_walk(fd, (*parts, entry.name)))
            elif stat.S_ISREG(st.st_mode):
                out.append(((*parts, entry.name), st))
    return out


class _Dir:
    """An fd for root/parts (no symlinks followed), closed on exit."""

    def __init__(self, root_fd: int, parts: tuple[str, ...]) -> None:
        self.fd = open_dir(root_fd, parts)

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _read(root_fd: int, parts: tuple[str, ...]) -> bytes:
    with _Dir(root_fd, parts[:-1]) as dir_fd:
        return fsops.read_bytes(dir_fd, parts[-1], "/".join(parts))


def read_archive(src: Path) -> list[ArchivedFile]:
    """Every file in the archive, all entries checked first; UsageError names the bad one."""
    try:
        with tarfile.open(src, mode="r:*") as tar:
            return [f for m in tar.getmembers() if (f := _member(tar, m, src)) is not None]
    except (tarfile.TarError, OSError, EOFError) as err:
        raise UsageError(f"{src}: not a readable tar archive ({err.__class__.__name__})") from None


def _member(tar: tarfile.TarFile, member: tarfile.TarInfo, src: Path) -> ArchivedFile | None:
    parts = _member_parts(member.name, src)
    if member.isdir():
        return None  # directories are made as files need them
    if not member.isfile():
        raise UsageError(
            f"{src}: entry {member.name!r} is a link or special file; only regular files and "
            "directories can be imported (nothing was imported)"
        )
    handle = tar.extractfile(member)
    assert handle is not None  # a regular file member always has data
    return ArchivedFile(parts, handle.read())


def _member_parts(name: str, src: Path) -> tuple[str, ...]:
    head, _, rest = name.partition("/")
    where = f"{src}: entry {name!r}"
    if head != PREFIX:
        raise UsageError(f"{where} is not under {PREFIX}/ (nothing was imported)")
    try:
        parts = split_relative(rest)
    except PathRefusedError as err:
        raise UsageError(f"{where} refused: {err} (nothing was imported)") from None
    if any(p.startswith(fsops.RESERVED_PREFIX) for p in parts):
        raise UsageError(f"{where} uses a name reserved for agentctl (nothing was imported)")
    return parts


def import_archive(store: MemoryStore, src: Path, *, replace: bool = False) -> int:
    """Write the archive's files into the store; returns how many. All or nothing on refusal."""
    files = read_archive(src)
    with store.locked() as fd:
        old_sizes = [_existing_size(fd, f, src, replace) for f in files]
        _check_limits(store, fd, files, old_sizes, src)
        total = sum(len(f.data) for f in files)
        with store.changing(fd, "import", f"/{PREFIX}", delta=None, bytes=total):
            for item in files:
                with _Parent(fd, item.parts) as parent:
                    fsops.replace_atomic(parent, item.parts[-1], item.data)
    return len(files)


def _existing_size(fd: int, item: ArchivedFile, src: Path, replace: bool) -> int | None:
    shown = "/".join((f"/{PREFIX}", *item.parts))
    try:
        with _Dir(fd, item.parts[:-1]) as dir_fd:
            st = fsops.lstat_at(dir_fd, item.parts[-1])
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"{src}: a parent of {shown} is a file; nothing was imported") from None
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode) or not replace:
        what = "exists" if stat.S_ISREG(st.st_mode) else "exists and is not a regular file"
        hint = " (use --replace to overwrite)" if stat.S_ISREG(st.st_mode) else ""
        raise UsageError(f"{src}: {shown} {what}{hint}; nothing was imported")
    return st.st_size


def _check_limits(
    store: MemoryStore, fd: int, files: list[ArchivedFile], old: list[int | None], src: Path
) -> None:
    s = store.settings
    for item in files:
        if 0 < s.max_file_bytes < len(item.data):
            raise UsageError(
                f"{src}: /{PREFIX}/{'/'.join(item.parts)} is {len(item.data)} bytes, over "
                f"memory.max_file_bytes ({s.max_file_bytes}); nothing was imported"
            )
    now = store.usage(fd)
    total = now.bytes + sum(len(f.data) for f in files) - sum(size or 0 for size in old)
    new_files = now.files + sum(1 for size in old if size is None)
    if 0 < s.max_total_bytes < total or 0 < s.max_files < new_files:
        raise UsageError(
            f"{src}: importing would make {new_files} files / {total} bytes, over "
            f"memory.max_files ({s.max_files}) or memory.max_total_bytes "
            f"({s.max_total_bytes}); nothing was imported"
        )


class _Parent(_Dir):
    """The parent directory of a file to import, created 0700 as needed."""

    def __init__(self, root_fd: int, parts: tuple[str, ...]) -> None:
        self.fd = open_dir(root_fd, parts[:-1], create=True)
