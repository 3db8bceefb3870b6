"""What a server may send back: a deadline per request, size caps, bounded JSON, sane usage.

Stdlib and `agentctl.types` only, no SDK import: the client module feeds `BodyBudget` every
chunk of a response body as it arrives, and hands the finished message to `check_message`
before it becomes our types; its `Watchdog` cuts the connections of a request still running
at its deadline (a server that is silent, or trickles its headers, sends no chunk to check).
A failed check raises `ResponseRejected` with a one-line reason; the client turns it into an
ApiError that is not retried (a server that sent it once will send it again).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from agentctl.errors import REQUEST_SIZE_REMEDY, RequestTooLargeError
from agentctl.types import USAGE_OBJECTS, USAGE_TOKENS

DEFAULT_DEADLINE_S = 600.0
MAX_BODY_BYTES = 128 * 2**20
# One SSE event (everything up to its blank line) is buffered whole by the SDK: bound it.
MAX_EVENT_BYTES = 16 * 2**20
MAX_JSON_DEPTH = 128
# No context window holds a billion tokens: a larger count is a broken or hostile server.
MAX_REPORTED_TOKENS = 10**9
_REQUIRED_USAGE = ("input_tokens", "output_tokens")
EDIT_COUNTS = ("cleared_input_tokens", "cleared_tool_uses", "cleared_thinking_turns")
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")
_LINE_ENDS = (b"\n",)  # JSONL (Message Batches results): each line is one record
# JSON joins a valid surrogate pair into one character: a surrogate left in a str is lone.
_SURROGATE = re.compile("[\ud800-\udfff]")
# httpcore trace events whose return value is a new network stream (a connection).
_CONNECTED = (".connect_tcp.complete", ".start_tls.complete", ".connect_unix_socket.complete")


MAX_REQUEST_BYTES = 32 << 20  # the Messages API's request size limit (32 MB)


def check_request_size(path: str, size: int, limit: int = MAX_REQUEST_BYTES) -> None:
    """RequestTooLargeError for a Messages API request body over `limit` bytes, before it
    is sent (a Message Batch has a limit of its own)."""
    if size > limit and path.rstrip("/").endswith(("/v1/messages", "/count_tokens")):
        raise RequestTooLargeError(
            f"request not sent: its body is {_size(size)}, over the API's request size "
            f"limit ({_size(limit)}); {REQUEST_SIZE_REMEDY}"
        )


class ResponseRejected(Exception):
    """The response broke one of the limits; the message says which, in one line."""


@dataclass(frozen=True)
class WireLimits:
    """The limits of one request; `clock` is a seam for tests (monotonic seconds)."""

    deadline_s: float = DEFAULT_DEADLINE_S
    max_body_bytes: int = MAX_BODY_BYTES
    max_event_bytes: int = MAX_EVENT_BYTES
    clock: Callable[[], float] = field(default=time.monotonic)
    max_request_bytes: int = MAX_REQUEST_BYTES  # what may be sent (the API's limit)


class BodyBudget:
    """Counts one response's bytes and time as they arrive; raises once a limit is passed."""

    def __init__(self, limits: WireLimits, started: float, *, lines: bool = False) -> None:
        self.limits = limits
        self.deadline = started + limits.deadline_s
        self.ends = _LINE_ENDS if lines else _EVENT_ENDS
        self.total = 0
        self.pending = 0  # bytes since the last event boundary (blank line; JSONL: newline)
        self._tail = b""

    def check_time(self) -> None:
        if self.limits.clock() > self.deadline:
            raise ResponseRejected(too_late(self.limits.deadline_s))

    def feed(self, chunk: bytes) -> None:
        """Account for one chunk of the body, as received (before any decoding)."""
        self.check_time()
        self.total += len(chunk)
        if self.total > self.limits.max_body_bytes:
            raise ResponseRejected(f"response body larger than {_size(self.limits.max_body_bytes)}")
        data = self._tail + chunk
        end = -1  # just past the last event boundary in `data`
        for sep in self.ends:
            at = data.rfind(sep)
            if at >= 0 and at + len(sep) > end:
                end = at + len(sep)
        self.pending = len(data) - end if end >= 0 else self.pending + len(chunk)
        self._tail = data[-3:]
        if self.pending > self.limits.max_event_bytes:
            raise ResponseRejected(
                f"one stream event larger than {_size(self.limits.max_event_bytes)}"
            )


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the default port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def check_origin(url: str, base_url: str) -> None:
    """Every request goes to the API's own origin (`api.base_url`): a URL a server named
    (a batch's `results_url`) on another origin would get the key, and is refused."""
    if origin(url) != origin(base_url):
        shown = f"{origin(url)[0]}://{urlsplit(url).netloc}"
        raise ResponseRejected(
            f"the server named {shown} for a request, another origin than api.base_url "
            f"{base_url.rstrip('/')}; refused (the key goes only to the API's origin)"
        )


def too_late(deadline_s: float) -> str:
    return f"no complete response within {deadline_s:g}s (api.deadline_s)"


@dataclass
class Alarm:
    """One armed deadline: `expired` once the watchdog has cut the connections for it."""

    expired: bool = False


class Watchdog:
    """Shuts a client's connections when a request outlives its deadline.

    `trace` is the httpcore `trace` extension: it collects the connections the client opens.
    One request at a time per client (the ModelClient contract): expiry cuts them all.
    """

    def __init__(self) -> None:
        self.streams: weakref.WeakSet[Any] = weakref.WeakSet()
        self._current: Alarm | None = None

    def trace(self, name: str, info: dict[str, Any]) -> None:
        if name.endswith(_CONNECTED) and info.get("return_value") is not None:
            self.streams.add(info["return_value"])

    @contextlib.contextmanager
    def armed(self, seconds: float) -> Iterator[Alarm]:
        """Cut the connections if the block is still running after `seconds`."""
        alarm = self._current = Alarm()
        key = _TICKER.add(time.monotonic() + seconds, lambda: self._cut(alarm))
        try:
            yield alarm
        finally:
            _TICKER.remove(key)
            self._current = None

    def _cut(self, alarm: Alarm) -> None:
        if alarm is not self._current:
            return  # that request is over: its timer must not touch the next one
        alarm.expired = True
        for stream in list(self.streams):
            with contextlib.suppress(OSError, AttributeError, TypeError):
                # The plain socket call: SSLSocket.shutdown would unwrap under the reader.
                socket.socket.shutdown(stream.get_extra_info("socket"), socket.SHUT_RDWR)


class _Ticker:
    """One thread for every Watchdog of the process: runs each armed action at its deadline.

    A `threading.Timer` per request started and ended a thread each turn (about 70 us of CPU,
    measured). Here a request only adds and removes an entry; the thread is woken only when
    an entry is due sooner than the time it sleeps until (with equal deadlines, never).
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # the thread does not survive a fork

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Callable[[], None]]] = {}
        self._keys = itertools.count()
        self._until: float | None = None  # when the thread wakes next; None: when told
        self._thread: threading.Thread | None = None

    def add(self, deadline: float, action: Callable[[], None]) -> int:
        with self._cond:
            key = next(self._keys)
            self._armed[key] = (deadline, action)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentctl-deadlines")
                self._thread.daemon = True
                self._thread.start()
            elif self._until is None or deadline < self._until:
                self._cond.notify()
        return key

    def remove(self, key: int) -> None:
        with self._cond:
            self._armed.pop(key, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [key for key, (deadline, _) in self._armed.items() if deadline <= now]
                actions = [self._armed.pop(key)[1] for key in due]
                if not actions:
                    self._until = min((d for d, _ in self._armed.values()), default=None)
                    self._cond.wait(None if self._until is None else self._until - now)
                    continue
            for action in actions:
                action()


_TICKER = _Ticker()


def _size(count: int) -> str:
    return f"{count / 2**20:g} MiB" if count >= 2**20 else f"{count} bytes"


def check_message(message: Mapping[str, Any]) -> None:
    """A finished message: JSON nesting bounded, the shapes we read, whole counts in range."""
    if nested_deeper_than(message, MAX_JSON_DEPTH):
        raise ResponseRejected(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if not _objects(message.get("content")):
        raise ResponseRejected("content is not a list of blocks")
    check_usage(message.get("usage"))
    check_edits(message.get("context_management"))


def check_edits(context_management: Any) -> None:
    """`context_management.applied_edits`, if present: objects with whole, positive counts."""
    if context_management is None:
        return
    edits: Any = None
    if isinstance(context_management, Mapping):
        edits = context_management.get("applied_edits", [])
    if not _objects(edits):
        raise ResponseRejected("context_management.applied_edits is not a list of objects")
    for index, edit in enumerate(edits):
        for name in EDIT_COUNTS:
            value = edit.get(name)
            if value is not None and not _token_count(value):
                where = f"context_management.applied_edits[{index}].{name}"
                raise ResponseRejected(f"{where} = {value!r} is not a count")


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, Mapping) for item in value)


def check_usage(usage: Any, where: str = "usage") -> None:
    """Input and output counts present, every count a whole number from 0 to 10^9, in each
    object of counts too (`USAGE_OBJECTS`: server tool requests are billed, cache writes by
    TTL priced); the same for each entry of `iterations` (compaction entries are billed)."""
    if not isinstance(usage, Mapping):
        raise ResponseRejected(f"the message has no {where} object")
    for name in USAGE_TOKENS:
        value = usage.get(name)
        if value is None and name not in _REQUIRED_USAGE:
            continue
        if not _token_count(value):
            raise ResponseRejected(f"{where}.{name} = {value!r} is not a token count")
    for name in USAGE_OBJECTS:
        _check_counts(usage.get(name), f"{where}.{name}")
    iterations = usage.get("iterations")
    if iterations is None or where != "usage":
        return
    if not _objects(iterations):
        raise ResponseRejected("usage.iterations is not a list of objects")
    for index, entry in enumerate(iterations):
        check_usage(entry, f"usage.iterations[{index}]")


def _check_counts(counts: Any, where: str) -> None:
    """An object of counts (or absent): each value null or a whole number from 0 to 10^9."""
    if counts is None:
        return
    if not isinstance(counts, Mapping):
        raise ResponseRejected(f"{where} is not an object")
    for name, value in counts.items():
        if value is not None and not _token_count(value):
            raise ResponseRejected(f"{where}.{name} = {value!r} is not a count")


def _token_count(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value == int(value) and 0 <= value <= MAX_REPORTED_TOKENS


def scrub_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD: JSON
    may carry `\\ud800`, which no UTF-8 output, file or terminal can take. Iterative; the
    message is already bounded in depth (`check_message`)."""
    if not _SURROGATE.search(json.dumps(value, ensure_ascii=False)):
        return value  # the usual case, found at C speed (the walk was 2% of a turn's CPU)
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        node = holder[key]
        if isinstance(node, str):
            holder[key] = _scrubbed(node)
        elif isinstance(node, list):
            stack.extend((node, index) for index in range(len(node)))
        elif isinstance(node, dict):
            items = [(_scrubbed(k) if isinstance(k, str) else k, v) for k, v in node.items()]
            node.clear()
            node.update(items)
            stack.extend((node, k) for k in node)
    return root[0]


def _scrubbed(text: str) -> str:
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def nested_deeper_than(value: Any, limit: int) -> bool:
    """True when lists/dicts nest more than `limit` levels (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, Mapping) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, Mapping | list))
    return False
