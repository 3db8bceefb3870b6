"""Prompt-cache accounting on hand-computed prompts (the prompt-caching docs).

Sizes: a system block of text worth n tokens costs 2 + n; a user text message 4 + 2 + n
(`words(n)` writes such a text: N one-letter words are N + N // 10 tokens).
claude-sonnet-5 caches prefixes from 1,024 tokens (C.3).
"""

from __future__ import annotations

from typing import Any

from agentctl.context.cache import CacheUsage, PromptCache, validate_cache_control
from agentctl.context.engine import apply_context_edits
from agentctl.context.tokens import estimate_request_tokens

MODEL = "claude-sonnet-5"
EPHEMERAL = {"type": "ephemeral"}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def words(tokens: int, letter: str = "w") -> str:
    """A text of exactly `tokens` estimated tokens (N words cost N + N // 10)."""
    count = next(n for n in range(tokens + 1) if n + n // 10 == tokens)
    return f"{letter} " * count


def user(tokens: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": words(tokens)}]}


def request(
    system_words: int = 1998, turns: list[int] | None = None, auto: bool = True, **extra: Any
) -> dict[str, Any]:
    """System of 2 + words tokens (2,000 by default) with a breakpoint, then user turns."""
    system = [{"type": "text", "text": words(system_words, "s"), "cache_control": EPHEMERAL}]
    body: dict[str, Any] = {"model": MODEL, "system": system}
    body["messages"] = [user(n) for n in turns or []]
    if auto:
        body["cache_control"] = EPHEMERAL
    return {**body, **extra}


def usage(inp: int, write: int, read: int, w5: int | None = None, w1: int = 0) -> CacheUsage:
    return CacheUsage(inp, write, read, write if w5 is None else w5, w1)


def test_first_request_writes_second_reads() -> None:
    cache = PromptCache(FakeClock())
    body = request(turns=[94])  # 2000 + 100
    assert cache.account(body, MODEL) == usage(0, 2100, 0)
    assert cache.account(body, MODEL) == usage(0, 0, 2100)


def test_growth_writes_only_the_delta() -> None:
    cache = PromptCache(FakeClock())
    cache.account(request(turns=[94]), MODEL)
    assert cache.account(request(turns=[94, 44]), MODEL) == usage(0, 50, 2100)


def test_without_auto_breakpoint_the_tail_is_input() -> None:
    cache = PromptCache(FakeClock())
    assert cache.account(request(turns=[94], auto=False), MODEL) == usage(100, 2000, 0)
    assert cache.account(request(turns=[94, 44], auto=False), MODEL) == usage(150, 0, 2000)


def test_markers_do_not_change_the_key_or_the_count() -> None:
    cache = PromptCache(FakeClock())
    cache.account(request(turns=[94]), MODEL)
    moved = request(turns=[94], auto=False)
    moved["messages"][0]["content"][0]["cache_control"] = EPHEMERAL
    assert cache.account(moved, MODEL) == usage(0, 0, 2100)


def test_ttl_expires_and_reads_refresh_it() -> None:
    clock = FakeClock()
    cache = PromptCache(clock)
    cache.account(request(turns=[94]), MODEL)
    clock.now += 299
    assert cache.account(request(turns=[94]), MODEL).cache_read_input_tokens == 2100
    clock.now += 299  # 598 s after the write, 299 after the refreshing read
    assert cache.account(request(turns=[94]), MODEL).cache_read_input_tokens == 2100
    clock.now += 301
    assert cache.account(request(turns=[94]), MODEL) == usage(0, 2100, 0)


def test_one_hour_entries_outlive_five_minute_ones() -> None:
    clock = FakeClock()
    cache = PromptCache(clock)
    body = request(turns=[94], cache_control={"type": "ephemeral", "ttl": "1h"})
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert cache.account(body, MODEL) == usage(0, 2100, 0, w5=0, w1=2100)
    clock.now += 3000
    assert cache.peek(body, MODEL).cache_read_input_tokens == 2100


def test_write_split_by_ttl_per_breakpoint() -> None:
    cache = PromptCache(FakeClock())
    body = request(turns=[94])
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert cache.account(body, MODEL) == usage(0, 2100, 0, w5=100, w1=2000)


def test_below_minimum_nothing_is_written() -> None:
    cache = PromptCache(FakeClock())
    short = request(system_words=498, turns=[94])  # 500 + 100 < 1024
    assert cache.account(short, MODEL) == usage(600, 0, 0)
    assert cache.account(short, MODEL) == usage(600, 0, 0)
    assert cache.account(short, "claude-opus-5-5") == usage(0, 600, 0)  # min 512


def test_prefix_below_minimum_rolls_into_the_next_breakpoint() -> None:
    cache = PromptCache(FakeClock())
    body = request(system_words=498, turns=[994])  # system 500 (too short), total 1500
    assert cache.account(body, MODEL) == usage(0, 1500, 0)


def clear_edit(**extra: Any) -> dict[str, Any]:
    trigger = {"type": "input_tokens", "value": 0}
    return {"type": "clear_tool_uses_20250919", "trigger": trigger, **extra}


def tool_session(names: list[str]) -> dict[str, Any]:
    """2,000-token system, then rounds of tool use; automatic caching on the last block."""
    messages: list[dict[str, Any]] = [user(9)]
    for i, name in enumerate(names):
        use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": {"path": f"/{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * 300}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return {**request(), "messages": messages}


def test_first_clearing_falls_back_to_the_system_entry() -> None:
    cache = PromptCache(FakeClock())
    sizes = []
    for n in range(1, 7):
        body = tool_session(["read"] * n)
        sizes.append(estimate_request_tokens(body))
        assert cache.account(body, MODEL).cache_read_input_tokens == ([0, *sizes][-2])
    cleared = apply_context_edits(tool_session(["read"] * 7), [clear_edit()])
    got = cache.account(cleared.request, MODEL)
    # Every request entry includes t0's result, which changed: only the system entry is left.
    assert got == usage(0, cleared.input_tokens - 2000, 2000)


def test_clearing_in_the_middle_reads_up_to_the_first_changed_block() -> None:
    cache = PromptCache(FakeClock())
    body = tool_session(["memory", "memory", "read", "read", "read", "read"])
    for index in (4, 8):  # explicit breakpoints on the results of t1 and t3
        body["messages"][index]["content"][0]["cache_control"] = EPHEMERAL
    first = cache.account(body, MODEL)
    assert first.cache_creation_input_tokens == estimate_request_tokens(body)
    edit = clear_edit(keep={"type": "tool_uses", "value": 2}, exclude_tools=["memory"])
    cleared = apply_context_edits(body, [edit])
    assert cleared.applied_edits[0]["cleared_tool_uses"] == 2  # t2 and t3
    up_to_t1 = estimate_request_tokens({**body, "messages": body["messages"][:5]})
    got = cache.account(cleared.request, MODEL)
    assert got == usage(0, cleared.input_tokens - up_to_t1, up_to_t1)


def test_lookback_reaches_20_positions_and_no_further() -> None:
    cache = PromptCache(FakeClock())
    cache.account(request(turns=[94]), MODEL)  # entries after system and after turn 1
    near = request(turns=[94] + [4] * 20)  # last block is 20 positions after the entry
    assert cache.peek(near, MODEL).cache_read_input_tokens == 2100
    far = request(turns=[94] + [4] * 21)
    assert cache.peek(far, MODEL).cache_read_input_tokens == 2000  # via the system breakpoint


def test_changing_tools_invalidates_everything_thinking_only_messages() -> None:
    cache = PromptCache(FakeClock())
    cache.account(request(turns=[94]), MODEL)
    thinking = request(turns=[94], thinking={"type": "enabled", "budget_tokens": 1024})
    assert cache.peek(thinking, MODEL).cache_read_input_tokens == 2000
    tool = {"name": "t", "input_schema": {}}
    with_tool = request(turns=[94], tools=[tool])
    assert cache.peek(with_tool, MODEL).cache_read_input_tokens == 0
    assert cache.peek(request(turns=[94]), "claude-opus-5").cache_read_input_tokens == 0


def test_at_most_four_breakpoints() -> None:
    cache = PromptCache(FakeClock())
    body = request(turns=[94, 4, 4, 4])  # system + 3 explicit + automatic = 5
    for message in body["messages"][:3]:
        message["content"][0]["cache_control"] = EPHEMERAL
    message = "A maximum of 4 blocks with cache_control may be provided. Found 5."
    assert validate_cache_control(body) == message
    assert validate_cache_control(request(turns=[94])) is None
    got = cache.account(body, MODEL)
    assert got == usage(10, 2120, 0)  # the fifth (automatic) breakpoint is ignored
    assert len(cache) == 4


def test_input_plus_cache_equals_the_estimate() -> None:
    cache = PromptCache(FakeClock())
    for turns in ([94], [94, 44], [94, 44, 3]):
        body = request(turns=turns, auto=len(turns) != 2)
        got = cache.account(body, MODEL)
        total = got.input_tokens + got.cache_creation_input_tokens + got.cache_read_input_tokens
        assert total == estimate_request_tokens(body)
        assert got.ephemeral_5m_input_tokens + got.ephemeral_1h_input_tokens == (
            got.cache_creation_input_tokens
        )


def test_expired_entries_are_dropped_so_the_cache_stays_bounded() -> None:
    """Every request writes new entries; those past their TTL are forgotten, so a long run
    holds about a TTL's worth of them, not every entry it ever wrote."""
    from agentctl.context.cache import PromptCache

    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    marker = {"type": "ephemeral"}
    held = []
    for turn in range(400):
        text = f"turn {turn} " + "word " * 1200
        body = {"messages": [{"role": "user", "content": [
            {"type": "text", "text": text, "cache_control": marker}]}]}  # fmt: skip
        cache.account(body, "claude-sonnet-5")
        held.append(cache.held)
        now[0] += 10.0  # 10 s a turn: a 5-minute entry lives 30 turns
    assert held[10] == 11 and max(held) <= 31 and held[-1] == 30
    # A read refreshes: the refreshed entry outlives its first expiry.
    body = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "again " * 1200, "cache_control": marker}]}]}  # fmt: skip
    cache.account(body, "claude-sonnet-5")
    now[0] += 200.0
    assert cache.account(body, "claude-sonnet-5").cache_read_input_tokens > 0
    now[0] += 200.0
    assert cache.account(body, "claude-sonnet-5").cache_read_input_tokens > 0
