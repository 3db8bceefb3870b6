"""Runs a stdio MCP server so that everything it started ends when agentctl ends, even when
agentctl is killed (SIGKILL) and can stop nothing itself, and even what left the server's
process group (a `setsid()` daemon). Linux (pidfd, PR_SET_CHILD_SUBREAPER); standard library.

agentctl's MCP SDK starts `python -I -S mcp_reaper.py OWNER GRACE_S PROGRAM [ARG...]` in a new
session, so this process (the *relay*) leads the group the SDK signals. Three processes:

- the relay (the pid the SDK knows) forks the keeper, lets go of the server's pipes and waits
  for the server's wait status, which the keeper sends it; then it exits with that status (an
  exit code, or the same signal). It ignores SIGTERM, SIGINT and SIGHUP: the SDK signals the
  whole group, which reaches the server itself.
- the keeper moves to a group of its own (out of the SDK's signals, SIGKILL included), becomes
  a child subreaper, starts the server and waits for agentctl (pid OWNER), the relay or the
  server to end. A subreaper adopts every orphan below it, so whatever the server started stays
  in the keeper's tree of descendants, whatever its group or session. Then it sends SIGTERM to
  every descendant (found through /proc's parent links) and, after GRACE_S seconds, SIGKILL to
  whatever still runs.
- the server, the keeper's child in the relay's group, with the pipes, is PROGRAM (exec).

Why not PR_SET_PDEATHSIG: the death signal reaches the direct child only (a server's own
children would live on), and it fires when the *thread* that forked the child ends. Why a relay
and the keeper apart: the keeper must be an ancestor of the server (to adopt its orphans) and
outside the group the SDK kills, and a session leader cannot leave its group.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

EXIT_CANNOT_EXEC = 127  # as a shell reports a command it cannot run
EXIT_OWNER_GONE = 1
POLL_S = 0.02  # how often the tree is looked at while it winds down
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
KILL_ROUNDS = 100  # SIGKILL rounds for descendants that keep forking, at POLL_S apart
GONE = ("Z", "X")  # a zombie runs nothing (and is gone once its parent or the keeper reaps it)


def main(argv: list[str]) -> int:
    owner, grace_s, program = int(argv[1]), float(argv[2]), argv[3:]
    try:
        owner_fd = os.pidfd_open(owner)
    except ProcessLookupError:
        return EXIT_OWNER_GONE
    if os.getppid() != owner:  # agentctl ended before the pidfd was open (its pid reused)
        return EXIT_OWNER_GONE
    relay = os.getpid()
    status_r, status_w = os.pipe()
    if os.fork() == 0:
        os.close(status_r)
        keep(owner_fd, relay, os.getpgrp(), status_w, grace_s, program)
    os.close(status_w)
    os.close(owner_fd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    to_devnull()  # the server's pipes: agentctl must see EOF when the server ends
    return relay_status(status_r)


def relay_status(status_r: int) -> int:
    """Exit as the server did: the keeper writes its wait status; nothing means the keeper was
    killed, and the server with it or soon."""
    with os.fdopen(status_r, "rb") as pipe:
        said = pipe.read().decode()
    if not said:
        return EXIT_OWNER_GONE
    code = os.waitstatus_to_exitcode(int(said))
    if code >= 0:
        return code
    with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no disposition
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    return 128 - code  # a signal that does not end a process by default (not reached otherwise)


def keep(
    owner_fd: int, relay: int, group: int, status_w: int, grace_s: float, program: list[str]
) -> None:
    """The keeper: start the server in `group` (the relay's), wait for agentctl, the relay or
    the server to end, then end every descendant; never returns."""
    os.setpgid(0, 0)
    become_subreaper()
    relay_fd = os.pidfd_open(relay)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wakeup fd is written
    server = os.fork()
    if server == 0:
        for fd in (owner_fd, relay_fd, status_w, wake_r, wake_w):
            os.close(fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        start_server(group, program)
    with contextlib.suppress(OSError):  # done by the server too; whichever runs first
        os.setpgid(server, group)
    to_devnull()
    keeper = Keeper(server, status_w)
    while keeper.status is None:
        ready, _, _ = select.select([owner_fd, relay_fd, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        keeper.reap()
        if owner_fd in ready or relay_fd in ready:
            break
    keeper.end_tree(grace_s)
    os._exit(0)


def become_subreaper() -> None:
    """Orphans below this process are adopted by it instead of init. Where prctl cannot be
    called, the tree still holds every descendant whose parent lives."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def start_server(group: int, program: list[str]) -> None:
    """In the relay's group (which the SDK signals), exec PROGRAM with the signal dispositions a
    direct start would give it."""
    try:
        os.setpgid(0, group)
    except OSError:  # the relay is gone: nobody waits for this server
        os._exit(EXIT_OWNER_GONE)
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(program[0], program)
    except OSError as err:
        print(f"cannot start {program[0]!r}: {err.strerror}", file=sys.stderr, flush=True)
        os._exit(EXIT_CANNOT_EXEC)


def to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


class Keeper:
    """Reaps the keeper's children (the server and adopted orphans) and ends its tree."""

    def __init__(self, server: int, status_w: int) -> None:
        self.server, self.status_w = server, status_w
        self.status: int | None = None
        self.me = os.getpid()

    def end_tree(self, grace_s: float) -> None:
        """SIGTERM to every descendant (those born while it winds down too); SIGKILL to what
        still runs `grace_s` seconds later."""
        termed: set[int] = set()
        deadline = time.monotonic() + grace_s
        rounds = 0
        while rounds < KILL_ROUNDS:
            self.reap()
            below = tree(self.me)
            running = {pid for pid, (state, _) in below.items() if state not in GONE}
            if not running:
                break
            if time.monotonic() < deadline:
                sig, targets = signal.SIGTERM, running - termed
                termed |= running
            else:
                sig, targets, rounds = signal.SIGKILL, running, rounds + 1
            for pid in targets:
                send(pid, {self.me, *below}, sig)
            time.sleep(POLL_S)
        self.reap()

    def reap(self) -> None:
        """Reap every child that ended; the server's status goes to the relay at once."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.server and self.status is None:
                self.status = status
                with contextlib.suppress(OSError):
                    os.write(self.status_w, str(status).encode())
                os.close(self.status_w)


def send(pid: int, parents: set[int], sig: signal.Signals) -> None:
    """Signal `pid` through a pidfd, if its parent is still one of `parents` once the pidfd is
    open: a pid that ended and was reused meanwhile is never signalled."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if stat(pid)[1] in parents:
            signal.pidfd_send_signal(fd, sig)
    except OSError:  # it ended meanwhile, or is not ours (a set-uid program)
        pass
    finally:
        os.close(fd)


def tree(root: int) -> dict[int, tuple[str, int]]:
    """(state, parent) of every process below `root`, from /proc's parent links."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            state, parent = stat(int(entry.name))
            children.setdefault(parent, []).append((int(entry.name), state))
    below: dict[int, tuple[str, int]] = {}
    todo = [root]
    while todo:
        parent = todo.pop()
        for pid, state in children.get(parent, ()):
            if pid not in below:
                below[pid] = (state, parent)
                todo.append(pid)
    return below


def stat(pid: int) -> tuple[str, int]:
    """(state letter, parent pid) of `pid`; ("", 0) when it has ended."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rpartition(")")[2].split()  # state, ppid, ...
    except OSError:
        return "", 0
    return fields[0], int(fields[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
