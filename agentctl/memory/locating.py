"""Finding things under the root for the store: parent dir fds, lstat, the SDK's messages."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from agentctl.errors import ToolError
from agentctl.memory import fsops
from agentctl.memory.commands import MemoryPath
from agentctl.memory.guard import PathRefusedError, open_dir, symlink_refused


def locate(fd: int, path: MemoryPath, *, missing: ToolError) -> tuple[int, os.stat_result]:
    """The parent dir fd (caller closes) and lstat of a path's last part; `missing` if absent.

    A symlink as the last part is refused here, so no command acts through one.
    """
    try:
        parent = open_dir(fd, path.parts[:-1], display=path.text)
    except (FileNotFoundError, NotADirectoryError):
        raise missing from None
    st = fsops.lstat_at(parent, path.parts[-1])
    if st is None or stat.S_ISLNK(st.st_mode):
        os.close(parent)
        raise missing if st is None else symlink_refused(path.text)
    return parent, st


def parent_dir(fd: int, path: MemoryPath, *, create: bool) -> int:
    try:
        return open_dir(fd, path.parts[:-1], create=create, display=path.text)
    except NotADirectoryError:
        raise _parent_is_file(path) from None


def exists(fd: int, path: MemoryPath) -> bool:
    try:
        parent = open_dir(fd, path.parts[:-1], display=path.text)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise _parent_is_file(path) from None
    with closing(parent):
        return fsops.lstat_at(parent, path.parts[-1]) is not None


def size_if_file(fd: int, path: MemoryPath) -> int | None:
    try:
        parent, st = locate(fd, path, missing=ToolError(""))
    except PathRefusedError:
        raise
    except ToolError:
        return None
    os.close(parent)
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"The path {path.text} is a directory, not a file")
    return st.st_size


def _parent_is_file(path: MemoryPath) -> ToolError:
    return ToolError(f"Cannot use {path.text}: one of its parent directories is a file")


def missing_view(path: MemoryPath) -> ToolError:
    return ToolError(f"The path {path.text} does not exist. Please provide a valid path.")


@contextmanager
def closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def text_file_parent(fd: int, path: MemoryPath) -> int:
    """Parent dir fd of an existing regular file, with the SDK's messages otherwise."""
    if path.is_root:
        raise ToolError(f"The path {path.text} is not a file.")
    parent, st = locate(fd, path, missing=missing_view(path))
    if not stat.S_ISREG(st.st_mode):
        os.close(parent)
        raise ToolError(f"The path {path.text} is not a file.")
    return parent
