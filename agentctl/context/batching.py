"""The cleared boundary a conversation ends with: one walk over its requests, two uses.

A tool loop's history is the sequence of its requests: each one ended with a user message.
Walking that history once, request by request, tells how many of the oldest clearable tool
uses stand cleared at the end if the boundary only ever moves forward, and only when the
prompt as already edited passes a high-water mark. Two callers share the walk:
- the server model `trigger_basis = "edited"` (engine): high = the trigger, low = 0 (clear
  everything but `keep`), moves smaller than `clear_at_least` skipped;
- batched clearing (`strategy = "batched"`, `context.edits`): high = the trigger, low =
  `low_water`; the client then sends the edit that holds the boundary there.
Both are stateless: the same history gives the same boundary, so resume and replay agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.pairs import TOOL_USE_TYPES, Pair
from agentctl.context.tokens import estimate_message_tokens, estimate_request_tokens


@dataclass(frozen=True)
class Marks:
    """When the boundary moves and how far."""

    high: int  # move at a request whose measure exceeds this
    low: int  # ... far enough that the prompt drops to at most this (0: as far as keep allows)
    keep: int  # the newest clearable tool uses always left intact
    at_least: int = 0  # a move that would free fewer tokens does not happen
    count_uses: bool = False  # measure tool uses in the history instead of prompt tokens


def boundary(
    request: Mapping[str, Any], pairs: Sequence[Pair], freed: Sequence[int], marks: Marks
) -> int:
    """How many of the oldest `pairs` (clearable, in order; `freed[i]` is what clearing pair
    i frees) stand cleared after the last request of `request["messages"]`."""
    messages: list[dict[str, Any]] = list(request.get("messages") or [])
    size = estimate_request_tokens({**request, "messages": []})
    uses = cleared = gone = ready = 0
    for index, message in enumerate(messages):
        size += estimate_message_tokens(message)
        uses += _tool_uses(message)
        while ready < len(pairs) and pairs[ready].ready_at <= index:
            ready += 1
        if message.get("role") != "user" and index < len(messages) - 1:
            continue
        measure = uses if marks.count_uses else size - gone
        if measure <= marks.high:
            continue
        target, gain = _move(freed, cleared, ready - marks.keep, size - gone - marks.low)
        if target > cleared and gain >= marks.at_least:
            cleared, gone = target, gone + gain
    return cleared


def _move(freed: Sequence[int], start: int, limit: int, excess: int) -> tuple[int, int]:
    """From `start`, the fewest further pairs (up to `limit`) that free at least `excess`."""
    end, gain = start, 0
    while end < limit and gain < excess:
        gain += freed[end]
        end += 1
    return end, gain


def _tool_uses(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return 0
    return sum(isinstance(b, Mapping) and b.get("type") in TOOL_USE_TYPES for b in content)
