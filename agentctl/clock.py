"""The one clock: every part of agentctl that asks what day or time it is asks here.

Two ways to move it, both meant for tests and for checking date-dependent behaviour:
- `frozen(moment)` (a context manager) pins the clock inside one process;
- the environment variable `AGENTCTL_TODAY=YYYY-MM-DD` moves the date (the time of day keeps
  running) for a whole process tree, subprocesses included. It is read by this module only,
  and CI runs the fast suite under moved dates with it (see the README's development section).

Durations (timeouts, backoff, progress) use `time.monotonic` where they are measured, not this.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterator
from contextlib import contextmanager

from agentctl.errors import UsageError

TODAY_ENV = "AGENTCTL_TODAY"

_pinned: _dt.datetime | None = None


def now() -> _dt.datetime:
    """The current UTC time (timezone-aware), pinned or moved as described above."""
    if _pinned is not None:
        return _pinned
    real = _dt.datetime.now(_dt.UTC)
    moved = moved_date()
    if moved is None:
        return real
    return real + (moved - real.date())


def today() -> _dt.date:
    """Today's date in UTC."""
    return now().date()


def timestamp() -> float:
    """Seconds since the epoch, as time.time() gives them, from the same clock."""
    return now().timestamp()


def moved_date() -> _dt.date | None:
    """The date AGENTCTL_TODAY names, None when unset; a malformed value is an error."""
    text = os.environ.get(TODAY_ENV, "").strip()
    if not text:
        return None
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{TODAY_ENV}={text!r}: not a date (use YYYY-MM-DD)") from None


@contextmanager
def frozen(moment: _dt.datetime | _dt.date) -> Iterator[None]:
    """Pin the clock to `moment` (a date means its midnight UTC) inside the block."""
    global _pinned
    if not isinstance(moment, _dt.datetime):
        moment = _dt.datetime(moment.year, moment.month, moment.day, tzinfo=_dt.UTC)
    elif moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    previous, _pinned = _pinned, moment
    try:
        yield
    finally:
        _pinned = previous
