"""A prompt-cache model: which tokens of a request are read, written or plain input.

Mechanics per the prompt-caching docs [DOC]; details the docs leave open are ours and say so.
- Prefix order tools -> system -> messages; one *position* per tool definition, system block
  and message content block (`tokens.request_positions`).
- Breakpoints: `cache_control` on positions, plus the top-level automatic `cache_control`
  (on the last eligible block). At most `MAX_BREAKPOINTS`; extra ones are ignored here (the
  API answers 400: see `validate_cache_control`).
- Entry key: model + hash of the prefix up to and including the breakpoint, cache_control
  markers stripped; message-level keys also hash `thinking` and `tool_choice`, so changing
  them invalidates messages but not tools/system. Tool changes invalidate all (prefix order).
- Read: from each breakpoint walk back at most `LOOKBACK` positions (runs of consecutive
  tool_use or tool_result blocks count as one) for a live entry; the longest hit is read.
- Write: every breakpoint past the read point whose prefix is at least the model's minimum
  cacheable length; the tokens up to it are split by that breakpoint's TTL (5m / 1h).
- TTL measured from the request (the injected clock), refreshed on read.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context import memo
from agentctl.context.prices import min_cacheable_tokens
from agentctl.context.tokens import Position, message_positions, request_positions

MAX_BREAKPOINTS = 4
LOOKBACK = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
_INELIGIBLE = ("thinking", "redacted_thinking")  # cannot carry cache_control [DOC]
_RUN_TYPES = ("tool_use", "tool_result")


@dataclass(frozen=True)
class CacheUsage:
    """The cache part of `usage`; input + creation + read = the request's token estimate."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    ephemeral_5m_input_tokens: int
    ephemeral_1h_input_tokens: int


@dataclass(frozen=True)
class _Plan:
    usage: CacheUsage
    refresh: list[str]  # keys read (or covered by the read) whose TTL restarts
    writes: list[tuple[str, str]]  # (key, ttl)


def strip_cache_control(value: Any) -> Any:
    """A copy of plain JSON without any `cache_control` key (markers never change a cache key)."""
    if isinstance(value, Mapping):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def _canonical(value: Any) -> bytes:
    text = json.dumps(strip_cache_control(value), sort_keys=True, separators=(",", ":"))
    return text.encode()


def _marker(block: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The block's cache_control, or one on a nested tool_result content block (ours)."""
    marker = block.get("cache_control")
    if isinstance(marker, Mapping):
        return marker
    content = block.get("content")
    for item in content if isinstance(content, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("cache_control"), Mapping):
            return item["cache_control"]  # type: ignore[no-any-return]
    return None


def _ttl(marker: Mapping[str, Any]) -> str:
    return "1h" if marker.get("ttl") == "1h" else "5m"  # the API rejects other values


def _eligible(position: Position) -> bool:
    block = position.block
    if block.get("type") in _INELIGIBLE:
        return False
    return not (block.get("type") == "text" and not block.get("text"))


def breakpoints(request: Mapping[str, Any], positions: list[Position]) -> list[tuple[int, str]]:
    """All (position index, ttl) breakpoints in prefix order, automatic one included."""
    found = {i: _ttl(m) for i, p in enumerate(positions) if (m := _marker(p.block))}
    auto = request.get("cache_control")
    if isinstance(auto, Mapping):
        last = next((i for i in reversed(range(len(positions))) if _eligible(positions[i])), None)
        if last is not None:
            found.setdefault(last, _ttl(auto))
    return sorted(found.items())


def validate_cache_control(
    request: Mapping[str, Any], markers: MarkerCount | None = None
) -> str | None:
    """The API's 400 message when a request has more than 4 breakpoints, or None.
    `markers`: the count kept from the previous request of the same conversation."""
    if markers is None:
        count = len(breakpoints(request, request_positions(request)))
    else:
        count = markers.count(request)
    if count > MAX_BREAKPOINTS:
        limit = MAX_BREAKPOINTS
        return f"A maximum of {limit} blocks with cache_control may be provided. Found {count}."
    return None


def _prefix_keys(request: Mapping[str, Any], positions: list[Position], model: str) -> list[str]:
    """Key of the prefix ending at each position (rolling hash; linear in prompt size).

    In a replay (`context.memo`), the positions the previous request shared with this one
    (the same blocks in the same places) keep their keys, and hashing resumes after them."""
    messages = request.get("messages") or []
    settings = _canonical([request.get("thinking"), request.get("tool_choice")])
    items = [
        (
            p.segment,
            p.message_index,
            messages[p.message_index].get("role") if p.message_index >= 0 else "",
            p.block,
        )
        for p in positions
    ]
    remember = memo.active()
    last: _Keyed | None = memo.slot("cache-keys")
    start, keys, states = 0, [], []
    digest = hashlib.sha256(model.encode())
    if last is not None and last.model == model and last.settings == settings:
        start = _shared(last.items, items)
        keys, states = last.keys[:start], last.states[:start]
        if start:
            digest = states[start - 1].copy()
    seen_messages = any(item[0] == "messages" for item in items[:start])
    for segment, index, role, block in items[start:]:
        if segment == "messages" and not seen_messages:
            seen_messages = True  # message-level entries depend on these settings (C.5)
            digest.update(settings)
        digest.update(f"\x00{segment}:{index}:{role}\x00".encode())
        digest.update(_block_bytes(block))
        keys.append(digest.hexdigest())
        if remember:
            states.append(digest.copy())
    memo.keep("cache-keys", _Keyed(model, settings, items, keys, states))
    return keys


def _block_bytes(block: Any) -> bytes:
    return memo.remembered("canonical", block, lambda: _canonical(block))


@dataclass
class _Keyed:
    """The prefix keys of the last request a replay accounted (`_prefix_keys`)."""

    model: str
    settings: bytes
    items: list[tuple[str, int, Any, Any]]
    keys: list[str]
    states: list[Any]


def _shared(before: list[tuple[str, int, Any, Any]], now: list[tuple[str, int, Any, Any]]) -> int:
    """How many leading positions are the same in both: the same place and the same block, or
    a block whose canonical JSON (the bytes its key hashes) is the same."""
    count = 0
    for a, b in zip(before, now, strict=False):
        if a[:3] != b[:3] or not (a[3] is b[3] or _block_bytes(a[3]) == _block_bytes(b[3])):
            break
        count += 1
    return count


def _lookback_groups(positions: list[Position]) -> list[int]:
    """Lookback distance index per position: a run of tool_use (or tool_result) blocks is one."""
    groups: list[int] = []
    group, previous = -1, None
    for position in positions:
        kind = position.block.get("type")
        if not (kind in _RUN_TYPES and kind == previous):
            group += 1
        groups.append(group)
        previous = kind
    return groups


class PromptCache:
    """Cache state across requests of one simulated API (one organisation/workspace)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[str, tuple[float, str]] = {}  # key -> (expires_at, ttl)
        # (expires_at, key) for every write and refresh: expired entries are dropped in
        # order of expiry (a refreshed entry's older items find a later expiry and stay)
        self._expiry: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return sum(1 for expires, _ in self._entries.values() if expires > self._clock())

    @property
    def held(self) -> int:
        """Entries held, live or not yet dropped (expired ones go at the next request)."""
        return len(self._entries)

    def account(
        self, request: Mapping[str, Any], model: str, prefix: Prefix | None = None
    ) -> CacheUsage:
        """Usage of the (edited) request; writes entries and refreshes TTLs on reads.
        `prefix`: the positions of the previous request of the same conversation, so that
        this one computes only those it does not share (the same answer)."""
        now = self._clock()
        self._drop_expired(now)
        plan = self._plan(request, model, now, prefix)
        for key in plan.refresh:
            self._put(key, self._entries[key][1], now)
        for key, ttl in plan.writes:
            self._put(key, ttl, now)
        return plan.usage

    def _put(self, key: str, ttl: str, now: float) -> None:
        expires = now + TTL_SECONDS[ttl]
        self._entries[key] = (expires, ttl)
        heapq.heappush(self._expiry, (expires, key))

    def _drop_expired(self, now: float) -> None:
        """Forget the entries whose TTL ran out (as the real cache does): memory stays
        bounded by what a TTL's worth of requests writes."""
        while self._expiry and self._expiry[0][0] <= now:
            _, key = heapq.heappop(self._expiry)
            entry = self._entries.get(key)
            if entry is not None and entry[0] <= now:
                del self._entries[key]

    def peek(self, request: Mapping[str, Any], model: str) -> CacheUsage:
        """What `account` would report now, without changing the cache."""
        return self._plan(request, model, self._clock()).usage

    def _live(self, key: str, now: float) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry[0] > now

    def _read_end(self, keys: list[str], groups: list[int], points: list[int], now: float) -> int:
        """Index of the last position of the longest live cached prefix, -1 for none."""
        best = -1
        for point in points:
            j = point
            while j > best and groups[point] - groups[j] <= LOOKBACK:
                if self._live(keys[j], now):
                    best = j
                    break
                j -= 1
        return best

    def _plan(
        self, request: Mapping[str, Any], model: str, now: float, prefix: Prefix | None = None
    ) -> _Plan:
        if prefix is None:
            positions = request_positions(request)
            points = breakpoints(request, positions)[:MAX_BREAKPOINTS]
            keys = _prefix_keys(request, positions, model)
            cumulative = list(itertools.accumulate(p.tokens for p in positions))
            groups = _lookback_groups(positions)
        else:
            prefix.update(request, model)
            positions, keys, cumulative, groups = (
                prefix.positions, prefix.keys, prefix.cumulative, prefix.groups
            )  # fmt: skip
            points = prefix.breakpoints(request)[:MAX_BREAKPOINTS]
        read_end = self._read_end(keys, groups, [i for i, _ in points], now)
        read = cumulative[read_end] if read_end >= 0 else 0
        refresh = {keys[i] for i, _ in points if i <= read_end and self._live(keys[i], now)}
        refresh |= {keys[read_end]} if read_end >= 0 else set()
        minimum = min_cacheable_tokens(model)
        writes = [(i, ttl) for i, ttl in points if i > read_end and cumulative[i] >= minimum]
        split = _split_writes(writes, cumulative, read)
        creation = split["5m"] + split["1h"]
        total = cumulative[-1] if cumulative else 0
        usage = CacheUsage(total - read - creation, creation, read, split["5m"], split["1h"])
        return _Plan(usage, sorted(refresh), [(keys[i], ttl) for i, ttl in writes])


def _split_writes(
    writes: list[tuple[int, str]], cumulative: list[int], read: int
) -> dict[str, int]:
    """Written tokens per TTL: each breakpoint writes from the previous boundary up to it."""
    split = {"5m": 0, "1h": 0}
    start = read
    for i, ttl in writes:
        split[ttl] += cumulative[i] - start
        start = cumulative[i]
    return split


class Prefix:
    """The positions of the last request one conversation had accounted, with their prefix
    keys, running token sums, lookback groups and breakpoints: the next request computes
    only the positions after the messages it shares with this one (the same objects, or
    equal ones), so a conversation's request costs what it adds (a clearing, which changes
    older messages, costs what it changed and what follows)."""

    def __init__(self) -> None:
        self._head: tuple[Any, ...] | None = None
        self._messages: Kept = []  # the last request's (`snapshot`)
        self._starts: list[int] = []  # first position of each message
        self._heads = 0  # positions of tools and system
        self.positions: list[Position] = []
        self.keys: list[str] = []
        self._states: list[Any] = []
        self.cumulative: list[int] = []
        self.groups: list[int] = []
        self._marked: list[tuple[int, str]] = []  # (position, ttl) of cache_control markers
        self._settings = b""

    def update(self, request: Mapping[str, Any], model: str) -> None:
        """Bring the positions to `request` (tools, system and messages)."""
        messages = request.get("messages") or []
        settings = _canonical([request.get("thinking"), request.get("tool_choice")])
        head = (model, settings, request.get("tools"), request.get("system"))
        if head != self._head:
            self._head, self._settings = head, settings
            self._messages, self._starts = [], []
            self._cut(0)
            self._add(request_positions({**request, "messages": []}), messages, model)
            self._heads = len(self.positions)
        shared = shared_messages(self._messages, messages)
        self._cut(self._starts[shared] if shared < len(self._starts) else len(self.positions))
        del self._starts[shared:]
        for index in range(shared, len(messages)):
            self._starts.append(len(self.positions))
            self._add(message_positions(messages[index : index + 1], index), messages, model)
        self._messages = snapshot(messages)

    def _cut(self, count: int) -> None:
        del self.positions[count:], self.keys[count:], self._states[count:]
        del self.cumulative[count:], self.groups[count:]
        while self._marked and self._marked[-1][0] >= count:
            self._marked.pop()

    def _add(self, positions: list[Position], messages: list[Any], model: str) -> None:
        for position in positions:
            count = len(self.positions)
            digest = self._states[-1].copy() if self._states else hashlib.sha256(model.encode())
            if position.segment == "messages" and count == self._heads:
                digest.update(self._settings)  # message-level entries depend on these (C.5)
            index = position.message_index
            role = messages[index].get("role") if index >= 0 else ""
            digest.update(f"\x00{position.segment}:{index}:{role}\x00".encode())
            digest.update(_block_bytes(position.block))
            kind = position.block.get("type")
            previous = self.positions[-1].block.get("type") if count else None
            group = (self.groups[-1] if count else -1) + (
                0 if kind in _RUN_TYPES and kind == previous else 1
            )
            marker = _marker(position.block)
            if marker:
                self._marked.append((count, _ttl(marker)))
            self.positions.append(position)
            self.keys.append(digest.hexdigest())
            self._states.append(digest)
            self.cumulative.append((self.cumulative[-1] if count else 0) + position.tokens)
            self.groups.append(group)

    def breakpoints(self, request: Mapping[str, Any]) -> list[tuple[int, str]]:
        """`breakpoints(request, self.positions)`, from the markers kept."""
        found = dict(self._marked)
        auto = request.get("cache_control")
        if isinstance(auto, Mapping):
            last = next(
                (i for i in reversed(range(len(self.positions))) if _eligible(self.positions[i])),
                None,
            )
            if last is not None:
                found.setdefault(last, _ttl(auto))
        return sorted(found.items())


class MarkerCount:
    """`len(breakpoints(request, request_positions(request)))` for the requests of one
    conversation, counting the markers of the messages it has not seen before only."""

    def __init__(self) -> None:
        self._messages: Kept = []  # the last request's (`snapshot`)
        self._sums = [0]  # marked positions in the first n messages

    def count(self, request: Mapping[str, Any]) -> int:
        messages = request.get("messages") or []
        shared = shared_messages(self._messages, messages)
        del self._sums[shared + 1 :]
        for index in range(shared, len(messages)):
            positions = message_positions(messages[index : index + 1])
            marked = sum(1 for p in positions if _marker(p.block))
            self._sums.append(self._sums[-1] + marked)
        self._messages = snapshot(messages)
        head = request_positions({**request, "messages": []})
        count = self._sums[-1] + sum(1 for p in head if _marker(p.block))
        if isinstance(request.get("cache_control"), Mapping):
            last = _last_eligible(head, messages)
            count += last is not None and not _marker(last.block)
        return count


def _last_eligible(head: list[Position], messages: list[Any]) -> Position | None:
    """The last position that can carry the automatic breakpoint, looked for from the end."""
    for index in range(len(messages) - 1, -1, -1):
        for position in reversed(message_positions(messages[index : index + 1], index)):
            if _eligible(position):
                return position
    return next((p for p in reversed(head) if _eligible(p)), None)


class Continuation(list[Any]):
    """A request's messages whose first `held` are `base[:held]`, `base` being a list that is
    only ever appended to (a conversation the server holds: emulator/threads.py): two
    continuations of one base share their first `min(held)` messages, known without looking
    at them (`shared_messages`). One is kept only as its `snapshot` (never the list itself),
    so that the next request of the conversation can reuse it (`reset`)."""

    def __init__(self, base: list[Any], held: int, new: Sequence[Any]) -> None:
        super().__init__(base)  # one copy (an append racing it is cut off below)
        del self[held:]
        self.extend(new)
        self.base = base
        self.held = held

    def reset(self, held: int, new: Sequence[Any]) -> None:
        """Become `base[:held] + new`, changing only what differs from what it was."""
        keep = min(self.held, held)  # self[:keep] is base[:keep] already
        del self[keep:]
        self.extend(self.base[keep:held])
        self.extend(new)
        self.held = held


@dataclass(frozen=True)
class Snapshot:
    """What is kept of a continuation: its base, how many of it it held, and its new messages
    (`snapshot`)."""

    base: list[Any]
    held: int
    new: tuple[Any, ...]

    def after(self, index: int) -> list[Any]:
        """The continuation's messages from `index` (at most `held`) on."""
        return [*self.base[index : self.held], *self.new]


class Revision(list[Any]):
    """A conversation's messages as edited for one request (context/incremental.py), whose
    first `same` are the very objects of `previous`, the view made for the request before;
    made once and never changed after. Only the latest link is kept: making a revision cuts
    its previous one's own link, so a conversation holds two views at most."""

    def __init__(self, items: Sequence[Any], previous: Revision | None, same: int) -> None:
        super().__init__(items)
        self.previous = previous
        self.same = 0
        if previous is not None:
            previous.previous = None
            self.same = max(0, min(same, len(self), len(previous)))


Kept = Sequence[Any] | Snapshot  # what `snapshot` keeps of a request's messages


def snapshot(messages: Sequence[Any]) -> Kept:
    """What to keep of a request's messages to compare the next one with: a revision itself
    (never changed), a continuation's `Snapshot`, a copy of anything else."""
    if isinstance(messages, Continuation):
        return Snapshot(messages.base, messages.held, tuple(messages[messages.held :]))
    return messages if isinstance(messages, Revision) else list(messages)


def shared_messages(before: Kept, now: Sequence[Any]) -> int:
    """How many leading messages `now` shares with `before`: the same objects or equal ones
    (a history parsed anew, or one whose last messages moved their cache markers), found by
    comparing runs of them at C speed (a list comparison skips the same objects). Two
    continuations of one held conversation, and a revision and the one before it, are
    compared from where they part only."""
    known = 0
    if isinstance(before, Snapshot):
        if isinstance(now, Continuation) and now.base is before.base:
            known = min(before.held, now.held)
            return known + _leading(before.after(known), now[known:])
        before = before.after(0)
    if isinstance(before, Continuation) and isinstance(now, Continuation):
        known = min(before.held, now.held) if before.base is now.base else 0
    elif isinstance(now, Revision) and now.previous is before:
        known = now.same
    if known:
        return known + _leading(before[known:], now[known:])
    return _leading(before, now)


def _leading(before: Sequence[Any], now: Sequence[Any]) -> int:
    """The first `i` where `before[i] != now[i]` (the shorter length if none): one run
    compared whole, else halved towards the first difference."""
    low, high = 0, min(len(before), len(now))
    if before[:high] == now[:high]:
        return high
    high -= 1  # before[:low] == now[:low]; the first difference is at most `high`
    while low < high:
        middle = (low + high + 1) // 2
        if before[low:middle] == now[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
