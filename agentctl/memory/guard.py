"""Confine hostile relative paths to a root: pure checks first, then a no-follow walk by dir fds.

Two layers, usable on their own:
- `split_relative(rel)` is pure: it refuses `..`, backslashes, NUL and control characters,
  percent-encoded separators or dots (also double-encoded), over-long paths and names, and
  returns the components. Nothing is touched.
- `open_dir(root_fd, parts)` opens a directory below an already open root one component at a
  time with O_NOFOLLOW, so a symlink anywhere on the path (even one swapped in after the check)
  is refused instead of followed. `open_inside(root, rel)` combines both for read-only tools.
Messages echo the path as the caller gave it (control characters escaped, long paths cut), never
a host path.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote

from agentctl.errors import ToolError

MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255
MAX_DEPTH = 32
_SHOWN_CHARS = 120
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_MODE = 0o700


class PathRefusedError(ToolError):
    """A path the guard will not act on; `reason` is a short machine-readable tag."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def shown(path: str) -> str:
    """The path as safe to echo: control characters escaped, cut to a readable length."""
    text = "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in path)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


def split_relative(rel: str, *, display: str | None = None) -> tuple[str, ...]:
    """Check a `/`-separated relative path and return its components (empty and `.` dropped).

    `display` is what messages call the path (default: `rel` itself). Raises PathRefusedError.
    """
    name = shown(rel if display is None else display)
    _check_characters(rel, name)
    if len(rel.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise PathRefusedError(f"Path {name} is longer than {MAX_PATH_BYTES} bytes", "too_long")
    if rel.startswith("/"):
        raise PathRefusedError(f"Path {name} is absolute; give a relative path", "absolute")
    parts = tuple(p for p in rel.split("/") if p not in ("", "."))
    for part in parts:
        _check_part(part, name)
    if len(parts) > MAX_DEPTH:
        raise PathRefusedError(f"Path {name} is nested deeper than {MAX_DEPTH} levels", "too_deep")
    return parts


def _check_characters(rel: str, name: str) -> None:
    if any(ord(ch) < 0x20 or ch == "\x7f" for ch in rel):
        raise PathRefusedError(f"Path {name} contains a NUL or control character", "control")
    if "\\" in rel:
        raise PathRefusedError(
            f"Path {name} contains a backslash; separate directories with '/'", "backslash"
        )
    if _decodes_to_hostile(rel):
        raise PathRefusedError(
            f"Path {name} contains a percent-encoded '.', '/', '\\' or NUL; write it plainly",
            "encoded",
        )


# Overlong UTF-8 and IIS %u forms of '.', '/' and '\\': harmless on POSIX (we never decode
# names), refused so that no layer that does decode them ever meets one.
_ALT_ENCODINGS = re.compile(r"%c0%a[ef]|%c1%9c|%e0%80%a[ef]|%u00(?:2e|2f|5c)", re.IGNORECASE)


def _decodes_to_hostile(rel: str) -> bool:
    if _ALT_ENCODINGS.search(rel):
        return True
    # Decode repeatedly so %252e%252e (double-encoded) is caught as well as %2e%2e.
    current = rel
    for _ in range(4):
        decoded = unquote(current, errors="replace") if "%" in current else current
        if decoded == current:
            return False
        if any(c in decoded for c in ("\\", "\x00")) or decoded.count("/") != current.count("/"):
            return True
        if any(p == ".." for p in decoded.split("/")):
            return True
        current = decoded
    return True


def _check_part(part: str, name: str) -> None:
    if part == "..":
        raise PathRefusedError(f"Path {name} contains '..'; parent steps are not allowed", "dotdot")
    if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise PathRefusedError(
            f"Path {name} has a name longer than {MAX_NAME_BYTES} bytes", "name_too_long"
        )


def open_root(root: Path) -> int:
    """Open the (trusted, configured) root directory; the caller closes the fd."""
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_dir(root_fd: int, parts: Sequence[str], *, create: bool = False, display: str = "") -> int:
    """Open root/parts... as a directory fd without following any symlink.

    Missing components raise FileNotFoundError (or are created 0700 when `create`); a component
    that is a file raises NotADirectoryError; a symlink raises PathRefusedError.
    """
    fd = os.dup(root_fd)
    try:
        for part in parts:
            nxt = _open_child_dir(fd, part, create, display)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_dir(fd: int, part: str, create: bool, display: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as err:
        _raise_for_child(fd, part, err, display)
    return _make_child_dir(fd, part, display)


def _make_child_dir(fd: int, part: str, display: str) -> int:
    # Created concurrently is fine: open whatever is there, still without following.
    with suppress(FileExistsError):
        os.mkdir(part, DIR_MODE, dir_fd=fd)
    try:
        child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as err:
        _raise_for_child(fd, part, err, display)
    os.fchmod(child, DIR_MODE)  # mkdir obeys the umask; the mode must not
    return child


def _raise_for_child(fd: int, part: str, err: OSError, display: str) -> NoReturn:
    if err.errno in (errno.ELOOP, errno.EMLINK) or is_symlink(fd, part):
        raise symlink_refused(display) from None
    if err.errno == errno.ENOTDIR:
        raise NotADirectoryError(errno.ENOTDIR, "not a directory") from None
    raise err


def is_symlink(dir_fd: int, name: str) -> bool:
    """True when `name` in the directory `dir_fd` is a symlink (never follows it)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def symlink_refused(display: str) -> PathRefusedError:
    """The one message for a path that would go through a symlink."""
    return PathRefusedError(
        f"Path {shown(display)} goes through a symbolic link; symlinks are not followed",
        "symlink",
    )


def open_inside(root: Path, rel: str, flags: int = os.O_RDONLY) -> int:
    """Open the regular file root/rel for a read-only tool: checked, walked without following.

    Raises PathRefusedError (hostile path, symlink, not a regular file) or FileNotFoundError.
    """
    parts = split_relative(rel)
    if not parts:
        raise PathRefusedError(f"Path {shown(rel)} is a directory, not a file", "not_file")
    root_fd = open_root(root)
    try:
        dir_fd = open_dir(root_fd, parts[:-1], display=rel)
    finally:
        os.close(root_fd)
    try:
        return open_file_nofollow(dir_fd, parts[-1], flags, rel)
    finally:
        os.close(dir_fd)


def open_file_nofollow(dir_fd: int, name: str, flags: int, display: str) -> int:
    """Open `name` in `dir_fd` as a regular file, refusing symlinks, FIFOs and devices."""
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):
            raise symlink_refused(display) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathRefusedError(f"Path {shown(display)} is not a regular file", "not_file")
    return fd


def resolve_inside(root: Path, rel: str) -> Path:
    """root/rel after the pure checks and an lstat walk that refuses symlinks and escapes.

    For callers that need a Path (listing, stat). It cannot stop a symlink swapped in after the
    check: to read a file, prefer `open_inside`, which walks by fds.
    """
    parts = split_relative(rel)
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise symlink_refused(rel)
    resolved = current.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise PathRefusedError(f"Path {shown(rel)} is outside the root", "escape")
    return current
