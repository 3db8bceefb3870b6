"""The server's context edits kept between the requests of one conversation: `Editor`.

`engine.edit_as_server` computes a request's edits from its whole history, as a stateless
server would. A conversation's requests mostly extend the one before (the history plus what is
new), so an `Editor` keeps what it worked out on the previous request of the same conversation:
the messages seen and their token counts, the tool pairs, which pairs clearing may take and what
each frees, the thinking turns, the compaction blocks, the edited history with the clearings
committed so far, and the walk of the "edited" trigger basis. A request that shares its first
messages with the previous one (by value: the emulator parses each request anew, and a client
moves its cache breakpoints) costs what it adds; anything else (a
different conversation, an edited history, edits the incremental form does not cover) is edited
from scratch by the engine itself. The answers are the engine's (tests/context/
test_incremental.py runs both on generated histories and compares them).
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentctl.context import engine
from agentctl.context.batching import Marks, _Walk
from agentctl.context.cache import Continuation, Kept, Revision, shared_messages, snapshot
from agentctl.context.compaction import compact_edit, compacted
from agentctl.context.pairs import Change, Pair, _tool_blocks, candidates, pair_changes
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.context.tokens import (
    estimate_block_tokens,
    estimate_message_tokens,
    estimate_request_tokens,
    message_blocks,
)

_THINKING = "clear_thinking_20251015"
_NONE = sys.maxsize  # no message changed
_TOOL_USES = "clear_tool_uses_20250919"


@dataclass
class _Judged:
    """The pairs clearing may take under one (exclude_tools, clear_tool_inputs), settled ones
    (every pair before them answered) in order, with what clearing each changes and frees."""

    key: tuple[Any, ...]
    index: list[int] = field(default_factory=list)  # into `_State.pairs`
    pairs: list[Pair] = field(default_factory=list)
    changes: list[list[Change]] = field(default_factory=list)
    freed: list[int] = field(default_factory=list)
    cum: list[int] = field(default_factory=lambda: [0])  # freed prefix sums
    judged: int = 0  # pairs[:judged] judged

    def truncate(self, pair_count: int) -> None:
        """Forget the judgement of pairs from `pair_count` on."""
        cut = bisect.bisect_left(self.index, pair_count)
        del self.index[cut:], self.pairs[cut:], self.changes[cut:], self.freed[cut:]
        del self.cum[cut + 1 :]
        self.judged = min(self.judged, pair_count)


@dataclass
class _Kept:
    """The "edited" basis walk as of message `at`, for one set of marks and base."""

    key: tuple[Any, ...]
    walk: _Walk
    at: int
    stripped: int  # thinking turns stripped in the messages it walked


class _State:
    """What one conversation's requests have shown so far (message by message, undoable)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []  # as received
        self.seen: Kept = self.messages  # ... or the last request's (`cache.snapshot`)
        self.thought: list[dict[str, Any]] = []  # ... less the thinking stripped so far
        self.edited: list[dict[str, Any]] = []  # ... and the clearings committed so far
        self.cum = [0]  # message token prefix sums
        self.saved: list[int] = []  # tokens the committed edits took out of each message
        self.thinking: list[int] = []  # assistant messages holding thinking
        self.reported = [0]  # prefix sums of what clearing their thinking reports
        self.unthought = [0]  # ... and of the tokens it takes out
        self.pairs: list[Pair] = []
        self.use_at: list[int] = []
        self.by_id: dict[str, int] = {}
        self.answered: list[int] = []  # pairs in the order their results came
        self.summaries: list[int] = []  # messages holding a compaction summary
        self.undo: list[tuple[int, int, int, int]] = []  # per message: list lengths before it
        self.duplicates = False  # two uses with one id (then no undo: start again)
        self.stripped = 0  # thinking[:stripped] stripped in `thought` and `edited`
        self.cleared = 0  # judged pairs [:cleared] rewritten in `edited`
        # per committed pair: the stripped count then, and (message, before, freed) per change
        self.log: list[tuple[int, list[tuple[int, dict[str, Any], int]]]] = []
        self.judged: _Judged | None = None
        self.kept: _Kept | None = None
        # the last edited view made (`Editor._view`), the message it starts at, the first
        # message it holds a copy of (an unsettled pair's clearing), and the first message of
        # `edited` changed since it was made
        self.view: Revision | None = None
        self.view_start = 0
        self.view_copied = _NONE
        self.dirty = _NONE
        # the last compaction view made (`Editor._compacted`) and the messages it opens with
        self.compacted: tuple[Revision, list[dict[str, Any]]] | None = None

    def touch(self, index: int) -> None:
        """Note that `edited[index]` (and maybe those after it) changed."""
        self.dirty = min(self.dirty, index)


class Editor:
    """`engine.edit_as_server` for the requests of one conversation, each costing what it
    adds to the previous one (see the module docstring); not thread-safe."""

    def __init__(self, server: ServerModel = DEFAULT_SERVER_MODEL) -> None:
        self.server = server
        self._state = _State()
        self.scratch = 0  # requests edited from scratch (a measure for tests and benches)
        self._thinning = False  # this request clears thinking (later ones may strip more)
        self.copied: list[int] = []  # messages an unsettled pair's clearing changed, on a copy
        # by identity: a summary's message -> the messages the compaction view opens with
        self._openings: dict[int, tuple[Any, list[dict[str, Any]], int]] = {}

    def edit(self, request: Mapping[str, Any]) -> engine.EditOutcome:
        """What the server does to `request` (`engine.edit_as_server`'s answer)."""
        plan = _plan(request)
        messages = request.get("messages")
        if plan is None or not isinstance(messages, list) or not self._follow(messages):
            self._state = _State()
            self.scratch += 1
            return engine.edit_as_server(request, server=self.server)
        return self._outcome(request, plan)

    # --- the history ----------------------------------------------------------------------

    def _follow(self, messages: list[Any]) -> bool:
        """Bring the state to `messages`: keep the longest common prefix, add the rest
        (False: a message is not an object)."""
        state = self._state
        common = shared_messages(state.seen, messages)
        if not all(isinstance(m, dict) for m in messages[common:]):
            return False
        if common < len(state.messages) and not self._rewind(common):
            self._state = _State()
            self.scratch += 1
            common = 0
        for index in range(common, len(messages)):
            self._add(messages[index], index)
        continued = isinstance(messages, Continuation)
        self._state.seen = snapshot(messages) if continued else self._state.messages
        return True

    def _add(self, message: dict[str, Any], index: int) -> None:
        state = self._state
        state.undo.append(
            (len(state.pairs), len(state.answered), len(state.thinking), len(state.summaries))
        )
        state.messages.append(message)
        state.thought.append(message)
        state.edited.append(message)
        state.saved.append(0)
        state.cum.append(state.cum[-1] + estimate_message_tokens(message))
        if message.get("role") == "assistant":
            blocks = [b for b in message_blocks(message) if engine._is_thinking(b)]
            if blocks:
                state.thinking.append(index)
                text = sum(engine._thinking_text_tokens(b) for b in blocks)
                state.reported.append(state.reported[-1] + text)
                gone = sum(estimate_block_tokens(b) for b in blocks)
                state.unthought.append(state.unthought[-1] + gone)
        if _summary(message):
            state.summaries.append(index)
        for is_use, key, block in _tool_blocks(message):
            if is_use:
                state.duplicates = state.duplicates or key in state.by_id
                state.by_id[key] = len(state.pairs)
                state.pairs.append(Pair(block, ready_at=index))
                state.use_at.append(index)
                continue
            found = state.by_id.get(key)
            if found is not None and state.pairs[found].result is None:
                pair = state.pairs[found]
                pair.result, pair.ready_at = block, index
                state.answered.append(found)

    def _rewind(self, count: int) -> bool:
        """Forget the messages from `count` on; False when that cannot be undone."""
        state = self._state
        if state.duplicates:
            return False
        pairs, answered, thinking, summaries = state.undo[count]
        first = pairs
        for found in state.answered[answered:]:
            pair = state.pairs[found]
            pair.result, pair.ready_at = None, state.use_at[found]
            first = min(first, found)
        for pair in state.pairs[pairs:]:
            state.by_id.pop(str(pair.use.get("id")), None)
        del state.answered[answered:], state.pairs[pairs:], state.use_at[pairs:]
        del state.thinking[thinking:], state.reported[thinking + 1 :]
        del state.unthought[thinking + 1 :], state.summaries[summaries:]
        del state.messages[count:], state.cum[count + 1 :], state.undo[count:]
        if state.judged is not None:
            state.judged.truncate(first)
        committed = min(state.cleared, len(state.judged.index)) if state.judged else 0
        if state.stripped > len(state.thinking) or (
            state.cleared > committed and not self._revert(committed)
        ):
            self._uncommit()
        del state.thought[count:], state.edited[count:], state.saved[count:]
        state.touch(count)
        if state.kept is not None and state.kept.at > count:
            state.kept = None
        return True

    def _uncommit(self, stripped: int = 0) -> None:
        """The edited history back to the messages as received, then with the oldest
        `stripped` thinking turns stripped again."""
        state = self._state
        state.thought = list(state.messages)
        state.edited = list(state.messages)
        state.touch(0)
        state.saved = [0] * len(state.messages)
        state.stripped = state.cleared = 0
        state.log = []
        state.kept = None
        self._strip(stripped)

    # --- one request ----------------------------------------------------------------------

    def _outcome(self, request: Mapping[str, Any], plan: _Plan) -> engine.EditOutcome:
        state = self._state
        base = estimate_request_tokens({**request, "messages": []})
        original = base + state.cum[-1]
        applied: list[dict[str, Any]] = []
        stripped = 0
        self._thinning = plan.thinking is not None
        if plan.thinking is not None:
            default = self.server.default_thinking_keep(str(request.get("model", "")))
            stripped = self._strip_count(plan.thinking, default)
            if stripped:
                applied.append(
                    {
                        "type": _THINKING,
                        "cleared_thinking_turns": stripped,
                        "cleared_input_tokens": state.reported[stripped],
                    }
                )
        self._strip(stripped)
        current = original - state.unthought[stripped]
        victims, freed, tail = 0, 0, []
        if plan.tool_uses is not None:
            judged = self._judge(plan.tool_uses)
            tail = self._tail(plan.tool_uses)
            victims = self._victims(plan.tool_uses, current, base, judged, tail)
            freed = self._freed(judged, tail, victims)
            at_least = int((plan.tool_uses.get("clear_at_least") or {}).get("value", 0))
            if victims and (self.server.trigger_basis == "edited" or freed >= at_least):
                applied.append(
                    {
                        "type": _TOOL_USES,
                        "cleared_tool_uses": victims,
                        "cleared_input_tokens": freed,
                    }
                )
            else:
                victims, freed = 0, 0
        tokens = current - freed
        if plan.compaction and state.summaries:  # the view starts at the last summary
            return self._compacted(request, victims, tail, applied, base)
        edited: dict[str, Any] = {**request, "messages": self._rewritten(victims, tail)}
        if not plan.compaction:
            return engine.EditOutcome(edited, applied, original, tokens)
        return engine.EditOutcome(dict(edited), applied, original, tokens)

    def _strip_count(self, edit: Mapping[str, Any], default: int | None) -> int:
        """How many of the oldest thinking turns clear_thinking strips (`_clear_thinking`)."""
        keep = engine._keep_thinking_turns(edit, default)
        if keep is None:
            return 0
        state = self._state
        earlier = len(state.thinking)
        if earlier and state.thinking[-1] == len(state.messages) - 2 and _answers(state):
            earlier -= 1
        return min(earlier, max(earlier - (keep - 1), 0))

    def _strip(self, count: int) -> None:
        """Commit the stripping of the oldest `count` thinking turns."""
        state = self._state
        if count < state.stripped:
            self._uncommit()
        for index in state.thinking[state.stripped : count]:
            before = state.edited[index]
            state.thought[index] = engine._unthought(state.thought[index])
            state.edited[index] = engine._unthought(before)
            state.touch(index)
            state.saved[index] += estimate_message_tokens(before) - estimate_message_tokens(
                state.edited[index]
            )
        state.stripped = max(state.stripped, count)

    def _judge(self, edit: Mapping[str, Any]) -> _Judged:
        """The settled clearable pairs under this edit's tool filters."""
        state = self._state
        key = (tuple(edit.get("exclude_tools") or ()), _inputs_key(edit.get("clear_tool_inputs")))
        if state.judged is None or state.judged.key != key:
            if state.cleared:
                self._uncommit(state.stripped)
            state.judged = _Judged(key)
            state.kept = None
        judged = state.judged
        placeholder = self.server.placeholder
        while judged.judged < len(state.pairs) and state.pairs[judged.judged].result is not None:
            pair = state.pairs[judged.judged]
            if candidates([pair], edit, self.server):
                changes = pair_changes(pair, edit, placeholder)
                judged.index.append(judged.judged)
                judged.pairs.append(pair)
                judged.changes.append(changes)
                judged.freed.append(sum(c[3] for c in changes))
                judged.cum.append(judged.cum[-1] + judged.freed[-1])
            judged.judged += 1
        return judged

    def _tail(self, edit: Mapping[str, Any]) -> list[tuple[int, list[Change]]]:
        """The clearable pairs from the first unanswered one on (judged on every request)."""
        state = self._state
        judged = state.judged
        assert judged is not None
        tail: list[tuple[int, list[Change]]] = []
        for index in range(judged.judged, len(state.pairs)):
            pair = state.pairs[index]
            if candidates([pair], edit, self.server):
                tail.append((index, pair_changes(pair, edit, self.server.placeholder)))
        return tail

    def _victims(
        self,
        edit: Mapping[str, Any],
        current: int,
        base: int,
        judged: _Judged,
        tail: list[tuple[int, list[Change]]],
    ) -> int:
        """How many of the oldest clearable pairs this request clears (`_victims`)."""
        state = self._state
        clearable = len(judged.index) + len(tail)
        keep = int((edit.get("keep") or {}).get("value", engine.DEFAULT_KEEP_TOOL_USES))
        if self.server.trigger_basis == "unedited":
            if not engine._triggered(edit, current, len(state.pairs)):
                return 0
            return max(clearable - keep, 0)
        trigger = edit.get("trigger") or engine.DEFAULT_TRIGGER
        marks = Marks(
            high=int(trigger["value"]),
            low=0,
            keep=keep,
            at_least=int((edit.get("clear_at_least") or {}).get("value", 0)),
            count_uses=trigger.get("type") == "tool_uses",
        )
        if marks.count_uses and marks.at_least == 0:
            # every move goes as far as `keep` allows (low 0: the excess is the whole
            # prompt, which no clearing can free), and the measure only grows
            return max(clearable - keep, 0) if len(state.pairs) > marks.high else 0
        return self._walk(marks, base, judged, tail)

    def _walk(
        self, marks: Marks, base: int, judged: _Judged, tail: list[tuple[int, list[Change]]]
    ) -> int:
        """`batching.boundary` on the history as thinking left it, walking what is new."""
        state = self._state
        pairs, freed = judged.pairs, judged.freed
        if tail:
            pairs = [*pairs, *(state.pairs[i] for i, _ in tail)]
            freed = [*freed, *(sum(c[3] for c in changes) for _, changes in tail)]
        key = (marks, base, judged.key)
        kept = state.kept
        if kept is None or kept.key != key or _restripped(state, kept):
            kept = state.kept = _Kept(key, _Walk(base), 0, state.stripped)
        # a message the walk passes is final once every pair before it is settled and no
        # later stripping can shrink it; the last two stay out (a client moves its cache
        # breakpoint there, and the next request then differs from this one from there)
        settled = len(state.messages) - 2
        if judged.judged < len(state.pairs):
            settled = state.use_at[judged.judged]
        if self._thinning and state.stripped < len(state.thinking):
            settled = min(settled, state.thinking[state.stripped])
        walk = kept.walk.copy()
        messages = state.thought
        for index in range(kept.at, len(messages)):
            walk.step(messages, index, pairs, freed, marks, None, False)
            if index < settled:
                kept.walk, kept.at, kept.stripped = walk.copy(), index + 1, state.stripped
        return walk.cleared

    @staticmethod
    def _freed(judged: _Judged, tail: list[tuple[int, list[Change]]], victims: int) -> int:
        settled = min(victims, len(judged.index))
        extra = sum(sum(c[3] for c in changes) for _, changes in tail[: victims - settled])
        return judged.cum[settled] + extra

    def _rewritten(
        self, victims: int, tail: list[tuple[int, list[Change]]], start: int = 0
    ) -> Revision:
        """The edited history from message `start` on: the committed clearings up to
        `victims` (of the settled pairs), and on a copy, those of unsettled pairs (the
        messages they change are left in `self.copied`)."""
        state = self._state
        judged = state.judged
        settled = 0 if judged is None else min(victims, len(judged.index))
        if settled < state.cleared and not self._revert(settled):
            self._uncommit(state.stripped)
        self.copied = []
        if judged is None:
            return self._view(start)
        for index in range(state.cleared, settled):  # one pair at a time: undoable
            done = _apply(state.edited, state.saved, state.use_at, state.pairs,
                          [judged.index[index]], [judged.changes[index]])  # fmt: skip
            state.log.append((state.stripped, done))
            for at, _, _ in done:
                state.touch(at)
        state.cleared = max(state.cleared, settled)
        out = self._view(start)
        extra = tail[: victims - settled]
        if extra:
            saved = [0] * len(state.edited)
            pick = [i for i, _ in extra]
            changes = [c for _, c in extra]
            done = _apply(out, saved, state.use_at, state.pairs, pick, changes, start)
            self.copied = [at for at, _, _ in done]
            if self.copied:
                state.view_copied = min(self.copied)
                out.same = min(out.same, state.view_copied - start)
        return out

    def _view(self, start: int) -> Revision:
        """`edited[start:]` as a new Revision of the last view made (when it started at the
        same message): the messages before the first one changed since, or copied in either
        view, are that view's own."""
        state = self._state
        previous = state.view if state.view_start == start else None
        same = min(state.dirty, state.view_copied) - start
        view = Revision(state.edited[start:] if start else state.edited, previous, same)
        state.view, state.view_start = view, start
        state.dirty = state.view_copied = _NONE
        return view

    def _revert(self, count: int) -> bool:
        """Undo the committed clearings of the pairs from `count` on (False: thinking was
        stripped since, which their undo would not keep)."""
        state = self._state
        if any(stripped != state.stripped for stripped, _ in state.log[count:]):
            return False
        for _, done in reversed(state.log[count:]):
            for at, before, freed in reversed(done):
                state.edited[at] = before
                state.touch(at)
                state.saved[at] -= freed
        del state.log[count:]
        state.cleared = count
        return True

    def _compacted(
        self,
        request: Mapping[str, Any],
        victims: int,
        tail: list[tuple[int, list[Change]]],
        applied: list[dict[str, Any]],
        base: int,
    ) -> engine.EditOutcome:
        """`edit_as_server`'s compaction view: from the last summary block on (the edited
        history is made from there only; the messages the summary's message opens the view
        with are kept while that message is the same)."""
        state = self._state
        at = state.summaries[-1]
        out = self._rewritten(victims, tail, at)
        rest = state.cum[-1] - state.cum[at + 1]
        original = base + rest + self._opening(state.messages[at])[1]
        rest -= _saved(state, at, out, self.copied)
        opening, head = self._opening(out[0])
        before = state.compacted
        # the same opening objects and the view from the summary on a revision of the last
        # one: the messages they share are the last compaction view's own
        known = before is not None and before[1] is opening and out.same > 0
        previous = before[0] if before is not None and known else None
        view = Revision([*opening, *out[1:]], previous, len(opening) + out.same - 1)
        state.compacted = (view, opening)
        seen = {**request, "messages": view}
        return engine.EditOutcome(seen, applied, original, base + rest + head)

    def _opening(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
        """The messages `compacted` opens the view with when `message` holds the last
        summary, and their tokens (the same objects while `message` is the same)."""
        found = self._openings.get(id(message))
        if found is not None and found[0] is message:
            return found[1], found[2]
        opening = compacted({"messages": [message]}, last=0)["messages"]
        tokens = sum(estimate_message_tokens(m) for m in opening)
        if len(self._openings) >= 4:  # the summary's message as received and as edited
            self._openings.clear()
        self._openings[id(message)] = (message, opening, tokens)
        return opening, tokens


def _saved(state: _State, at: int, messages: Sequence[Any], copied: Sequence[int]) -> int:
    """Tokens the edits took out of the messages after `at` (`messages` holds those from
    `at` on): committed ones from the state's tally, an uncommitted clearing of an
    unsettled pair (in `copied`) measured on its message."""
    total = sum(state.saved[at + 1 :])
    for index in copied:
        if index > at and messages[index - at] is not state.edited[index]:
            total -= state.saved[index]
            total += estimate_message_tokens(state.messages[index]) - estimate_message_tokens(
                messages[index - at]
            )
    return total


def _apply(
    messages: list[dict[str, Any]],
    saved: list[int],
    use_at: list[int],
    pairs: list[Pair],
    indexes: Sequence[int],
    changes: Sequence[Sequence[Change]],
    start: int = 0,
) -> list[tuple[int, dict[str, Any], int]]:
    """Put the changes of these pairs into `messages` (copy on write, as `engine._rewrite`;
    `messages` holds those from `start` on: changes before it are left out), adding what
    they free to `saved` by message; returns (message, what it was, freed) per message
    changed."""
    where: dict[int, list[Change]] = {}
    for index, pair_changes_ in zip(indexes, changes, strict=True):
        pair = pairs[index]
        for change in pair_changes_:
            at = use_at[index] if change[0] is pair.use else pair.ready_at
            if at >= start:
                where.setdefault(at, []).append(change)
    done: list[tuple[int, dict[str, Any], int]] = []
    for at, found in where.items():
        freed = sum(c[3] for c in found)
        done.append((at, messages[at - start], freed))
        engine._rewrite_one(messages, at - start, [(b, k, v) for b, k, v, _ in found])
        saved[at] += freed
    return done


def _restripped(state: _State, kept: _Kept) -> bool:
    """Whether thinking was stripped, since the walk was kept, from a message it walked."""
    return any(i < kept.at for i in state.thinking[kept.stripped : state.stripped])


def _answers(state: _State) -> bool:
    """Whether the history ends with the tool results of its last assistant message."""
    messages = state.messages
    if len(messages) < 2 or messages[-2].get("role") != "assistant":
        return False
    last = messages[-1]
    return last.get("role") == "user" and any(
        b.get("type") == "tool_result" for b in message_blocks(last)
    )


@dataclass(frozen=True)
class _Plan:
    thinking: Mapping[str, Any] | None
    tool_uses: Mapping[str, Any] | None
    compaction: bool


def _plan(request: Mapping[str, Any]) -> _Plan | None:
    """The request's edits in the shape the incremental form covers (at most one of each,
    thinking before tool uses), else None."""
    management = request.get("context_management")
    edits = (management.get("edits") if isinstance(management, Mapping) else None) or []
    if not isinstance(edits, list):
        return None
    thinking = tool_uses = None
    for edit in edits:
        if not isinstance(edit, Mapping):
            return None
        kind = edit.get("type")
        if kind == _THINKING and thinking is None and tool_uses is None:
            thinking = edit
        elif kind == _TOOL_USES and tool_uses is None:
            tool_uses = edit
        elif kind in (_THINKING, _TOOL_USES):
            return None
    return _Plan(thinking, tool_uses, compact_edit(request) is not None)


def _summary(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "compaction" and bool(b.get("content"))
        for b in content
    )


def _inputs_key(flag: Any) -> Any:
    return tuple(flag) if isinstance(flag, list | tuple) else bool(flag)
