"""What the emulator keeps per conversation between requests: `conversation_key` tells
conversations apart, `Held` keeps, for the most recent `CONVERSATIONS` of them, the messages of
the last request and what was worked out from them, so that a request extending it costs what
it adds (the context engine's editor, the request checks, the script's place). A thread's
requests carry the held messages themselves (`context.cache.Continuation`), so comparing one
with what is kept looks only at what it adds, and its key is taken once per opening."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from agentctl.context.cache import shared_messages, snapshot, strip_cache_control

Json = dict[str, Any]
T = TypeVar("T")

# Conversations whose state is kept (the least recently used go first).
CONVERSATIONS = 64


def conversation_key(request: Json) -> str:
    """The conversation a request belongs to: its model and first two messages, cache markers
    aside (a thread's continuations and a client resending its whole history alike)."""
    messages = request.get("messages")
    head = messages[:2] if isinstance(messages, list) else None
    model = request.get("model")
    if not isinstance(model, str) or not head:
        return _key(model, head)
    return _KEYS.key(model, head)


def _key(model: Any, head: Any) -> str:
    text = json.dumps([model, strip_cache_control(head)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class _Keys:
    """`conversation_key` by the identity of a request's model and first two messages: the
    requests of one thread open with the same held objects (the most recent openings)."""

    def __init__(self) -> None:
        # (model, ids of the messages) -> (the messages, kept so the ids stay theirs; key)
        self._keys: OrderedDict[tuple[object, ...], tuple[list[Json], str]] = OrderedDict()
        self._lock = threading.Lock()

    def key(self, model: str, head: list[Json]) -> str:
        ids = (model, *map(id, head))
        with self._lock:
            found = self._keys.get(ids)
            if found is not None:
                self._keys.move_to_end(ids)
                return found[1]
        key = _key(model, head)
        with self._lock:
            self._keys[ids] = (head, key)
            while len(self._keys) > CONVERSATIONS:
                self._keys.popitem(last=False)
        return key


_KEYS = _Keys()


class Held(Generic[T]):
    """Per conversation (and `extra` key), the messages of its last request and a state
    derived from them; thread-safe, at most `CONVERSATIONS` conversations."""

    def __init__(self) -> None:
        self._held: OrderedDict[tuple[str, Any], tuple[Sequence[Json], T]] = OrderedDict()
        self._lock = threading.Lock()

    def recall(self, key: tuple[str, Any], messages: list[Json]) -> tuple[int, T | None]:
        """How many leading messages `messages` shares (by value) with those kept under `key`,
        and the state kept with them (0 and None when nothing is kept)."""
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
        if found is None:
            return 0, None
        return shared_messages(found[0], messages), found[1]

    def keep(self, key: tuple[str, Any], messages: Sequence[Json], state: T) -> None:
        """Keep `state`, worked out from `messages` (a request's: it is compared with the
        next request's as it is now, see `context.cache.snapshot`)."""
        kept = snapshot(messages)
        with self._lock:
            self._held[key] = (kept, state)
            self._held.move_to_end(key)
            while len(self._held) > CONVERSATIONS:
                self._held.popitem(last=False)
