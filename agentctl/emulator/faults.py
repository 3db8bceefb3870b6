"""Fault injection plans: which request gets a 429, 529, 500, a hang, a drop or a broken body.

Spec grammar (comma-separated items):
  KIND[:ARG]@N[-M]           fault on request number N (1-based, in arrival order), or N..M
  rate=P:KIND[:ARG][|KIND...] every other request, with probability P, one of the kinds
  seed=S                     seed of the rate draw (default 0); the draw for request N
                             depends only on (S, N), so it is independent of thread timing
KIND: 429 (ARG = retry-after seconds, default 1), 529, 500, hang (ARG = seconds, default 30),
drop (ARG = SSE events sent before the drop when streaming, default 3), malformed,
streamerror (ARG = SSE events before an `error` event with overloaded_error, default 3;
a 529 when not streaming), echokey (a 401 whose message and request-id header repeat the
credential the request sent: for testing that agentctl never shows or writes it).
Example: "429:0.05@1,529@3,hang:2@5,rate=0.3:500|drop,seed=7".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agentctl.errors import UsageError

KINDS = ("429", "529", "500", "hang", "drop", "malformed", "streamerror", "echokey")
DEFAULT_ARGS = {"429": 1.0, "hang": 30.0, "drop": 3.0, "streamerror": 3.0}


@dataclass(frozen=True)
class Fault:
    """One injected failure; `arg` is the kind's parameter (see the module docstring)."""

    kind: str
    arg: float = 0.0


@dataclass(frozen=True)
class FaultPlan:
    """Faults by request number, plus an optional seeded random rate."""

    numbered: dict[int, Fault] = field(default_factory=dict)
    rate: float = 0.0
    rate_kinds: tuple[Fault, ...] = ()
    seed: int = 0

    def fault_for(self, number: int) -> Fault | None:
        """The fault for the request with this 1-based number, if any."""
        if number in self.numbered:
            return self.numbered[number]
        if not self.rate_kinds:
            return None
        draw = random.Random(f"{self.seed}:{number}")
        if draw.random() >= self.rate:
            return None
        return self.rate_kinds[draw.randrange(len(self.rate_kinds))]


def parse_faults(spec: str) -> FaultPlan:
    """Parse a fault spec; UsageError names the item that is wrong."""
    numbered: dict[int, Fault] = {}
    rate, seed = 0.0, 0
    kinds: tuple[Fault, ...] = ()
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        if item.startswith("seed="):
            seed = _number(item, item[5:], int)
        elif item.startswith("rate="):
            rate, kinds = _parse_rate(item)
        else:
            numbered.update(_parse_numbered(item))
    return FaultPlan(numbered, rate, kinds, seed)


def _fail(item: str, why: str) -> UsageError:
    return UsageError(f"faults spec item '{item}': {why} (see `agentctl emulator serve --help`)")


def _number(item: str, text: str, kind: type[int] | type[float]) -> int:
    try:
        value = kind(text)
    except ValueError:
        raise _fail(item, f"'{text}' is not a number") from None
    if value < 0:
        raise _fail(item, "must not be negative")
    return int(value) if kind is int else value  # type: ignore[return-value]


def _parse_fault(item: str, text: str) -> Fault:
    kind, _, arg = text.partition(":")
    if kind not in KINDS:
        raise _fail(item, f"unknown kind '{kind}' (one of {', '.join(KINDS)})")
    if not arg:
        return Fault(kind, DEFAULT_ARGS.get(kind, 0.0))
    return Fault(kind, float(_number(item, arg, float)))


def _parse_numbered(item: str) -> dict[int, Fault]:
    text, at, where = item.partition("@")
    if not at:
        raise _fail(item, "expected KIND@N, rate=P:KINDS or seed=S")
    first, _, last = where.partition("-")
    start = _number(item, first, int)
    end = _number(item, last, int) if last else start
    if start < 1 or end < start:
        raise _fail(item, "request numbers start at 1 and ranges go up")
    fault = _parse_fault(item, text)
    return {n: fault for n in range(start, end + 1)}


def _parse_rate(item: str) -> tuple[float, tuple[Fault, ...]]:
    value, colon, kinds = item[5:].partition(":")
    if not colon or not kinds:
        raise _fail(item, "expected rate=P:KIND|KIND")
    rate = float(_number(item, value, float))
    if rate > 1:
        raise _fail(item, "the rate is a probability between 0 and 1")
    return rate, tuple(_parse_fault(item, k) for k in kinds.split("|"))
