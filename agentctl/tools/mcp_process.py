"""How a stdio MCP server's process is started: its program found first (for a clear error), and
on Linux under `mcp_reaper`, so that its process group ends when agentctl does."""

from __future__ import annotations

import errno
import functools
import os
import shutil
import sys
from pathlib import Path

from agentctl.profile.settings import McpServer

REAPER = Path(__file__).with_name("mcp_reaper.py")
# From the watchdog's SIGTERM to its SIGKILL of what is left (the SDK's own stop waits as long).
REAP_GRACE_S = 2.0


def launch_argv(server: McpServer) -> list[str]:
    """The argv that starts `server`: its command, under the reaper where it works.

    OSError (ENOENT, EACCES) when the program cannot be found or run, as a direct start says.
    """
    locate(server.command[0], server.env.get("PATH", os.environ.get("PATH")), server.cwd)
    if not reaper_works():
        return list(server.command)
    owner = str(os.getpid())
    return [sys.executable, "-I", "-S", str(REAPER), owner, str(REAP_GRACE_S), *server.command]


def locate(program: str, path: str | None, cwd: Path) -> None:
    """Raise the OSError exec would for `program` (a name looked up on `path`, or a path taken
    from `cwd`), so that a typo is told as such before any process starts."""
    if os.sep in program:
        candidate = cwd / program
        if not candidate.is_file():
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(candidate, os.X_OK):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), program)
        return
    if shutil.which(program, path=path) is None:
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), program)


@functools.cache
def reaper_works() -> bool:
    """True on Linux 5.3 and later (pidfd_open) in a Python that can run a script; elsewhere
    (or frozen into an application) servers start directly."""
    if not hasattr(os, "pidfd_open") or not sys.executable or getattr(sys, "frozen", False):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True
