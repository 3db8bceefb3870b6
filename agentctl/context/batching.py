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

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.pairs import TOOL_USE_TYPES, Pair, candidates, freed_tokens
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
    steering: Steering | None = None,
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

    `steering`: the walk kept from the previous request of the same live run, so this one
    walks only what was added since (None: a walk from the first message; same answer).
    """
    out = dict(edit)
    steering = steering or Steering()
    cleared = steering.walk(out, marks, request, server, measured, unedited)
    if cleared == 0 and not steering.compacted:
        return out
    out.pop("clear_at_least", None)
    # at least 1: the API's minimum (a history that starts at a compaction may hold no use)
    out["trigger"] = {"type": "tool_uses", "value": max(cleared or len(steering.pairs), 1)}
    if cleared:
        out["keep"] = {"type": "tool_uses", "value": len(steering.clearable) - cleared}
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
    walk = _Walk(estimate_request_tokens({**request, "messages": []}))
    for index in range(len(messages)):
        walk.step(messages, index, pairs, freed, marks, measured, unedited)
    return walk.cleared


class _Walk:
    """The running state of `boundary`: sizes in the model's view, by message count."""

    def __init__(self, base: int) -> None:
        self.base = base
        self.size = base
        self.start = 0  # first message of the view
        self.uses = self.cleared = self.gone = self.ready = 0
        self.before = 0  # the boundary before its last move
        self.marks: dict[int, tuple[int, int]] = {}  # messages -> (size, gone) after them
        # the latest reported size in the view (a message count), and counts looked up below
        self.latest: int | None = None
        self.scanned = 1
        # (view start, cleared, end, gain): the last move from `cleared` walked every pair
        # up to `end` and they freed `gain`, too little: the next one goes on from there
        self.tried = (-1, -1, 0, 0)

    def copy(self) -> _Walk:
        """The same state; `marks` is shared (a step only ever (re)writes its own count)."""
        return copy.copy(self)

    def step(
        self,
        messages: Sequence[Mapping[str, Any]],
        index: int,
        pairs: Sequence[Pair],
        freed: Sequence[int],
        marks: Marks,
        measured: Mapping[int, int] | None,
        unedited: bool,
    ) -> None:
        """Take message `index` into the view, and move the boundary if it ends a request."""
        message = messages[index]
        if marks.view and has_compaction(message):
            self.restart(index)  # the model reads from here on; earlier clearings free nothing
        self.add(message)
        while self.ready < len(pairs) and pairs[self.ready].ready_at <= index:
            self.ready += 1
        if message.get("role") != "user" and index < len(messages) - 1:
            self.mark(index + 1)
            return
        size = self.measure(index + 1, measured, unedited)
        if (self.uses if marks.count_uses else size) > marks.high:
            excess = size - marks.low
            limit = self.ready - marks.keep
            tried = self.tried[2:] if self.tried[:2] == (self.start, self.cleared) else None
            target, gain = _move(pairs, freed, self.start, self.cleared, limit, excess, tried)
            if target >= limit and gain < excess:
                self.tried = (self.start, self.cleared, target, gain)
            if target > self.cleared and gain >= marks.at_least:
                self.before, self.cleared, self.gone = self.cleared, target, self.gone + gain
        self.mark(index + 1)

    def restart(self, index: int) -> None:
        self.start, self.size, self.gone = index, self.base, 0
        self.latest, self.scanned = None, index + 1

    def add(self, message: Mapping[str, Any]) -> None:
        self.size += estimate_message_tokens(message)
        self.uses += _tool_uses(message)

    def mark(self, count: int) -> None:
        self.marks[count] = (self.size, self.gone)

    def measure(self, count: int, measured: Mapping[int, int] | None, unedited: bool) -> int:
        """The prompt as edited so far: the estimate, or the latest real figure in the view
        (a count after the view's start and before `count`: every one of those is marked)
        plus the estimate of what changed since."""
        if measured:
            for n in range(max(self.scanned, self.start + 1), count):
                if n in measured:
                    self.latest = n
            self.scanned = max(self.scanned, count)
        if self.latest is None or not measured:
            return self.size - self.gone
        size, gone = self.marks[self.latest]
        if unedited:
            gone = 0
        return measured[self.latest] + (self.size - size) - (self.gone - gone)


class Steering:
    """Batched clearing's walk, kept between the requests of one live run.

    A run's requests only ever append to its history, so each request walks only the
    messages added since the previous one: the tool pairs, which of them clearing may take
    and what each frees are kept, and the walk's state is kept as of the last message before
    any tool use still waiting for its result (a result arriving later changes the walk from
    that use on). Any other history (a different first or last kept message, other settings)
    starts the walk again from the first message, so the answer is always the one a walk
    from scratch gives (tests/context/test_batching.py compares the two).
    """

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, key: tuple[Any, ...] | None) -> None:
        self._key = key
        self._first: Mapping[str, Any] | None = None
        self._last: Mapping[str, Any] | None = None  # the last message taken into `pairs`
        self._scanned = 0  # messages taken into `pairs`
        self.pairs: list[Pair] = []
        self._by_id: dict[str, Pair] = {}
        self._open: dict[int, Pair] = {}  # unanswered pairs, by id()
        self._settled: list[Pair] = []  # clearable pairs before the first open one
        self._settled_freed: list[int] = []
        self._judged = 0  # pairs[:n] judged for `_settled`
        self.clearable: list[Pair] = []
        self._walk: _Walk | None = None  # the walk as of message `_walked`
        self._walked = 0
        self.compacted = False  # the history holds a compaction block
        self.stepped = 0
        self.cleared = self.before = 0  # the boundary after the last request walked, and
        # where it stood before its last move

    def walk(
        self,
        edit: Mapping[str, Any],
        marks: Marks,
        request: Mapping[str, Any],
        server: ServerModel,
        measured: Mapping[int, int] | None,
        unedited: bool,
    ) -> int:
        """The boundary after the last message of `request` (`boundary`'s answer)."""
        messages: Sequence[dict[str, Any]] = request.get("messages") or []
        base = estimate_request_tokens({**request, "messages": []})
        key = (json.dumps(edit, sort_keys=True, default=str), marks, server, unedited, base)
        if not self._continues(key, messages):
            self._reset(key)
        self._take(messages)
        freed = self._judge(edit, server)
        walk = (self._walk or _Walk(base)).copy()
        open_at = min((p.ready_at for p in self._open.values()), default=len(messages))
        self.stepped = len(messages) - self._walked  # messages this request walked
        for index in range(self._walked, len(messages)):
            walk.step(messages, index, self.clearable, freed, marks, measured, unedited)
            if index < open_at:
                self._walk, self._walked = walk.copy(), index + 1
        self.cleared, self.before = walk.cleared, walk.before
        return walk.cleared

    def held(self) -> list[tuple[int, str]]:
        """Where the cleared part of the last request walked ends, and where it ended before
        the boundary's last move: the message index and tool_use_id of the newest cleared
        result at each (none before the first clearing). The prompt up to the boundary stays
        the same until the next move, so with a cache breakpoint there the request that
        moves it reads that prefix from the cache (a read walks back only 20 blocks from a
        breakpoint, so the old boundary keeps its own) and writes the new boundary's entry
        (`agent.request.place_breakpoints`)."""
        out = []
        for count in (self.before, self.cleared):
            pair = self.clearable[count - 1] if 0 < count <= len(self.clearable) else None
            if pair is not None and pair.result is not None:
                out.append((pair.ready_at, str(pair.result.get("tool_use_id", ""))))
        return out

    def _continues(self, key: tuple[Any, ...], messages: Sequence[Mapping[str, Any]]) -> bool:
        """Whether `messages` extend the history walked before, under the same settings."""
        if key != self._key or len(messages) < self._scanned:
            return False
        if self._scanned == 0:
            return True
        return messages[0] is self._first and messages[self._scanned - 1] is self._last

    def _take(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Pair the messages not yet taken (as `pairs.tool_pairs` pairs them)."""
        for index in range(self._scanned, len(messages)):
            message = messages[index]
            self.compacted = self.compacted or has_compaction(message)
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict):
                    self._pair(message, block, index)
        self._scanned = len(messages)
        if messages:
            self._first, self._last = messages[0], messages[-1]

    def _pair(self, message: Mapping[str, Any], block: dict[str, Any], index: int) -> None:
        kind = str(block.get("type"))
        if kind in TOOL_USE_TYPES and message.get("role") == "assistant":
            pair = Pair(block, ready_at=index)
            self._by_id[str(block.get("id"))] = pair
            self._open[id(pair)] = pair
            self.pairs.append(pair)
        elif (kind == "tool_result" or kind.endswith("_tool_result")) and "tool_use_id" in block:
            found = self._by_id.get(str(block["tool_use_id"]))
            if found is not None and found.result is None:
                found.result, found.ready_at = block, index
                self._open.pop(id(found), None)

    def _judge(self, edit: Mapping[str, Any], server: ServerModel) -> list[int]:
        """`clearable` (as `candidates` picks them) and what each frees; the pairs before
        the first unanswered one are judged once."""
        while self._judged < len(self.pairs) and self.pairs[self._judged].result is not None:
            pair = self.pairs[self._judged]
            if candidates([pair], edit, server):
                self._settled.append(pair)
                self._settled_freed.append(freed_tokens(pair, edit, server.placeholder))
            self._judged += 1
        tail = candidates(self.pairs[self._judged :], edit, server)
        if not tail:  # no copies of the settled lists (the walk only reads them)
            self.clearable = self._settled
            return self._settled_freed
        self.clearable = [*self._settled, *tail]
        return [*self._settled_freed, *(freed_tokens(p, edit, server.placeholder) for p in tail)]


def _move(
    pairs: Sequence[Pair],
    freed: Sequence[int],
    view: int,
    start: int,
    limit: int,
    excess: int,
    tried: tuple[int, int] | None = None,
) -> tuple[int, int]:
    """From `start`, the fewest further pairs (up to `limit`) that free at least `excess`;
    a pair whose result came before the view's first message (`view`) frees nothing.
    `tried`: (end, gain) of an earlier move from the same start that took every pair up to
    `end` and fell short (the pairs there are settled): a move that needs more goes on from
    there instead of walking them again (the same answer)."""
    end, gain = start, 0
    if tried is not None and start <= tried[0] <= limit and tried[1] < excess:
        end, gain = tried
    while end < limit and gain < excess:
        if pairs[end].ready_at >= view:
            gain += freed[end]
        end += 1
    return end, gain


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
