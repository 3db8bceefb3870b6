"""The root's usage tally (files, bytes), kept between writes and between processes.

The limits need the root's totals before a write. Walking the tree for them costs a
process its first write (0.8-1.1 s at 100,000 files: docs/bench.md), and `agentctl run` is
one process a run, so the tally is kept in `.agentctl-tally.json` beside the journal,
rewritten under the root's lock after each change agentctl makes. It is trusted only while
both of these hold:

- the journal is exactly as the tally's last writer left it (same file, same size): every
  agentctl change, by any process, appends to the journal under the lock;
- every directory below the root has the inode and modification time it had then: a file or
  folder added, removed or renamed by another program changes its folder's mtime (editors
  that save by writing a new file and renaming it over the old one, too).

Otherwise the tree is walked again (and temp files of writers killed mid-write are swept in
the same walk). What these checks cannot see is a file rewritten in place by another program
(`>>`, an editor that overwrites): its size is counted as agentctl last saw it until the next
walk, which `MemoryStore.recount()` (`agentctl memory recount`) forces. docs/memory.md,
"Limits", says the same for users.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from agentctl.memory.fsops import (
    RESERVED_PREFIX,
    Usage,
    is_reserved,
    is_stale_temp,
    open_own,
    read_own,
)
from agentctl.memory.history import HISTORY_DIR
from agentctl.memory.journal import ROOT, JournalMark, journal_mark
from agentctl.memory.walk import walk

TALLY_NAME = RESERVED_PREFIX + "-tally.json"
TALLY_VERSION = 1
MAX_KEPT_DIRS = 4096  # past this many folders, each write's save would cost more than a walk
DirMark = tuple[int, int]  # a directory's (inode, mtime in ns)


@dataclass
class Survey:
    """One walk of the root: its usage, and the mark of every directory (key: relative path)."""

    usage: Usage
    dirs: dict[str, DirMark]


def survey(root_fd: int) -> Survey:
    """Walk the whole root once: count the files (agentctl's own left out), mark every folder,
    and remove temp files left by writers that died (a live writer's are never touched)."""
    files = total = 0
    dirs = {"": _mark(os.fstat(root_fd))}
    for found in walk(root_fd):
        mode = found.st.st_mode
        if stat.S_ISDIR(mode):
            dirs["/".join(found.path)] = _mark(found.st)  # marked before it is listed
        elif is_stale_temp(found.name):
            with suppress(FileNotFoundError):
                os.unlink(found.name, dir_fd=found.dir_fd)
        elif stat.S_ISREG(mode) and not any(map(is_reserved, found.path)):
            files += 1
            total += found.st.st_size
    return Survey(Usage(files, total), dirs)


def _mark(st: os.stat_result) -> DirMark:
    return (st.st_ino, st.st_mtime_ns)


class UsageTally:
    """The root's usage and what it was measured against. Call only with the root's lock held.

    In one process the kept figure is checked against the journal only (as cheap as one
    lstat); a process that has no figure yet loads the saved one and checks every folder too.
    """

    def __init__(self) -> None:
        self._usage: Usage | None = None
        self._mark: JournalMark | None = None
        self._dirs: dict[str, DirMark] = {}

    def peek(self, root_fd: int) -> Usage | None:
        """The kept or saved usage if it still holds, else None (no walk)."""
        mark = journal_mark(root_fd)
        if self._usage is not None and mark == self._mark:
            return self._usage
        saved = _load(root_fd, mark)
        if saved is None:
            return None
        self._usage, self._mark, self._dirs = saved.usage, mark, saved.dirs
        return self._usage

    def current(self, root_fd: int) -> Usage:
        """The root's usage: the kept or saved figure if it still holds, else a fresh walk."""
        kept = self.peek(root_fd)
        return kept if kept is not None else self.recount(root_fd)

    def recount(self, root_fd: int) -> Usage:
        """Walk the tree (sweeping dead writers' temp files) and save what it found."""
        _save(root_fd, None)  # the tally file first: creating it changes the root's mtime
        found = survey(root_fd)
        self._usage, self._mark, self._dirs = found.usage, journal_mark(root_fd), found.dirs
        _save(root_fd, self._state())
        return found.usage

    def check_folders(self, root_fd: int, paths: Iterable[str]) -> None:
        """Before a change to `paths` (memory paths): if a folder on the way to one of them
        changed since it was marked (another program wrote there), drop the kept figure, so
        the next use checks every folder. Marking them again after the change would
        otherwise take that hand change for agentctl's own."""
        for key in ("", *map(_key, paths)):
            parts = key.split("/") if key else []
            for depth in range(len(parts) + 1):
                here = "/".join(parts[:depth])
                want = self._dirs.get(here)
                if want is None:
                    break  # not a folder we marked: its parent's mark covers its creation
                st = _lstat(root_fd, here)
                if st is None or _mark(st) != want:
                    self.forget()
                    return

    def forget(self) -> None:
        """Drop the kept figure (a change is under way: until it is journaled, nothing holds)."""
        self._usage = self._mark = None

    def keep(
        self,
        root_fd: int,
        value: Usage | None,
        mark: JournalMark,
        changed: Iterable[str] = (),
        moved: tuple[str, str] | None = None,
    ) -> None:
        """After a journaled change: `value` is the usage now (None: unknown, walk next time).

        `changed`: the memory paths the change touched; their folders are marked again.
        `moved`: (old, new) of a rename, whose folders below keep their marks under new names.
        """
        self._usage, self._mark = value, (mark if value is not None else None)
        if value is None:
            return
        if moved is not None:
            self._move(*map(_key, moved))
        for key in ("", HISTORY_DIR, *map(_key, changed)):
            self._restat(root_fd, key)
        _save(root_fd, self._state())

    def _move(self, old: str, new: str) -> None:
        below = [k for k in self._dirs if _under(k, old)]
        for key in below:
            self._dirs[new + key[len(old) :]] = self._dirs.pop(key)

    def _restat(self, root_fd: int, key: str) -> None:
        """Mark again the folders from the root down to `key`; drop what is no folder now."""
        parts = key.split("/") if key else []
        for depth in range(len(parts) + 1):
            here = "/".join(parts[:depth])
            st = _lstat(root_fd, here)
            if st is not None and stat.S_ISDIR(st.st_mode):
                self._dirs[here] = _mark(st)
            else:
                for gone in [k for k in self._dirs if _under(k, here)]:
                    del self._dirs[gone]
                return

    def _state(self) -> dict[str, Any] | None:
        if self._usage is None or len(self._dirs) > MAX_KEPT_DIRS:
            return None
        return {
            "v": TALLY_VERSION,
            "journal": None if self._mark is None else list(self._mark),
            "files": self._usage.files,
            "bytes": self._usage.bytes,
            "dirs": self._dirs,
        }


def _key(path: str) -> str:
    """`/memories/a/b.md` -> `a/b.md` (the root: "")."""
    return path[len(ROOT) + 1 :] if path != ROOT else ""


def _under(key: str, top: str) -> bool:
    return not top or key == top or key.startswith(top + "/")


def _lstat(root_fd: int, key: str) -> os.stat_result | None:
    try:
        return os.stat(key or ".", dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return None


# -- the file ---------------------------------------------------------------------------------


def _save(root_fd: int, state: dict[str, Any] | None) -> None:
    """Rewrite the tally file in place (lock held): the JSON, then its CRC-32 on a line.

    In place, not by rename, so that saving does not change the root's own mtime. A write cut
    short (a kill, a full disk) leaves a file whose CRC does not match: it reads as no tally.
    `None` saves an empty file (no tally), which creates it if missing.
    """
    data = b""
    if state is not None:
        body = json.dumps(state, separators=(",", ":")).encode()
        data = body + f"\n{zlib.crc32(body):08x}\n".encode()
    fd = open_own(root_fd, TALLY_NAME, os.O_RDWR | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)
        if data:
            os.pwrite(fd, data, 0)  # cut short (a kill, a full disk): the CRC will not match
    finally:
        os.close(fd)


def _load(root_fd: int, mark: JournalMark | None) -> Survey | None:
    """The saved tally if it was saved at journal `mark` and no folder has changed since."""
    state = _read(root_fd)
    if state is None or state.get("journal") != (None if mark is None else list(mark)):
        return None
    dirs = state.get("dirs")
    files, size = state.get("files"), state.get("bytes")
    if not isinstance(dirs, dict) or not isinstance(files, int) or not isinstance(size, int):
        return None
    for key, want in dirs.items():
        st = _lstat(root_fd, key) if isinstance(key, str) else None
        if st is None or not stat.S_ISDIR(st.st_mode) or want != list(_mark(st)):
            return None
    return Survey(Usage(files, size), {key: (ino, ns) for key, (ino, ns) in dirs.items()})


def _read(root_fd: int) -> dict[str, Any] | None:
    data = read_own(root_fd, TALLY_NAME)
    body, _, check = data.rstrip(b"\n").rpartition(b"\n")
    if not body or check != f"{zlib.crc32(body):08x}".encode():
        return None
    try:
        state = json.loads(body)
    except ValueError:
        return None
    return state if isinstance(state, dict) and state.get("v") == TALLY_VERSION else None
