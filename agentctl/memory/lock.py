"""A cross-process exclusive lock on a memory root (fcntl.flock on a hidden file in the root)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from agentctl.memory.fsops import RESERVED_PREFIX, open_own

LOCK_NAME = RESERVED_PREFIX + ".lock"


@contextmanager
def root_lock(root_fd: int) -> Iterator[None]:
    """Hold the root's lock for the block: read-modify-write commands of several processes
    on one root run one after another, so no acknowledged update is lost."""
    fd = open_own(root_fd, LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


@contextmanager
def shared_root_lock(root_fd: int) -> Iterator[None]:
    """Hold the root's lock shared (readers): no writer is half way through a change meanwhile.

    A root that was never written has no lock file: then there is no writer to wait for.
    """
    fd = -1
    with suppress(FileNotFoundError):
        fd = open_own(root_fd, LOCK_NAME, os.O_RDONLY)
    try:
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        if fd >= 0:
            os.close(fd)
