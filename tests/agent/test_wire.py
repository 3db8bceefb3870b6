"""agentctl.agent.wire: the byte, time and shape limits, checked without a server."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.agent.wire import (
    BodyBudget,
    ResponseRejected,
    Watchdog,
    WireLimits,
    check_message,
    nested_deeper_than,
)


def budget(**limits: Any) -> BodyBudget:
    return BodyBudget(WireLimits(**{"clock": lambda: 0.0, **limits}), started=0.0)


@given(st.lists(st.integers(min_value=1, max_value=30), max_size=20), st.sampled_from([
    b"\n\n", b"\r\n\r\n", b"\r\r"]))  # fmt: skip
def test_event_size_counts_from_the_last_blank_line_across_chunks(
    cuts: list[int], end: bytes
) -> None:
    body = (b"event: ping\ndata: {}" + end) * 3 + b"data: partial"
    meter = budget()
    start = 0
    for cut in [*cuts, len(body)]:
        meter.feed(body[start : start + cut])
        start += cut
    assert meter.pending == len(b"data: partial") and meter.total == len(body)


def test_limits_raise_one_line_reasons() -> None:
    with pytest.raises(ResponseRejected, match="one stream event larger than 10 bytes"):
        budget(max_event_bytes=10).feed(b"data: 0123456789")
    with pytest.raises(ResponseRejected, match="response body larger than 20 bytes"):
        meter = budget(max_body_bytes=20)
        for _ in range(5):
            meter.feed(b"x\n\n\n\n")
    times = iter([1.0, 2.5])
    late = budget(deadline_s=2, clock=lambda: next(times))
    late.feed(b"in time")
    with pytest.raises(
        ResponseRejected, match=r"no complete response within 2s \(api.deadline_s\)"
    ):
        late.feed(b"too late")


def test_nesting_is_measured_without_recursion() -> None:
    deep: Any = 0
    for _ in range(5_000):  # far past the recursion limit
        deep = {"a": [deep]}
    assert nested_deeper_than(deep, 128)
    assert not nested_deeper_than({"a": [{"b": 1}]}, 3)
    assert nested_deeper_than({"a": [{"b": []}]}, 3)


def test_usage_must_be_whole_non_negative_counts() -> None:
    good = {"input_tokens": 5, "output_tokens": 0, "cache_read_input_tokens": None}
    check_message({"content": [], "usage": good})
    bad_usages: list[Any] = [None, {"output_tokens": 1}, {"input_tokens": True, "output_tokens": 1}]
    for usage in bad_usages:
        with pytest.raises(ResponseRejected, match="usage"):
            check_message({"content": [], "usage": usage})


def test_the_shapes_read_later_are_checked() -> None:
    usage = {"input_tokens": 1, "output_tokens": 1}
    for content in (None, [1], "text"):
        with pytest.raises(ResponseRejected, match="content is not a list of blocks"):
            check_message({"content": content, "usage": usage})
    edits = {"applied_edits": [{"type": "x", "cleared_tool_uses": 2.5}]}
    with pytest.raises(ResponseRejected, match=r"applied_edits\[0\].cleared_tool_uses = 2.5"):
        check_message({"content": [], "usage": usage, "context_management": edits})
    check_message({"content": [{"type": "text"}], "usage": usage, "context_management": {}})


class _Stream:
    """What httpcore's network streams offer the watchdog."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> Any:
        return self.sock if name == "socket" else None


def test_the_watchdog_cuts_the_connections_of_the_current_request_only() -> None:
    dog = Watchdog()
    ours, theirs = socket.socketpair()
    stream = _Stream(ours)
    dog.trace("connection.connect_tcp.complete", {"return_value": stream})
    with dog.armed(600) as first:
        pass
    with dog.armed(600) as second:
        dog._cut(first)  # the late timer of a request that is over
        assert not first.expired and not second.expired
        theirs.sendall(b"x")
        assert ours.recv(1) == b"x"  # still connected
        dog._cut(second)
        assert second.expired
        assert ours.recv(1) == b""  # shut down: a blocked reader would wake up with EOF
    ours.close()
    theirs.close()


def test_a_sooner_deadline_fires_while_a_later_one_is_armed() -> None:
    """Every Watchdog shares one deadline thread: one asleep until an hour from now must
    still be woken for a request whose deadline is sooner."""
    later, dog = Watchdog(), Watchdog()
    ours, theirs = socket.socketpair()
    ours.settimeout(60)  # a failure, not a hang
    stream = _Stream(ours)  # held: the watchdog keeps streams weakly
    dog.trace("connection.connect_tcp.complete", {"return_value": stream})
    with later.armed(3600) as long_one, dog.armed(0.05) as short_one:
        assert ours.recv(1) == b""  # blocked until the watchdog shut the connection
        assert short_one.expired and not long_one.expired
    with dog.armed(3600) as quiet:  # disarmed in time: nothing is cut
        pass
    assert not quiet.expired
    ours.close()
    theirs.close()
