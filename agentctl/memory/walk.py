"""Iterative walks of a directory tree by fds: no recursion, no symlink followed, any depth.

A hand-made tree hundreds of levels deep must not crash a store (RecursionError) that counts,
exports, sweeps or deletes it: every walk here keeps its own stack, one open fd per level.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field

_SUBDIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Found:
    """One entry met by `walk`: the directories above it, its directory's fd, name and lstat."""

    parts: tuple[str, ...]
    dir_fd: int
    name: str
    st: os.stat_result

    @property
    def path(self) -> tuple[str, ...]:
        return (*self.parts, self.name)


@dataclass
class _Level:
    parts: tuple[str, ...]
    fd: int
    names: Iterator[str] = field(default_factory=lambda: iter(()))


def open_subdir(dir_fd: int, name: str) -> int | None:
    """The directory `name` in `dir_fd`, never through a symlink; None if gone or not a dir."""
    try:
        return os.open(name, _SUBDIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def _names(fd: int, sort: bool) -> Iterator[str]:
    with os.scandir(fd) as it:
        names = [entry.name for entry in it]
    return iter(sorted(names) if sort else names)


def walk(
    top_fd: int, *, skip: Callable[[str], bool] = lambda _: False, sort: bool = False
) -> Iterator[Found]:
    """Every entry below `top_fd`, a directory before its contents; `skip`ped names not entered.

    The fd in each Found is valid until the next step. Entries that vanish are passed over.
    """
    stack = [_Level((), os.dup(top_fd))]
    stack[0].names = _names(stack[0].fd, sort)
    try:
        while stack:
            level = stack[-1]
            name = next(level.names, None)
            if name is None:
                os.close(stack.pop().fd)
            elif not skip(name) and (found := _found(level, name)) is not None:
                yield found
                _descend(stack, found, sort)
    finally:
        for level in stack:
            os.close(level.fd)


def _found(level: _Level, name: str) -> Found | None:
    try:
        st = os.stat(name, dir_fd=level.fd, follow_symlinks=False)
    except OSError:
        return None
    return Found(level.parts, level.fd, name, st)


def _descend(stack: list[_Level], found: Found, sort: bool) -> None:
    if not stat.S_ISDIR(found.st.st_mode):
        return
    sub = open_subdir(found.dir_fd, found.name)
    if sub is None:
        return
    stack.append(_Level(found.path, sub))
    try:
        stack[-1].names = _names(sub, sort)
    except OSError:
        stack[-1].names = iter(())


def remove_tree(dir_fd: int, name: str) -> None:
    """Delete the directory `name` and all below it, by fds, without recursion or following.

    Each directory is listed once: its files go at once, its subdirectories are entered one
    after another, and it is removed when the last of them is gone.
    """
    sub = open_subdir(dir_fd, name)
    if sub is None:
        raise NotADirectoryError(name)
    stack = [(dir_fd, name, sub, _clear_files(sub))]
    try:
        while stack:
            parent, here, fd, subdirs = stack[-1]
            child = next(subdirs, None)
            if child is None:
                stack.pop()
                os.close(fd)
                os.rmdir(here, dir_fd=parent)
            elif (child_fd := open_subdir(fd, child)) is not None:
                stack.append((fd, child, child_fd, _clear_files(child_fd)))
    finally:
        for _, _, fd, _ in stack:  # left open only when something failed
            os.close(fd)


def _clear_files(fd: int) -> Iterator[str]:
    """Unlink every non-directory in `fd`; the names of its subdirectories, to enter next."""
    subdirs = []
    with os.scandir(fd) as it:
        entries = list(it)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            subdirs.append(entry.name)
        else:
            with suppress(FileNotFoundError):
                os.unlink(entry.name, dir_fd=fd)
    return iter(subdirs)


def depth_below(dir_fd: int, name: str, *, at_most: int) -> int:
    """Levels below the directory `name` (a file in it: 1); stops counting past `at_most`."""
    sub = open_subdir(dir_fd, name)
    if sub is None:
        return 0
    deepest = 0
    try:
        for found in walk(sub):
            deepest = max(deepest, len(found.parts) + 1)
            if deepest > at_most:
                break
    finally:
        os.close(sub)
    return deepest
