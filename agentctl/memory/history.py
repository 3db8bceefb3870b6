"""The content side of a memory root's history: content-addressed blobs and per-file changes.

Every journal entry carries `changes`, `{path: [before, after]}`: for each file the change
touched, the blob id (sha256 of the bytes) it held before and after, null where there was no
file. Blobs live in the root's `.agentctl-history/` folder, one file per distinct content,
written before the change's intent line, so every id a journal line names is on disk whatever
the moment a writer is killed. Blobs are not fsynced (a kill -9 keeps them; a power loss may
not): a blob whose bytes no longer hash to its id reads as missing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import suppress

from agentctl.errors import ToolError
from agentctl.memory.fsops import (
    FILE_MODE,
    RESERVED_PREFIX,
    is_reserved,
    lstat_at,
    read_bytes,
    write_all,
)
from agentctl.memory.guard import DIR_MODE, open_dir, split_relative
from agentctl.memory.walk import walk

HISTORY_DIR = RESERVED_PREFIX + "-history"
ROOT = "/memories"
Change = tuple[str | None, str | None]  # (blob before, blob after); None: no file
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TMP = RESERVED_PREFIX + "-tmp-"


def blob_id(data: bytes) -> str:
    """The id of some content: its sha256, hex."""
    import hashlib  # here: its OpenSSL start-up is paid by a write, not by `memory view`

    return hashlib.sha256(data).hexdigest()


def _open_history(root_fd: int, *, create: bool) -> int | None:
    try:
        return os.open(HISTORY_DIR, _DIR_FLAGS, dir_fd=root_fd)
    except FileNotFoundError:
        if not create:
            return None
    with suppress(FileExistsError):
        os.mkdir(HISTORY_DIR, DIR_MODE, dir_fd=root_fd)
    return os.open(HISTORY_DIR, _DIR_FLAGS, dir_fd=root_fd)


def put_blob(root_fd: int, data: bytes) -> tuple[str, int]:
    """Keep `data` as a blob (once per content); its id and the bytes newly written (0: kept)."""
    ident = blob_id(data)
    fd = _open_history(root_fd, create=True)
    assert fd is not None
    try:
        st = lstat_at(fd, ident)
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
            return ident, 0
        tmp = f"{_TMP}{os.getpid()}-{os.urandom(6).hex()}"
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(tmp, flags, FILE_MODE, dir_fd=fd)
        try:
            write_all(out, data)
        finally:
            os.close(out)
        os.replace(tmp, ident, src_dir_fd=fd, dst_dir_fd=fd)  # same id, same bytes: replace is safe
        return ident, len(data)
    finally:
        os.close(fd)


def read_blob(root_fd: int, ident: str) -> bytes | None:
    """The content of a blob; None when it is missing, pruned or damaged."""
    if len(ident) != 64 or not all(c in "0123456789abcdef" for c in ident):
        return None
    fd = _open_history(root_fd, create=False)
    if fd is None:
        return None
    try:
        blob = os.open(ident, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    with os.fdopen(blob, "rb") as handle:
        data = handle.read()
    return data if blob_id(data) == ident else None


def blob_sizes(root_fd: int) -> dict[str, int]:
    """Every blob kept, with its size."""
    fd = _open_history(root_fd, create=False)
    if fd is None:
        return {}
    try:
        with os.scandir(fd) as it:
            return {e.name: e.stat(follow_symlinks=False).st_size for e in it if e.is_file()}
    finally:
        os.close(fd)


def drop_blobs(root_fd: int, idents: set[str]) -> int:
    """Delete these blobs; the bytes freed."""
    fd = _open_history(root_fd, create=False)
    if fd is None:
        return 0
    freed = 0
    try:
        for ident in idents:
            st = lstat_at(fd, ident)
            with suppress(FileNotFoundError):
                os.unlink(ident, dir_fd=fd)
                freed += st.st_size if st is not None else 0
    finally:
        os.close(fd)
    return freed


# -- the files a change touches ------------------------------------------------------------


def contents_at(root_fd: int, path: str) -> dict[str, bytes]:
    """The regular files at or under the memory path `path` (`/memories/...`), with bytes."""
    return {p: data for p, data in _read_at(root_fd, path)}


def _read_at(root_fd: int, path: str) -> Iterator[tuple[str, bytes]]:
    if path == ROOT:
        yield from _read_below(root_fd, ROOT)
        return
    try:
        parts = split_relative(path.removeprefix(ROOT + "/"))
        parent = open_dir(root_fd, parts[:-1])
    except (OSError, ToolError):
        return
    try:
        st = lstat_at(parent, parts[-1])
        if st is not None and stat.S_ISREG(st.st_mode):
            with suppress(OSError, ToolError):
                yield path, read_bytes(parent, parts[-1], path)
            return
        if st is None or not stat.S_ISDIR(st.st_mode):
            return
        sub = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        yield from _read_below(sub, path)
    finally:
        os.close(sub)


def _read_below(dir_fd: int, prefix: str) -> Iterator[tuple[str, bytes]]:
    for found in walk(dir_fd, skip=is_reserved, sort=True):
        if stat.S_ISREG(found.st.st_mode):
            shown = "/".join((prefix, *found.path))
            with suppress(OSError, ToolError):
                yield shown, read_bytes(found.dir_fd, found.name, shown)


def kept(root_fd: int, contents: dict[str, bytes]) -> tuple[dict[str, str], int]:
    """Each file's content kept as a blob: path -> id, and the bytes newly written."""
    ids: dict[str, str] = {}
    written = 0
    for path, data in contents.items():
        ids[path], added = put_blob(root_fd, data)
        written += added
    return ids, written


def changes_record(changes: dict[str, Change]) -> dict[str, list[str | None]]:
    """Changes as a journal line holds them."""
    return {path: [before, after] for path, (before, after) in changes.items()}
