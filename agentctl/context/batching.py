"""The cleared boundary a conversation ends with: one walk over its requests, two uses.

A tool loop's history is the sequence of its requests: each one ended with a user message.
Walking that history once, request by request, tells how many of the oldest clearable tool
uses stand cleared at the end if the boundary only ever moves forward, and only when the
prompt as already edited passes a high-water mark. Two callers share the walk:
- the server model `trigger_basis = "edited"` (engine): high = the trigger, low = 0 (clear
  everything but `keep`), moves smaller than `clear_at_least` skipped;
- batched clearing (`strategy = "batched"`, `batched_edit`): high = the trigger, low =
  `low_water`; the client then sends the edit that holds the boundary there.
Both are stateless: the same history gives the same boundary, so resume and replay agree.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentctl.context.memo import remembered
from agentctl.context.pairs import TOOL_USE_TYPES, Pair, candidates, freed_tokens, tool_pairs
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.context.tokens import estimate_message_tokens, estimate_request_tokens


@dataclass(frozen=True)
class Marks:
    """When the boundary moves and how far."""

    high: int  # move at a request whose measure exceeds this
    low: int  # ... far enough that the prompt drops to at most this (0: as far as keep allows)
    keep: int  # the newest clearable tool uses always left intact
    at_least: int = 0  # a move that would free fewer tokens does not happen
    count_uses: bool = False  # measure tool uses in the history instead of prompt tokens
    # measure what the model reads: from the last compaction block on (batched steering);
    # False: the whole history, as the server measures its own trigger
    view: bool = False


def batched_edit(
    edit: Mapping[str, Any],
    marks: Marks,
    request: Mapping[str, Any],
    server: ServerModel = DEFAULT_SERVER_MODEL,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
) -> dict[str, Any]:
    """The clear_tool_uses edit that makes the server clear exactly where batched clearing
    puts the boundary; `edit`: the profile's edit as written, `marks`: its trigger (the
    high-water mark), low_water, keep and clear_at_least.

    The boundary (how many of the oldest clearable tool uses stand cleared) moves only when
    the prompt the model reads, as edited so far, exceeds the trigger, in one step, far enough
    to bring it to low_water (never into the last `keep`); the walk over the history is
    `boundary` (`measured`: the real prompt sizes of earlier responses, by message count,
    which it prefers to its estimate; `unedited`: figures before clearing). Before the first
    clearing the request carries the profile's edit (the server cannot fire before the client
    would). After it: trigger `tool_uses` > B and keep = clearable - B, so the server clears
    the same B oldest uses on every request until the next move, whichever way it measures a
    token trigger, and every request reads the earlier prompt from the cache.

    The server counts and clears on the whole history, compaction blocks or not, while the
    model reads only from the last block on: the walk measures the model's view, and once a
    history holds a compaction block a request before the first clearing carries a
    `tool_uses` trigger at the number of tool uses in it (never exceeded), since the whole
    history would pass a token trigger the model's view is far from.
    """
    out = dict(edit)
    messages = list(request.get("messages") or [])
    pairs = tool_pairs(messages)
    clearable = candidates(pairs, out, server)
    freed = [freed_tokens(p, out, server.placeholder) for p in clearable]
    cleared = boundary(request, clearable, freed, marks, measured, unedited)
    if cleared == 0 and not any(has_compaction(m) for m in messages):
        return out
    out.pop("clear_at_least", None)
    out["trigger"] = {"type": "tool_uses", "value": cleared or len(pairs)}
    if cleared:
        out["keep"] = {"type": "tool_uses", "value": len(clearable) - cleared}
    return out


def boundary(
    request: Mapping[str, Any],
    pairs: Sequence[Pair],
    freed: Sequence[int],
    marks: Marks,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
) -> int:
    """How many of the oldest `pairs` (clearable, in order; `freed[i]` is what clearing pair
    i frees) stand cleared after the last request of `request["messages"]`.

    `measured`: prompt sizes the server reported, by the number of messages of the request
    they answer (input + cache reads + cache writes: the prompt as the model read it). At a
    later request the measure is the latest such figure plus the estimate of what was added
    (and cleared) since, so an estimate never decides alone where a real figure exists.
    `unedited`: the figures are of the prompt before any tool use was cleared (a reported
    size plus the tokens its response says were cleared: what a replay under other settings
    can use); the walk then subtracts its own clearing up to that request as well.
    """
    messages: list[dict[str, Any]] = list(request.get("messages") or [])
    base = estimate_request_tokens({**request, "messages": []})
    walk = _Walk(base, measured)
    shown_all = _Shown(pairs, freed)
    for index, message in enumerate(messages):
        tokens, uses, compaction, user = remembered("walk", message, partial(_step, message))
        if marks.view and compaction:
            walk.restart(index)  # the model reads from here on; earlier clearings free nothing
        walk.size += tokens
        walk.uses += uses
        while walk.ready < len(pairs) and pairs[walk.ready].ready_at <= index:
            walk.ready += 1
        if not user and index < len(messages) - 1:
            walk.mark(index + 1)
            continue
        size = walk.measure(unedited)
        if (walk.uses if marks.count_uses else size) > marks.high:
            excess = size - marks.low
            shown = shown_all.view(walk.start)
            target, gain = _move(shown, walk.cleared, walk.ready - marks.keep, excess)
            if target > walk.cleared and gain >= marks.at_least:
                walk.cleared, walk.gone = target, walk.gone + gain
        walk.mark(index + 1)
    return walk.cleared


class _Walk:
    """The running state of `boundary`: sizes in the model's view, by message count."""

    def __init__(self, base: int, measured: Mapping[int, int] | None) -> None:
        self.base = base
        self.size = base
        self.start = 0  # first message of the view
        self.uses = self.cleared = self.gone = self.ready = 0
        self.marks: dict[int, tuple[int, int]] = {}  # messages -> (size, gone) after them
        self.measured = measured
        self.latest: int | None = None  # the last marked count in the view with a figure

    def restart(self, index: int) -> None:
        self.start, self.size, self.gone = index, self.base, 0
        self.latest = None  # every count marked so far is at most `index`

    def mark(self, count: int) -> None:
        self.marks[count] = (self.size, self.gone)
        if self.measured is not None and count in self.measured and count > self.start:
            self.latest = count

    def measure(self, unedited: bool) -> int:
        """The prompt as edited so far: the estimate, or the latest real figure in the view
        plus the estimate of what changed since."""
        if self.latest is None or self.measured is None:
            return self.size - self.gone
        size, gone = self.marks[self.latest]
        if unedited:
            gone = 0
        return self.measured[self.latest] + (self.size - size) - (self.gone - gone)


class _Shown:
    """What clearing pair i frees in the model's view (nothing for a pair that became ready
    before the view starts), as running sums: a move is a search, not a walk over pairs."""

    def __init__(self, pairs: Sequence[Pair], freed: Sequence[int]) -> None:
        self.pairs, self.freed = pairs, freed
        self.start = -1
        self.sums: list[int] = []

    def view(self, start: int) -> _Shown:
        if start != self.start:
            self.start = start
            shown = (
                f if p.ready_at >= start else 0 for p, f in zip(self.pairs, self.freed, strict=True)
            )
            self.sums = [0, *itertools.accumulate(shown)]
        return self


def _move(freed: _Shown, start: int, limit: int, excess: int) -> tuple[int, int]:
    """From `start`, the fewest further pairs (up to `limit`) that free at least `excess`."""
    if start >= limit or excess <= 0:
        return start, 0
    sums = freed.sums
    end = min(bisect.bisect_left(sums, sums[start] + excess, start + 1, limit + 1), limit)
    return end, sums[end] - sums[start]


def _step(message: Mapping[str, Any]) -> tuple[int, int, bool, bool]:
    """What one message adds to the walk: tokens, tool uses, a compaction block, a user turn."""
    user = message.get("role") == "user"
    return estimate_message_tokens(message), _tool_uses(message), has_compaction(message), user


def has_compaction(message: Mapping[str, Any]) -> bool:
    """Whether the message holds a `compaction` block (the model reads from there on)."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "compaction" for b in content
    )


def _tool_uses(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return 0
    return sum(isinstance(b, Mapping) and b.get("type") in TOOL_USE_TYPES for b in content)
