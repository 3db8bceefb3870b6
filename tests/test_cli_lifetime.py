"""cli/lifetime: SIGTERM / SIGHUP stop a run as Ctrl-C does, once; nohup is
respected; the previous handlers come back. In-process (the end-to-end cases, with real
processes and a killed parent, are in tests/tools/test_mcp.py)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from agentctl.cli.lifetime import ParentWatch, stop_with_parent


@pytest.fixture(autouse=True)
def _keep_handlers() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    for sig in saved:  # start from the defaults, whatever an earlier test (or Ray) installed
        signal.signal(sig, signal.SIG_DFL)
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_the_first_sigterm_stops_with_its_name_and_a_second_is_ignored() -> None:
    stop = pytest.raises(KeyboardInterrupt, match=r"^stopped by SIGTERM$")
    with stop, stop_with_parent(True):
        try:
            signal.raise_signal(signal.SIGTERM)
        finally:  # as while the servers stop: a second signal must not cut that short
            signal.raise_signal(signal.SIGHUP)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL


def test_sighup_stops_with_its_name() -> None:
    with pytest.raises(KeyboardInterrupt, match=r"^stopped by SIGHUP$"), stop_with_parent(True):
        signal.raise_signal(signal.SIGHUP)


def test_under_nohup_sighup_stays_ignored() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with stop_with_parent(True):
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        signal.raise_signal(signal.SIGHUP)  # nothing happens
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_without_servers_sigterm_still_stops_but_no_parent_is_watched() -> None:
    stop = pytest.raises(KeyboardInterrupt, match=r"^stopped by SIGTERM$")
    with stop, stop_with_parent(False):
        assert not any(t.name == "agentctl-parent" for t in threading.enumerate())
        signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_live_parent_is_watched_without_firing_and_the_watch_closes() -> None:
    fired = threading.Event()
    watch = ParentWatch(fired.set)
    watch.close()
    assert not fired.is_set()
    assert not any(t.name == "agentctl-parent" for t in threading.enumerate())


def test_ctrl_c_stops_once_and_a_second_one_is_ignored_until_the_block_ends() -> None:
    """What lets a run print its summary so far when Ctrl-C is pressed twice."""
    from agentctl.cli.lifetime import ctrl_c_once

    before = signal.getsignal(signal.SIGINT)
    finished = False
    with pytest.raises(KeyboardInterrupt), ctrl_c_once():
        try:
            signal.raise_signal(signal.SIGINT)
        finally:  # as while the run stops and prints its summary
            signal.raise_signal(signal.SIGINT)
            finished = True
    assert finished
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):  # after the block, Ctrl-C is Python's again
        signal.raise_signal(signal.SIGINT)
