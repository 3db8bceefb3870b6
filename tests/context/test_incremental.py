"""The incremental engine (`context.incremental.Editor`) against the from-scratch one.

Generated conversations (fixed seeds) are sent request by request, each the previous one plus
what is new, with the cache breakpoint moving to the last block as a client moves it, now and
then a fork, a rewritten history or another conversation in between; every request is edited
by one long-lived Editor and by `engine.edit_as_server`, and the two must agree on the edited
request, the applied edits and both token counts.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from agentctl.context.cache import (
    MarkerCount,
    Prefix,
    PromptCache,
    breakpoints,
    shared_messages,
)
from agentctl.context.engine import edit_as_server
from agentctl.context.incremental import Editor
from agentctl.context.memo import replay_memo
from agentctl.context.server_model import ServerModel
from agentctl.context.tokens import request_positions

Json = dict[str, Any]
WORDS = ("alpha", "beta", "gamma", "delta", "shard", "queue", "lease", "token", "42", "é")
MARKER = {"type": "ephemeral"}
SEEDS = range(40)
SERVERS = (
    ServerModel(),
    ServerModel(name="custom", trigger_basis="unedited"),
    ServerModel(name="custom", min_result_tokens="placeholder", thinking_keep=1),
    ServerModel(name="custom", trigger_basis="unedited", min_result_tokens=0, thinking_keep="all"),
)


def _text(draw: random.Random, low: int, high: int) -> str:
    return " ".join(draw.choice(WORDS) for _ in range(draw.randint(low, high)))


def conversation(draw: random.Random, turns: int, unanswered: float = 0.07) -> list[Json]:
    """A tool loop's history: thinking, text, client and server tool uses, small and large
    results, compaction blocks, the odd unanswered use."""
    messages: list[Json] = [{"role": "user", "content": _text(draw, 3, 9)}]
    for turn in range(turns):
        blocks: list[Json] = []
        if draw.random() < 0.5:
            blocks.append({"type": "thinking", "thinking": _text(draw, 5, 60), "signature": "s"})
        if draw.random() < 0.08 and turn:
            blocks.append({"type": "compaction", "content": _text(draw, 10, 40)})
        if draw.random() < 0.6:
            blocks.append({"type": "text", "text": _text(draw, 1, 12)})
        results: list[Json] = []
        for n in range(draw.choice((0, 1, 1, 1, 2, 3))):
            name = draw.choice(("read", "read", "memory", "search", "write"))
            use = {"type": "tool_use", "id": f"u{turn}-{n}", "name": name,
                   "input": {"path": _text(draw, 1, draw.choice((2, 30)))}}  # fmt: skip
            blocks.append(use)
            if draw.random() >= unanswered:
                size = draw.choice((1, 3, 12, 80, 300))
                result = {"type": "tool_result", "tool_use_id": use["id"],
                          "content": _text(draw, max(size // 2, 1), size)}  # fmt: skip
                if draw.random() < 0.1:
                    result["is_error"] = True
                results.append(result)
        if draw.random() < 0.1:
            use = {"type": "server_tool_use", "id": f"s{turn}", "name": "web_search",
                   "input": {"query": _text(draw, 1, 4)}}  # fmt: skip
            found = {"type": "web_search_tool_result", "tool_use_id": use["id"],
                     "content": [{"type": "text", "text": _text(draw, 20, 90)}]}  # fmt: skip
            blocks += [use, found]
        messages.append(
            {"role": "assistant", "content": blocks or [{"type": "text", "text": "ok"}]}
        )
        if draw.random() < 0.15:
            results.append({"type": "text", "text": _text(draw, 2, 8)})
        messages.append({"role": "user", "content": results or _text(draw, 1, 5)})
    return messages


def edits(draw: random.Random, request: int, boundary: list[int]) -> list[Json]:
    """One request's edits: fixed for most conversations, batched-style (a tool_uses trigger
    at the boundary and keep = the rest) for some, with every option drawn."""
    out: list[Json] = []
    if draw.random() < 0.6:
        thinking: Json = {"type": "clear_thinking_20251015"}
        keep = draw.choice((None, 1, 2, 3, "all"))
        if keep == "all":
            thinking["keep"] = "all"
        elif keep is not None:
            thinking["keep"] = {"type": "thinking_turns", "value": keep}
        out.append(thinking)
    if draw.random() < 0.9:
        tool: Json = {"type": "clear_tool_uses_20250919"}
        if boundary[0] and draw.random() < 0.8:
            tool["trigger"] = {"type": "tool_uses", "value": boundary[0]}
            tool["keep"] = {"type": "tool_uses", "value": draw.randint(0, 4)}
        else:
            kind = draw.choice(("input_tokens", "tool_uses"))
            value = draw.choice((200, 900, 2500)) if kind == "input_tokens" else draw.randint(1, 6)
            tool["trigger"] = {"type": kind, "value": value}
            tool["keep"] = {"type": "tool_uses", "value": draw.choice((0, 1, 2, 3))}
        if draw.random() < 0.3:
            tool["clear_at_least"] = {"type": "input_tokens", "value": draw.choice((50, 400))}
        if draw.random() < 0.3:
            tool["exclude_tools"] = ["memory"]
        if draw.random() < 0.3:
            tool["clear_tool_inputs"] = draw.choice((True, ["read"], ["write", "search"]))
        out.append(tool)
    if draw.random() < 0.3:
        out.append(
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}
        )
    if draw.random() < 0.02:
        out.reverse()  # tool uses before thinking: the incremental form leaves it to the engine
    return out


def requests(seed: int) -> Iterator[Json]:
    """The requests of a few conversations, interleaved with forks and rewritten histories."""
    draw = random.Random(seed)
    history = conversation(draw, draw.randint(8, 40))
    fixed = draw.random() < 0.6
    settings = edits(draw, 0, [0])
    boundary = [0]
    ends = [i + 1 for i, m in enumerate(history) if m["role"] == "user" and i]
    for count in ends:
        if not fixed:
            if draw.random() < 0.25:
                boundary[0] += draw.randint(1, 3)
            settings = edits(draw, count, boundary)
        body: Json = {"model": draw.choice(("claude-sonnet-5", "claude-opus-5-5")),
                      "max_tokens": 100, "messages": copy.deepcopy(history[:count])}  # fmt: skip
        if draw.random() < 0.3:
            body["system"] = "be brief"
        if settings:
            body["context_management"] = {"edits": settings}
        last = body["messages"][-1]
        if isinstance(last["content"], list) and last["content"]:
            last["content"][-1]["cache_control"] = MARKER
        roll = draw.random()
        if roll < 0.05:  # a fork: an earlier point of the same conversation
            body["messages"] = body["messages"][: draw.randint(1, count)]
        elif roll < 0.08:  # a history edited in the middle
            body["messages"][draw.randrange(count)] = {"role": "user", "content": "changed"}
        elif roll < 0.1:  # another conversation altogether
            body["messages"] = conversation(random.Random(seed + 1000), 5)
        yield body


def _same(seed: int, server: ServerModel, shared: bool) -> int:
    """Run one seed through both; the number of requests compared."""
    editor = Editor(server)
    compared = 0
    for body in requests(seed):
        if shared:  # a replay hands over the same objects every time
            expected = edit_as_server(body, server=server)
        else:  # the emulator parses every request anew
            expected = edit_as_server(json.loads(json.dumps(body)), server=server)
        got = editor.edit(body if shared else json.loads(json.dumps(body)))
        assert got.applied_edits == expected.applied_edits, (seed, compared)
        assert got.original_input_tokens == expected.original_input_tokens, (seed, compared)
        assert got.input_tokens == expected.input_tokens, (seed, compared)
        assert got.request == expected.request, (seed, compared)
        compared += 1
    return compared


@pytest.mark.parametrize(
    "server", SERVERS, ids=lambda s: f"{s.trigger_basis}-{s.min_result_tokens}"
)
def test_the_incremental_engine_edits_as_the_engine_does(server: ServerModel) -> None:
    compared = sum(_same(seed, server, shared=False) for seed in SEEDS)
    assert compared > 500


def test_inside_a_replay_memo_the_answers_are_the_same() -> None:
    with replay_memo():
        compared = sum(_same(seed, SERVERS[0], shared=True) for seed in SEEDS[:20])
    assert compared > 250


def test_the_generated_cases_clear_thin_and_compact() -> None:
    """The histories exercise what they are meant to: clearing, thinking, compaction views."""
    kinds: set[str] = set()
    views = 0
    for seed in SEEDS:
        for body in requests(seed):
            outcome = edit_as_server(body)
            kinds |= {e["type"] for e in outcome.applied_edits}
            views += len(outcome.request["messages"]) < len(body["messages"])
    assert kinds == {"clear_thinking_20251015", "clear_tool_uses_20250919"}
    assert views > 10


def test_a_request_that_extends_the_last_costs_what_it_adds() -> None:
    """After the first request, none is edited from scratch, and a clearing walks only the
    new messages (the 200th request adds two messages to 400)."""
    draw = random.Random(3)
    history = conversation(draw, 200, unanswered=0)
    editor = Editor()
    tool = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 3000}}
    for count in range(3, len(history) + 1, 2):
        body = {"model": "claude-sonnet-5", "messages": history[:count],
                "context_management": {"edits": [tool]}}  # fmt: skip
        assert editor.edit(body) == edit_as_server(body)
    assert editor.scratch == 0
    kept = editor._state.kept
    assert kept is not None and kept.at >= len(history) - 4


def test_the_cache_kept_between_requests_accounts_as_from_scratch() -> None:
    """`cache.Prefix`: the same usage and the same entries as the whole prompt every time."""
    compared, read = 0, 0
    now = [0.0]
    for seed in SEEDS[:24]:
        fresh, kept = PromptCache(lambda: now[0]), PromptCache(lambda: now[0])
        prefix, editor = Prefix(), Editor()
        for body in requests(seed):
            now[0] += random.Random(seed * 7 + compared).choice((1.0, 30.0, 400.0))
            edited = editor.edit(body).request
            if compared % 3 == 0:
                edited["cache_control"] = MARKER  # the automatic breakpoint
            model = str(body["model"])
            usage = kept.account(edited, model, prefix)
            assert usage == fresh.account(edited, model), seed
            read += usage.cache_read_input_tokens
            compared += 1
        assert kept._entries == fresh._entries
    assert compared > 300 and read > 0


def test_the_markers_counted_between_requests_are_the_breakpoints() -> None:
    """`cache.MarkerCount` against `breakpoints` on the whole request."""
    compared = 0
    for seed in SEEDS[:12]:
        markers = MarkerCount()
        for body in requests(seed):
            sent = json.loads(json.dumps(body))
            if compared % 4 == 0:
                sent["cache_control"] = MARKER
            if compared % 5 == 0 and len(sent["messages"]) > 3:  # markers further back too
                block = sent["messages"][-3]["content"]
                if isinstance(block, list) and block:
                    block[0]["cache_control"] = MARKER
            whole = len(breakpoints(sent, request_positions(sent)))
            assert markers.count(sent) == whole, seed
            compared += 1
    assert compared > 150


def test_theshared_messages_are_found_by_identity_or_equality() -> None:
    """`cache.shared_messages`: the longest common prefix whatever mix of the same objects,
    equal copies and changed messages the two hold."""
    draw = random.Random(5)
    for _ in range(300):
        before = [{"role": "user", "content": str(draw.randint(0, 3))} for _ in range(20)]
        now = [m if draw.random() < 0.7 else dict(m) for m in before[: draw.randint(0, 20)]]
        if now and draw.random() < 0.6:
            now[draw.randrange(len(now))] = {"role": "user", "content": "changed"}
        expected = next(
            (i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b),
            min(len(before), len(now)),
        )
        assert shared_messages(before, now) == expected


def test_going_back_past_a_committed_clearing_undoes_only_what_it_forgets() -> None:
    """A request that goes back (a breakpoint held further back, a fork) forgets the clearings
    of the pairs it drops, one by one; the clearings before them stay as they were (the same
    objects), not rebuilt from the whole history on every such request."""
    draw = random.Random(11)
    history = conversation(draw, 120, unanswered=0)
    tool = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 800},
            "keep": {"type": "tool_uses", "value": 1}}  # fmt: skip
    editor = Editor()
    ends = [i + 1 for i, m in enumerate(history) if m["role"] == "user" and i]
    kept, rebuilt = 0, 0
    for step, count in enumerate(ends[20:]):
        sent = count if step % 2 == 0 else max(ends[0], count - 9)  # every other one goes back
        body = {"model": "claude-sonnet-5", "messages": json.loads(json.dumps(history[:sent])),
                "context_management": {"edits": [tool]}}  # fmt: skip
        received, before = list(editor._state.messages), list(editor._state.edited)
        assert editor.edit(body) == edit_as_server(json.loads(json.dumps(body)))
        after = editor._state.edited
        for i in range(min(len(before), len(after), sent - 12)):  # well before the cut
            if before[i] is not received[i]:  # a committed clearing
                kept += after[i] is before[i]
                rebuilt += after[i] is not before[i]
    assert editor.scratch == 0
    assert kept > 2000 and rebuilt < kept / 100  # rebuilding all of them: about as many


def test_going_back_past_clearings_after_a_summary_counts_what_they_freed() -> None:
    """Undoing committed clearings gives their freed tokens back to each message's tally: the
    compaction view counts the prompt after the last summary from that tally, so a request
    that goes back and then on again must report the tokens the engine counts from scratch."""
    draw = random.Random(5)
    history = conversation(draw, 40, unanswered=0)
    summary = {"type": "compaction", "content": _text(draw, 20, 30)}
    history[1] = {"role": "assistant", "content": [summary, {"type": "text", "text": "ok"}]}
    tool = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 800},
            "keep": {"type": "tool_uses", "value": 1}}  # fmt: skip
    compact = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 900_000}}
    editor = Editor()
    ends = [i + 1 for i, m in enumerate(history) if m["role"] == "user" and i]
    reverted = 0
    for step, count in enumerate(ends[10:]):
        sent = count if step % 3 else max(ends[2], count - 9)  # every third one goes back
        body = {"model": "claude-sonnet-5", "messages": json.loads(json.dumps(history[:sent])),
                "context_management": {"edits": [tool, compact]}}  # fmt: skip
        logged = len(editor._state.log)
        got = editor.edit(body)
        expected = edit_as_server(json.loads(json.dumps(body)))
        assert (got.input_tokens, got.original_input_tokens) == (
            expected.input_tokens,
            expected.original_input_tokens,
        ), step
        assert got.request == expected.request, step
        reverted += len(editor._state.log) < logged
    assert editor.scratch == 0 and reverted > 3  # the undo path ran, not a fresh start
