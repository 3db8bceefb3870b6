"""Replay memo: figures of history objects computed once per replay, not once per turn.

A replay (`sessions.simulate`) hands the engine the same recorded messages turn after turn,
each request the one before it plus what is new. Inside `replay_memo()` the token estimator,
the cache's prefix keys and the engine's clearing remember what they computed for an object
by its identity, so a turn costs what it adds, not the whole history again.

The contract that makes identity a safe key: inside the scope, nothing measured is mutated
afterwards. The recorded history is never changed by a replay, and the engine edits copy on
write (a cleared block or a message holding one is a new object, itself remembered so that
the next turn's edit of the same block is the same object). Each entry holds its object, so
an id is never reused while the scope lives; the scope is one replay and frees everything
when it ends. Outside the scope nothing is remembered and every function computes afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_ACTIVE: ContextVar[dict[Hashable, tuple[Any, Any]] | None] = ContextVar(
    "agentctl_replay_memo", default=None
)


@contextmanager
def replay_memo() -> Iterator[None]:
    """Remember figures of history objects by identity until the block ends (nested: the
    outer scope's memo goes on)."""
    if _ACTIVE.get() is not None:
        yield
        return
    token = _ACTIVE.set({})
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    """Whether a replay memo is in effect."""
    return _ACTIVE.get() is not None


def remembered(kind: str, obj: Any, compute: Callable[[], T], *extra: Hashable) -> T:
    """`compute()` for `obj` (and `extra`), once per replay scope; always fresh outside one."""
    memo = _ACTIVE.get()
    if memo is None:
        return compute()
    key = (kind, id(obj), *extra)
    hit = memo.get(key)
    if hit is not None and hit[0] is obj:
        value: T = hit[1]
        return value
    value = compute()
    memo[key] = (obj, value)
    return value


def slot(name: str) -> Any:
    """What `keep(name, value)` left in this replay scope (None: nothing, or no scope)."""
    memo = _ACTIVE.get()
    entry = memo.get(("slot", name)) if memo is not None else None
    return None if entry is None else entry[1]


def keep(name: str, value: Any) -> None:
    """Leave `value` for the rest of this replay scope (nothing outside one)."""
    memo = _ACTIVE.get()
    if memo is not None:
        memo[("slot", name)] = (None, value)
