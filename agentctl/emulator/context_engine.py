"""The seam between the emulator and the shared context engine (clearing, cache, token counts)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agentctl.context.cache import (
    Kept,
    MarkerCount,
    Prefix,
    PromptCache,
    shared_messages,
    snapshot,
    validate_cache_control,
)
from agentctl.context.compaction import compact
from agentctl.context.engine import validate_edits
from agentctl.context.incremental import Editor
from agentctl.context.tokens import estimate_block_tokens
from agentctl.context.validate import compact_strategy, validate_compaction_blocks
from agentctl.emulator.conversations import Recent, conversation_key

if TYPE_CHECKING:
    from agentctl.context.cache import CacheUsage
    from agentctl.context.compaction import Compaction
    from agentctl.context.server_model import ServerModel

Json = dict[str, Any]


@dataclass(frozen=True)
class Edited:
    """A request after server-side context editing, as the model will see it."""

    request: Json
    applied_edits: list[Json] | None  # None when the request asked for no edits
    original_input_tokens: int
    input_tokens: int


class ContextEngine(Protocol):
    """What the emulator needs from a context engine; one instance per emulator lifetime."""

    def validate(self, request: Json) -> str | None:
        """The API's 400 message for bad `context_management` or cache_control, or None."""
        ...

    def edit(self, request: Json) -> Edited:
        """Apply the request's context edits under the engine's server model."""
        ...

    def compact(self, edited_request: Json) -> Compaction | None:
        """The compaction the edited request triggers (compact_20260112), or None."""
        ...

    def account(self, edited_request: Json, model: str) -> CacheUsage:
        """Cache reads/writes for the edited prompt; updates the cache state."""
        ...

    def peek(self, request: Json, model: str) -> CacheUsage:
        """What `account` would report, without changing the cache state."""
        ...

    def count_blocks(self, blocks: list[Json]) -> int:
        """Estimated tokens of generated content blocks (output_tokens)."""
        ...


class _Conversation:
    """One conversation's incremental state: its editor and its cache positions."""

    def __init__(self, server: ServerModel) -> None:
        self.editor = Editor(server)
        self.prefix = Prefix()
        self.markers = MarkerCount()
        # the messages of the last request whose compaction blocks passed, and whether it had
        # the compact strategy (their check depends on it)
        self.blocks_checked: tuple[bool, Kept] = (False, [])
        self.lock = threading.Lock()


class SharedEngine:
    """The project's one implementation of clearing and caching (`agentctl.context`).

    Requests are told apart by conversation (the model and the first two messages, cache
    markers aside: a thread's continuations and a client resending its whole history alike),
    and each conversation's last request is kept (`context.incremental.Editor`,
    `context.cache.Prefix`) for at most `CONVERSATIONS` conversations."""

    def __init__(self, clock: Callable[[], float], server: ServerModel) -> None:
        self._cache = PromptCache(clock)  # lives as long as the emulator, across requests
        self.server = server
        self._conversations: Recent[str, _Conversation] = Recent()
        # the token counts of the latest edited requests, by identity (each entry holds its
        # request, so an id is not reused while it is here)
        self._edited: Recent[int, tuple[Json, int]] = Recent()

    def _conversation(self, request: Json) -> _Conversation:
        key = conversation_key(request)
        return self._conversations.setdefault(key, lambda: _Conversation(self.server))

    def validate(self, request: Json) -> str | None:
        problem = validate_edits(request)
        if problem:
            return problem
        conversation = self._conversation(request)
        with conversation.lock:
            messages = request.get("messages")
            messages = messages if isinstance(messages, list) else []
            strategy = compact_strategy(request)
            checked, before = conversation.blocks_checked
            start = shared_messages(before, messages) if checked == strategy else 0
            problem = validate_compaction_blocks(request, start)
            if problem:
                return problem
            conversation.blocks_checked = (strategy, snapshot(messages))
            return validate_cache_control(request, conversation.markers)

    def edit(self, request: Json) -> Edited:
        conversation = self._conversation(request)
        with conversation.lock:
            outcome = conversation.editor.edit(request)
        self._edited.put(id(outcome.request), (outcome.request, outcome.input_tokens))
        management = request.get("context_management")
        applied = outcome.applied_edits if management is not None else None
        return Edited(outcome.request, applied, outcome.original_input_tokens, outcome.input_tokens)

    def compact(self, edited_request: Json) -> Compaction | None:
        held = self._edited.get(id(edited_request))
        tokens = held[1] if held is not None and held[0] is edited_request else None
        return compact(edited_request, tokens)

    def account(self, edited_request: Json, model: str) -> CacheUsage:
        conversation = self._conversation(edited_request)
        with conversation.lock:
            return self._cache.account(edited_request, model, conversation.prefix)

    def peek(self, request: Json, model: str) -> CacheUsage:
        return self._cache.peek(request, model)

    def count_blocks(self, blocks: list[Json]) -> int:
        return sum(estimate_block_tokens(block) for block in blocks)


def default_engine(clock: Callable[[], float], server: ServerModel) -> ContextEngine:
    """The shared engine, with a fresh prompt cache driven by `clock`, playing the server
    model `server` (docs/context.md, "Server rules")."""
    return SharedEngine(clock, server)
