"""When and how long to wait before resending a failed request: a small pure policy.

Retryable: 408, 409, 429, 5xx (529 overloaded included), timeouts, connection drops, streams
cut or garbled mid-way, and in-stream `error` events of a transient type. Everything else
(400, 401, 403, 404, 413, ...) fails at once with the API's message.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

RETRYABLE_STATUS = frozenset({408, 409, 429})
RETRYABLE_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
)
# Never wait longer than this, whatever retry-after says (a minute is already a long stall).
MAX_RETRY_AFTER = 60.0


def status_is_retryable(
    status: int, error_type: str | None = None, headers: Mapping[str, str] | None = None
) -> bool:
    """True for transient HTTP statuses; a 200 carrying an in-stream error goes by its type.

    The server's `x-should-retry: true|false` wins over the status, as it does in the SDK.
    """
    said = _lowered(headers).get("x-should-retry", "").strip().lower()
    if said in ("true", "false"):
        return said == "true"
    if status < 400:
        return (error_type or "") in RETRYABLE_ERROR_TYPES
    return status in RETRYABLE_STATUS or status >= 500


def _lowered(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {k.lower(): v for k, v in (headers or {}).items()}


class RetryGate:
    """One pause shared by many clients (a batch's workers): a wait that one client is told to
    take (a 429's retry-after, or its backoff) holds every client's next request until it ends.

    `clock` and `sleep` are seams: tests give a fake clock that `sleep` advances.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._open_at = 0.0

    def hold(self, seconds: float) -> None:
        """No client sends before `seconds` from now (a later hold already set stays)."""
        with self._lock:
            self._open_at = max(self._open_at, self._clock() + seconds)

    def pass_through(self) -> None:
        """Return once the gate is open, sleeping while a hold lasts."""
        while True:
            with self._lock:
                left = self._open_at - self._clock()
            if left <= 0:
                return
            self._sleep(left)


def _jitter() -> float:
    return 1.0 - 0.25 * random.random()


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` resends after the first attempt, exponential backoff with jitter.

    A server's retry-after (seconds, or a date) wins over the backoff. `sleep` and `jitter`
    are seams for tests, which use a tiny base delay instead of patching time. With a `gate`,
    every wait is a hold on the gate, and each attempt first passes it (one backoff for many
    clients).
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    jitter: Callable[[], float] = field(default=_jitter)
    gate: RetryGate | None = None

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def delay(self, retries_done: int, retry_after: float | None = None) -> float:
        """Seconds to wait before resend number `retries_done + 1`."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, MAX_RETRY_AFTER)
        backoff = min(self.base_delay * 2.0**retries_done, self.max_delay)
        return max(0.0, backoff * self.jitter())

    def wait(self, retries_done: int, retry_after: float | None = None) -> None:
        if self.gate is None:
            self.sleep(self.delay(retries_done, retry_after))
            return
        self.gate.hold(self.delay(retries_done, retry_after))
        self.gate.pass_through()

    def before_attempt(self) -> None:
        """Wait while the shared gate (if any) is held."""
        if self.gate is not None:
            self.gate.pass_through()


def parse_retry_after(
    headers: Mapping[str, str] | None, now: Callable[[], float] = time.time
) -> float | None:
    """`retry-after-ms`, or `retry-after` in seconds or as an HTTP date (seconds from `now`,
    the wall clock: a seam for tests), from response headers, if given."""
    lowered = _lowered(headers)
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(lowered[name]) * scale
        except (KeyError, ValueError):
            continue
    when = email.utils.parsedate_tz(lowered.get("retry-after", ""))
    return None if when is None else float(email.utils.mktime_tz(when)) - now()
