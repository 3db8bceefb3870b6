"""The seam between the emulator and the shared context engine (clearing, cache, token counts)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Json = dict[str, Any]


@dataclass(frozen=True)
class Edited:
    """A request after server-side context editing, as the model will see it."""

    request: Json
    applied_edits: list[Json] | None  # None when the request asked for no edits
    original_input_tokens: int
    input_tokens: int


@dataclass(frozen=True)
class CacheFigures:
    """Prompt-cache accounting of one request, as `usage` reports it."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


class ContextEngine(Protocol):
    """What the emulator needs from a context engine; one instance per emulator lifetime."""

    def validate(self, request: Json) -> str | None:
        """The API's 400 message for a bad `context_management`, or None."""
        ...

    def edit(self, request: Json, placeholder: str) -> Edited:
        """Apply the request's context edits."""
        ...

    def account(self, edited_request: Json, model: str) -> CacheFigures:
        """Cache reads/writes for the edited prompt; updates the cache state."""
        ...

    def count_blocks(self, blocks: list[Json]) -> int:
        """Estimated tokens of generated content blocks (output_tokens)."""
        ...


def _rough_tokens(value: object) -> int:
    return math.ceil(len(json.dumps(value, ensure_ascii=False)) / 4)


class PassThroughEngine:
    """No edits and no cache: a stand-in until the shared engine is importable."""

    def validate(self, request: Json) -> str | None:
        return None

    def edit(self, request: Json, placeholder: str) -> Edited:
        tokens = _rough_tokens([request.get("system"), request.get("tools"), request["messages"]])
        applied: list[Json] | None = [] if request.get("context_management") else None
        return Edited(request, applied, tokens, tokens)

    def account(self, edited_request: Json, model: str) -> CacheFigures:
        tokens = _rough_tokens(
            [edited_request.get("system"), edited_request.get("tools"), edited_request["messages"]]
        )
        return CacheFigures(tokens, 0, 0, 0, 0)

    def count_blocks(self, blocks: list[Json]) -> int:
        return max(1, _rough_tokens(blocks))


def default_engine(clock: Callable[[], float]) -> ContextEngine:
    """The shared engine from `agentctl.context` when present, else the pass-through stand-in."""
    return PassThroughEngine()
