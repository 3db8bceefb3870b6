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
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from agentctl.context.cache import Kept, shared_messages, snapshot, strip_cache_control

Json = dict[str, Any]
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

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


class Recent(Generic[K, V]):
    """The values of the `CONVERSATIONS` most recently used keys (the least recently used go
    first when another comes); thread-safe."""

    def __init__(self) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def values(self) -> list[V]:
        with self._lock:
            return list(self._items.values())

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._fit(key)

    def setdefault(self, key: K, make: Callable[[], V]) -> V:
        """The value of `key`, made (`make()`) and kept when there is none."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                found = self._items[key] = make()
            self._fit(key)
            return found

    def _fit(self, key: K) -> None:
        self._items.move_to_end(key)
        while len(self._items) > CONVERSATIONS:
            self._items.popitem(last=False)


class _Keys:
    """`conversation_key` by the identity of a request's model and first two messages: the
    requests of one thread open with the same held objects (the most recent openings)."""

    def __init__(self) -> None:
        # (model, ids of the messages) -> (the messages, kept so the ids stay theirs; key)
        self._keys: Recent[tuple[object, ...], tuple[list[Json], str]] = Recent()

    def key(self, model: str, head: list[Json]) -> str:
        ids = (model, *map(id, head))
        found = self._keys.get(ids)
        if found is not None:
            return found[1]
        key = _key(model, head)
        self._keys.put(ids, (head, key))
        return key


_KEYS = _Keys()


class Held(Generic[T]):
    """Per conversation (and `extra` key), the messages of its last request and a state
    derived from them; thread-safe, at most `CONVERSATIONS` conversations."""

    def __init__(self) -> None:
        self._held: Recent[tuple[str, Any], tuple[Kept, T]] = Recent()

    def recall(self, key: tuple[str, Any], messages: list[Json]) -> tuple[int, T | None]:
        """How many leading messages `messages` shares (by value) with those kept under `key`,
        and the state kept with them (0 and None when nothing is kept)."""
        found = self._held.get(key)
        if found is None:
            return 0, None
        return shared_messages(found[0], messages), found[1]

    def keep(self, key: tuple[str, Any], messages: Sequence[Json], state: T) -> None:
        """Keep `state`, worked out from `messages` (a request's: it is compared with the
        next request's as it is now, see `context.cache.snapshot`)."""
        self._held.put(key, (snapshot(messages), state))
