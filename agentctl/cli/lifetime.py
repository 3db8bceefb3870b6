"""A run ends the way Ctrl-C ends it (the stop recorded with the resume hint, MCP servers
stopped, exit 130) on SIGTERM and on SIGHUP; a run with MCP servers also when the process that
started agentctl ends (so no server outlives it).

A run started under `nohup` (SIGHUP ignored) is meant to outlive its parent: then neither SIGHUP
nor the parent's end stops it. A process-level policy, so it lives here in the CLI: a Python
caller of `agentctl.run` keeps its own signal handling.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

PARENT_GONE = "stopped: the process that started agentctl ended"


class Interruption:
    """The handler of SIGTERM and SIGHUP: the first raises KeyboardInterrupt with its reason in
    the main thread; later ones (and any once `done`) are ignored, so that they cannot cut the
    servers' stop short."""

    def __init__(self) -> None:
        self.done = False
        self.cause = ""

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.done:
            return
        self.done = True
        raise KeyboardInterrupt(self.cause or f"stopped by {signal.Signals(signum).name}")

    def parent_gone(self) -> None:
        """From the watch thread: SIGHUP to the main thread, where the handler raises."""
        self.cause = PARENT_GONE
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGHUP)


class ParentWatch:
    """A thread that calls `on_gone` once the parent process (as it is now) ends; Linux pidfd
    (elsewhere it watches nothing). `close` ends the thread."""

    def __init__(self, on_gone: Callable[[], None]) -> None:
        self._on_gone = on_gone
        self._thread: threading.Thread | None = None
        parent = os.getppid()
        try:
            self._pidfd = os.pidfd_open(parent)
        except (AttributeError, OSError):  # no pidfd here, or the parent already ended
            if os.getppid() != parent:
                on_gone()
            return
        if os.getppid() != parent:  # it ended before the pidfd was open: the pid may be reused
            os.close(self._pidfd)
            on_gone()
            return
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._watch, name="agentctl-parent", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        ready, _, _ = select.select([self._pidfd, self._wake_r], [], [])
        if self._pidfd in ready:
            self._on_gone()

    def close(self) -> None:
        if self._thread is None:
            return
        os.write(self._wake_w, b"x")
        self._thread.join()
        for fd in (self._pidfd, self._wake_r, self._wake_w):
            os.close(fd)


@contextmanager
def stop_with_parent(enabled: bool) -> Iterator[None]:
    """Install the handlers for the block, and the parent watch when `enabled` (only in the
    main thread); restore the previous handlers after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interruption = Interruption()
    watched = [s for s in (signal.SIGTERM, signal.SIGHUP) if not ignored(s)]
    previous = {sig: signal.signal(sig, interruption.handle) for sig in watched}
    watch: ParentWatch | None = None
    try:  # a parent already gone raises here, in the main thread: the handlers go back too
        parent = enabled and signal.SIGHUP in watched
        watch = ParentWatch(interruption.parent_gone) if parent else None
        yield
    finally:
        interruption.done = True
        if watch is not None:  # joined before the handlers go: no SIGHUP can reach the default
            watch.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def ignored(sig: signal.Signals) -> bool:
    return signal.getsignal(sig) is signal.SIG_IGN


@contextmanager
def ctrl_c_once() -> Iterator[None]:
    """Ctrl-C stops the run once: a second one, while the run stops and prints its summary so
    far, is ignored. Only in the main thread, and not where SIGINT is ignored; the previous
    handler comes back after the block."""
    if threading.current_thread() is not threading.main_thread() or ignored(signal.SIGINT):
        yield
        return
    interrupted = threading.Event()

    def handle(_signum: int, _frame: FrameType | None) -> None:
        if interrupted.is_set():
            return
        interrupted.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
