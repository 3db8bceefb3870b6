"""Server-held conversation state (beta `message-threads-2026-08-12`), as the SDK's runner uses.

`thread: {"type": "create"}` asks the server to hold the conversation under the response's
id; `thread: {"type": "continue", "previous_message_id": ID}` sends only the new turn's
messages, and the server prepends what it holds. The response shape is unchanged. Context
editing and the cache then work on the whole conversation, as without threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from agentctl.emulator.protocol import ApiFailure, invalid

Json = dict[str, Any]
BETA_THREADS = "message-threads-2026-08-12"
HELD_LIMIT = 1000  # conversations held at once; the oldest is forgotten first (ours)


class ThreadStore:
    """Conversations held by response id; thread-safe."""

    def __init__(self, limit: int = HELD_LIMIT) -> None:
        self._held: OrderedDict[str, list[Json]] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def expand(self, body: object, betas: set[str]) -> object:
        """The body with the held history prepended and `thread` removed (others unchanged)."""
        if not isinstance(body, dict) or "thread" not in body:
            return body
        if BETA_THREADS not in betas:
            raise invalid("thread: Extra inputs are not permitted")
        rest = {k: v for k, v in body.items() if k != "thread"}
        thread = body["thread"]
        kind = thread.get("type") if isinstance(thread, dict) else None
        if kind == "create":
            return rest
        if kind != "continue":
            raise invalid(
                f"thread: Input tag '{kind}' found using 'type' does not match any of the "
                "expected tags: 'continue', 'create'"
            )
        held = self._history(thread.get("previous_message_id"))
        new = rest.get("messages")
        return {**rest, "messages": [*held, *(new if isinstance(new, list) else [])]}

    def hold(self, body: object, messages: list[Json], message: Json) -> None:
        """Keep the conversation (request messages + this reply) under the reply's id."""
        if not isinstance(body, dict) or "thread" not in body:
            return
        turn = {"role": "assistant", "content": message["content"]}
        with self._lock:
            self._held[message["id"]] = [*messages, turn]
            while len(self._held) > self._limit:
                self._held.popitem(last=False)

    def _history(self, message_id: object) -> list[Json]:
        with self._lock:
            held = self._held.get(str(message_id))
        if held is None:
            # Text ours: the API's wording for an unknown or expired Thread is not public.
            raise ApiFailure(404, f"thread.previous_message_id: no thread holds {message_id}")
        return held
