"""What the emulator keeps per conversation between requests: `conversation_key` tells
conversations apart, `Held` keeps, for the most recent `CONVERSATIONS` of them, the messages of
the last request and what was worked out from them, so that a request extending it costs what
it adds (the context engine's editor, the request checks, the script's place)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Generic, TypeVar

from agentctl.context.cache import shared_messages, strip_cache_control

Json = dict[str, Any]
T = TypeVar("T")

# Conversations whose state is kept (the least recently used go first).
CONVERSATIONS = 64


def conversation_key(request: Json) -> str:
    """The conversation a request belongs to: its model and first two messages, cache markers
    aside (a thread's continuations and a client resending its whole history alike)."""
    messages = request.get("messages")
    head = messages[:2] if isinstance(messages, list) else None
    text = json.dumps([request.get("model"), strip_cache_control(head)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class Held(Generic[T]):
    """Per conversation (and `extra` key), the messages of its last request and a state
    derived from them; thread-safe, at most `CONVERSATIONS` conversations."""

    def __init__(self) -> None:
        self._held: OrderedDict[tuple[str, Any], tuple[list[Json], T]] = OrderedDict()
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

    def keep(self, key: tuple[str, Any], messages: list[Json], state: T) -> None:
        """Keep `state`, worked out from `messages` (a list the caller no longer changes)."""
        with self._lock:
            self._held[key] = (messages, state)
            self._held.move_to_end(key)
            while len(self._held) > CONVERSATIONS:
                self._held.popitem(last=False)
