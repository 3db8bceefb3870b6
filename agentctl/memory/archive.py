"""Portable memory archives (tar.gz, entries under `memories/`): export, and a guarded import.

Import streams the archive (nothing is extracted by tarfile, see unpack.py), refuses the whole
archive if any entry escapes the root, is a link or a device, is reserved, or breaks a limit,
and checks everything before writing anything.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

from agentctl.errors import UsageError
from agentctl.memory import fsops
from agentctl.memory.commands import ROOT
from agentctl.memory.guard import open_dir
from agentctl.memory.history import contents_at
from agentctl.memory.store import MemoryStore
from agentctl.memory.unpack import PREFIX, ArchivedFile, ImportPlan, OverBudgetError, open_stream
from agentctl.memory.walk import walk
from agentctl.profile.settings import MemorySettings


def export_archive(store: MemoryStore) -> tuple[bytes, int]:
    """The root as tar.gz bytes (agentctl's own files and symlinks left out), and files count."""
    buffer = io.BytesIO()
    count = 0
    with store.opened() as fd, tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for found in walk(fd, skip=fsops.is_reserved, sort=True):
            st = found.st
            info = tarfile.TarInfo("/".join((PREFIX, *found.path)))
            info.mtime, info.mode = int(st.st_mtime), stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif stat.S_ISREG(st.st_mode):
                data = fsops.read_bytes(found.dir_fd, found.name, "/".join(found.path))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
                count += 1
    return buffer.getvalue(), count


class _Dir:
    """An fd for root/parts (no symlinks followed), closed on exit."""

    def __init__(self, root_fd: int, parts: tuple[str, ...]) -> None:
        self.fd = open_dir(root_fd, parts)

    def __enter__(self) -> int:
        return self.fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


_ARCHIVE_ERRORS: tuple[type[BaseException], ...] = (tarfile.TarError, OSError, EOFError, ValueError)


def read_archive(src: Path, settings: MemorySettings | None = None) -> list[ArchivedFile]:
    """Every file in the archive, streamed: each member and each limit checked before its data
    is read, the whole decompressed stream held to a byte budget. UsageError names the problem.
    """
    plan = ImportPlan(src, settings or MemorySettings())
    try:
        with (
            open_stream(src, plan.budget) as stream,
            tarfile.open(fileobj=stream, mode="r|") as tar,
        ):
            for member in tar:
                plan.add(tar, member)
    except OverBudgetError:
        raise UsageError(
            f"{src}: decompresses to more than {plan.budget} bytes, more than "
            "memory.max_total_bytes allows; nothing was imported"
        ) from None
    except _ARCHIVE_ERRORS as err:
        raise UsageError(f"{src}: not a readable tar archive ({err.__class__.__name__})") from None
    return plan.files()


def import_archive(store: MemoryStore, src: Path, *, replace: bool = False) -> int:
    """Write the archive's files into the store; returns how many. All or nothing on refusal.

    Journaled as one `import` entry listing every file written with its size (replayable).
    """
    files = read_archive(src, store.settings)
    with store.locked() as fd:
        old_sizes = [_existing_size(fd, f, src, replace) for f in files]
        _check_limits(store, fd, files, old_sizes, src)
        total = sum(len(f.data) for f in files)
        listed = {"/".join((ROOT, *f.parts)): len(f.data) for f in files}
        before: dict[str, bytes] = {}
        for path in listed:
            before.update(contents_at(fd, path))
        after = {"/".join((ROOT, *f.parts)): f.data for f in files}
        changes = store.planned(fd, before, after)
        with store.changing(
            fd, "import", ROOT, delta=None, changes=changes, bytes=total, files=listed
        ):
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
