"""The memory root itself: made (or found missing), checked writable; OS errors as the model
sees them."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from agentctl.errors import ConfigError, ToolError
from agentctl.memory.fsops import WriteFailedError, open_own
from agentctl.memory.guard import DIR_MODE, open_root
from agentctl.memory.lock import LOCK_NAME

_RACE_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.ENOTEMPTY, errno.EEXIST)
# `run` has no --root (it takes --set); the memory commands have both.
_HINT = (
    "check memory.root in the profile (or --set memory.root=DIR;"
    " `agentctl memory` also takes --root)"
)


def os_error_text(command: str, err: OSError) -> WriteFailedError:
    """An OSError as the model may see it: the errno text only, never its host paths."""
    reason = os.strerror(err.errno) if err.errno else type(err).__name__
    hint = " (changed concurrently? try again)" if err.errno in _RACE_ERRNOS else ""
    return WriteFailedError(f"The {command} command failed: {reason}{hint}")


def ensure_root(root: Path) -> None:
    """Create the root and any missing parents 0700; ConfigError when that is impossible."""
    try:
        _make_root(root)
    except OSError as err:
        raise ConfigError(
            f"memory root {root}: cannot create it ({err.strerror or err}); {_HINT}"
        ) from None
    if not root.is_dir():
        raise ConfigError(f"memory root {root}: not a directory; {_HINT}")


def require_root(root: Path) -> None:
    """For commands that only read: the root must exist already (it is never created here)."""
    if not root.exists():
        raise ConfigError(f"memory root {root}: no such folder (nothing to show); {_HINT}")
    if not root.is_dir():
        raise ConfigError(f"memory root {root}: not a directory; {_HINT}")


def check_writable(root: Path) -> None:
    """ConfigError naming the root when agentctl cannot write there (checked at a run's start).

    The probe is the root's lock file, which every write creates anyway.
    """
    try:
        fd = open_root(root)
        try:
            os.close(open_own(fd, LOCK_NAME, os.O_RDWR | os.O_CREAT))
        finally:
            os.close(fd)
    except (OSError, ToolError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ConfigError(f"memory root {root}: not writable ({why}); {_HINT}") from None


def _make_root(root: Path) -> None:
    missing: list[Path] = []
    current = root
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)
