"""File primitives on directory fds: no-follow reads, atomic writes, exclusive creates, usage."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from agentctl.errors import ToolError, ToolFailure
from agentctl.memory.guard import open_file_nofollow, shown
from agentctl.memory.walk import remove_tree, walk

FILE_MODE = 0o600
# Everything agentctl keeps in the root starts with this; the model may not touch such names.
RESERVED_PREFIX = ".agentctl"
_TMP_PREFIX = RESERVED_PREFIX + "-tmp-"


def is_reserved(name: str) -> bool:
    """A name kept for agentctl's own files, in any case (the filesystem may ignore case)."""
    return name[: len(RESERVED_PREFIX)].casefold() == RESERVED_PREFIX


class WriteFailedError(ToolFailure):
    """A change that failed for a reason other than the model's input: the disk, the OS, or a
    hostile file where agentctl keeps its own. Counted as a failed write by the memory tool."""


def own_file_refused(name: str, why: str) -> WriteFailedError:
    return WriteFailedError(
        f"The memory directory's {name} {why}; agentctl will not use it. Remove it by hand."
    )


def open_own(root_fd: int, name: str, flags: int) -> int:
    """Open one of agentctl's own files (journal, lock) in the root: a plain regular file only.

    Never follows a symlink, never waits on a FIFO (O_NONBLOCK), refuses devices and files with
    more than one hard link (writes would reach a file outside the root).
    """
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, FILE_MODE, dir_fd=root_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENXIO, errno.EMLINK):
            raise own_file_refused(name, "is not a regular file") from None
        raise
    try:
        _check_plain(fd, name, own_file_refused)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_own(root_fd: int, name: str) -> bytes:
    """The bytes of one of agentctl's own files in the root (b"" when there is none)."""
    try:
        fd = open_own(root_fd, name, os.O_RDONLY)
    except FileNotFoundError:
        return b""
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _check_plain(fd: int, name: str, refuse: Callable[[str, str], ToolError]) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise refuse(name, "is not a regular file")
    if st.st_nlink > 1:
        raise refuse(name, f"has {st.st_nlink} hard links (it may be a file outside the root)")


def _memory_file_refused(display: str, why: str) -> ToolError:
    return ToolError(f"The file {shown(display)} {why}; it is not read. Delete it or recreate it.")


@dataclass(frozen=True)
class Usage:
    """Regular files under the root (agentctl's own files excluded): how many, how many bytes."""

    files: int
    bytes: int


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    """lstat of `name` in `dir_fd`, None when missing."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_bytes(dir_fd: int, name: str, display: str) -> bytes:
    """The bytes of the regular file `name` (FileNotFoundError when it vanished)."""
    fd = open_file_nofollow(dir_fd, name, os.O_RDONLY, display)
    try:
        _check_plain(fd, display, _memory_file_refused)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read_text(dir_fd: int, name: str, display: str) -> str:
    """The UTF-8 text of the regular file `name`; a clear ToolError when it is not UTF-8."""
    try:
        data = read_bytes(dir_fd, name, display)
    except FileNotFoundError as err:
        raise ToolError(
            f"The file {display} no longer exists (may have been deleted or renamed concurrently)."
        ) from err
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"The file {display} is not UTF-8 text ({len(data)} bytes); the memory tool can only "
            "view and edit UTF-8 text files. Delete it or replace it with create."
        ) from None


def _write_temp(dir_fd: int, data: bytes) -> str:
    tmp = f"{_TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, FILE_MODE, dir_fd=dir_fd)
    try:
        os.fchmod(fd, FILE_MODE)  # the umask must not widen or narrow the mode
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    return tmp


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data`: a short write (a nearly full disk) is continued, not dropped."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_atomic(dir_fd: int, name: str, data: bytes) -> None:
    """Write `data` to `name`: temp file in the same dir, fsync, rename over the old file."""
    tmp = _write_temp(dir_fd, data)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)


def create_exclusive(dir_fd: int, name: str, data: bytes) -> None:
    """Create `name` with `data`, all or nothing; FileExistsError when anything has that name.

    The data is written and fsynced to an unnamed file (O_TMPFILE) that link() then names:
    link() never replaces an existing entry, so the file appears complete or not at all, and a
    writer killed before the link leaves nothing behind. Where O_TMPFILE or /proc is missing, a
    named temp file does the same.
    """
    fd = _open_unnamed(dir_fd)
    if fd is None:
        _create_via_temp(dir_fd, name, data)
        return
    try:
        os.fchmod(fd, FILE_MODE)
        write_all(fd, data)
        os.fsync(fd)
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
    finally:
        os.close(fd)
    os.fsync(dir_fd)


_unnamed_ok = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _open_unnamed(dir_fd: int) -> int | None:
    """An unnamed regular file in `dir_fd`, or None when this system cannot make one."""
    global _unnamed_ok
    if not _unnamed_ok:
        return None
    try:
        return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
    except OSError as err:
        if err.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            raise
        _unnamed_ok = False  # this filesystem or kernel has no O_TMPFILE
        return None


def _create_via_temp(dir_fd: int, name: str, data: bytes) -> None:
    tmp = _write_temp(dir_fd, data)
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    finally:
        os.unlink(tmp, dir_fd=dir_fd)
    os.fsync(dir_fd)


def remove_entry(dir_fd: int, name: str) -> None:
    """Delete the file or the whole directory `name` (rmtree by fds: never follows symlinks)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        remove_tree(dir_fd, name)
    else:
        os.unlink(name, dir_fd=dir_fd)
    os.fsync(dir_fd)


def scan_sorted(dir_fd: int) -> list[os.DirEntry[str]]:
    """Entries of an open directory sorted by name, as the SDK sorts them."""
    with os.scandir(dir_fd) as it:
        return sorted(it, key=lambda e: e.name)


def usage(root_fd: int) -> Usage:
    """Count the regular files and their bytes below the root, skipping agentctl's own.

    Reserved names are skipped at every level: the journal and lock at the top, and temp
    files, which live beside the file they replace.
    """
    files = total = 0
    for found in walk(root_fd, skip=is_reserved):
        if stat.S_ISREG(found.st.st_mode):
            files += 1
            total += found.st.st_size
    return Usage(files, total)


def is_stale_temp(name: str) -> bool:
    """A temp file left by a writer that died (kill -9 mid-write): its name carries the pid.

    Only files of processes that no longer exist qualify, so a live writer's temp file
    (another agent on the same root) is never taken for one.
    """
    return name.startswith(_TMP_PREFIX) and not _pid_alive(name)


def _pid_alive(temp_name: str) -> bool:
    pid_text = temp_name[len(_TMP_PREFIX) :].partition("-")[0]
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True
