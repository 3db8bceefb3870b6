"""Runs a stdio MCP server so that its process group ends when agentctl ends, even when agentctl
is killed (SIGKILL) and can stop nothing itself. Linux (pidfd); standard library only.

agentctl's MCP SDK starts `python -I -S mcp_reaper.py OWNER GRACE_S PROGRAM [ARG...]` in a new
session (so this process leads the server's process group). It starts a watchdog, then becomes
PROGRAM (exec): the server keeps the pid, pipes and exit status the SDK expects of it. The
watchdog moves to a group of its own, lets go of the server's pipes and waits for agentctl
(pid OWNER) or the server to end. Then it sends SIGTERM to the server's group and, after
GRACE_S seconds, SIGKILL to whatever in it still runs.

Why a watchdog process and not PR_SET_PDEATHSIG: the death signal reaches the direct child only
(a server's own children would live on), and it fires when the *thread* that forked the child
ends, not the process.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

EXIT_CANNOT_EXEC = 127  # as a shell reports a command it cannot run
EXIT_OWNER_GONE = 1
POLL_S = 0.02  # how often the group is looked at while it winds down


def main(argv: list[str]) -> int:
    owner, grace_s, program = int(argv[1]), float(argv[2]), argv[3:]
    try:
        owner_fd = os.pidfd_open(owner)
    except ProcessLookupError:
        return EXIT_OWNER_GONE
    if os.getppid() != owner:  # agentctl ended before the pidfd was open (its pid reused)
        return EXIT_OWNER_GONE
    group = os.getpid()  # the SDK started this process as a session (and group) leader
    server_fd = os.pidfd_open(group)  # this process, which is about to become the server
    start_watchdog(owner_fd, server_fd, group, grace_s)
    become(program)
    return EXIT_CANNOT_EXEC  # not reached: become() execs or exits


def start_watchdog(owner_fd: int, server_fd: int, group: int, grace_s: float) -> None:
    """Fork the watchdog twice, so that it is no child of the server: a server that waits for
    all its children, or counts them, never meets it."""
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            watch(owner_fd, server_fd, group, grace_s)
        os._exit(0)
    os.waitpid(middle, 0)


def become(program: list[str]) -> None:
    """Exec PROGRAM with the signal dispositions a direct start would give it."""
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(program[0], program)
    except OSError as err:
        print(f"cannot start {program[0]!r}: {err.strerror}", file=sys.stderr, flush=True)
        os._exit(EXIT_CANNOT_EXEC)


def watch(owner_fd: int, server_fd: int, group: int, grace_s: float) -> None:
    """The watchdog: wait for agentctl or the server to end, then end the group; never returns."""
    os.setpgid(0, 0)  # out of the group it ends, and of the SDK's signals to it
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the server's pipes: agentctl must see EOF when the server ends
        os.dup2(devnull, fd)
    select.select([owner_fd, server_fd], [], [])
    end_group(group, grace_s)
    os._exit(0)


def end_group(group: int, grace_s: float) -> None:
    """SIGTERM to the group; SIGKILL to what still runs after `grace_s` seconds."""
    if not signal_group(group, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace_s
    while running_in(group):
        if time.monotonic() >= deadline:
            signal_group(group, signal.SIGKILL)
            return
        time.sleep(POLL_S)


def signal_group(group: int, sig: signal.Signals) -> bool:
    """False when the group has no process left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True


def running_in(group: int) -> bool:
    """Whether a process of `group` still runs. Zombies do not count: a zombie runs nothing, and
    one whose parent never reaps it (an init that does not) would keep the group forever."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and member_state(entry.name, group) not in ("", "Z", "X"):
            return True
    return False


def member_state(pid: str, group: int) -> str:
    """The state letter of /proc/PID when it belongs to `group`, else ""."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()  # state, ppid, pgrp, ...
    except OSError:  # it ended while we looked
        return ""
    return fields[0] if int(fields[2]) == group else ""


if __name__ == "__main__":
    sys.exit(main(sys.argv))
