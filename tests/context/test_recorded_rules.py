"""The clearing rules as real recorded exchanges settle them, each replayed through the engine.

Each test builds the history a recording describes, applies the server's edits under the
default server model and compares with the `applied_edits` the real API returned:
- the context-runtime live probe's clear_thinking request (claude-opus-5-5, keep 1), as sent;
- the memory cookbook's session 3 (keep 1): 1 thinking turn cleared with one earlier turn
  holding thinking, 2 with two;
- the context-engineering cookbook's saved "clearing" run (trigger 30k, keep 4,
  clear_at_least 10k): 0, 0, 4, 4, 4, 4 cleared while 36-character results kept arriving;
- its "all-three" run (trigger 200k, keep 6, memory excluded, a compaction at turn 5): 2
  cleared on turns 5-9, 4 from turn 10 after two 56- and 59-character results, still 4 on
  turn 11 after two more.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentctl.context.engine import apply_context_edits, edit_as_server
from agentctl.context.pairs import Pair, result_tokens
from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    LEGACY_ALIASES,
    PRESETS,
    SERVER_MODELS,
    ServerModel,
)
from agentctl.context.tokens import estimate_text_tokens

# --- clear_thinking: the live probe's request, as sent ---------------------------------------

THOUGHT_1 = (
    "Counting primes below 20 gives 8 of them, so I need the 8th Greek letter, which is theta.\n\n"
)
TASK = (
    "First work out the key: it is the lowercase English name of the Greek letter whose "
    "1-based position in the Greek alphabet equals the number of primes below 20. Then call "
    "the lookup tool with that key. Afterwards compute (value * 17 + 3) mod 23, showing the "
    "arithmetic in one line."
)
THOUGHT_2 = "Computing 41*17+3, getting 700, then finding 700 mod 23 gives remainder 10.\n\n"


def _use(key: str, ident: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": "lookup", "input": {"key": key}}


def _answer(ident: str, value: str) -> dict[str, Any]:
    block = {
        "type": "tool_result",
        "tool_use_id": ident,
        "is_error": False,
        "content": [{"type": "text", "text": value}],
    }
    return {"role": "user", "content": [block]}


PROBE_REQUEST: dict[str, Any] = {
    "model": "claude-opus-5-5",
    "max_tokens": 4096,
    "thinking": {"type": "adaptive"},
    "system": [
        {
            "type": "text",
            "text": "You are a terse probe assistant. When asked for a key's "
            "value, call the lookup tool; never guess values.",
        }
    ],
    "tools": [
        {
            "name": "lookup",
            "description": "Look up the integer value stored under a key.",
            "input_schema": {
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
            },
        }
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": TASK,
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": THOUGHT_1, "signature": "CAQS/AQKEAgSGAI4" * 54},
                {
                    "type": "text",
                    "text": "Primes below 20: 2, 3, 5, 7, 11, 13, 17, 19. That makes 8, "
                    "and the 8th Greek letter is theta.",
                },
                _use("theta", "toolu_1"),
            ],
        },
        _answer("toolu_1", "41"),
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": THOUGHT_2, "signature": "CAQShAUKEAgSGAI4" * 54},
                {
                    "type": "text",
                    "text": 'The key is "theta" and its value is 41.\n\n41 × 17 + 3 = '
                    "697 + 3 = 700; 700 mod 23 = 700 − 690 = **10**",
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Now look up key 'beta' and apply the same formula."}
            ],
        },
        {"role": "assistant", "content": [_use("beta", "toolu_2")]},
        _answer("toolu_2", "7"),
    ],
}
KEEP_ONE = {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}


def test_keep_one_thinking_turn_counts_the_turn_being_answered() -> None:
    """Recorded: `cleared_thinking_turns: 2, cleared_input_tokens: 44`; the billed input fell
    from 847 to 737 (110: the per-block framing and signatures go too, unreported)."""
    out = apply_context_edits(PROBE_REQUEST, [KEEP_ONE])
    (edit,) = out.applied_edits
    assert edit["cleared_thinking_turns"] == 2
    text = estimate_text_tokens(THOUGHT_1) + estimate_text_tokens(THOUGHT_2)
    assert edit["cleared_input_tokens"] == text
    drop = out.original_input_tokens - out.input_tokens
    assert drop > text  # the framing goes too, unreported
    assert abs(drop - 110) <= 0.05 * 110  # the estimator's reading of the billed 110
    kept = [b["type"] for m in out.request["messages"] for b in m["content"]]
    assert "thinking" not in kept


def _memory_session(thinking_turns: int) -> dict[str, Any]:
    """A memory-tool loop: each earlier assistant message thinks, views a memory file and gets
    its contents; the request answers the last (thinking-free) view."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Review this code again."}]
    for i in range(thinking_turns):
        think = {
            "type": "thinking",
            "thinking": f"Check memory for patterns {i}.",
            "signature": "s",
        }
        view = {
            "type": "tool_use",
            "id": f"m{i}",
            "name": "memory",
            "input": {"command": "view", "path": "/memories"},
        }
        messages.append({"role": "assistant", "content": [think, view]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"m{i}", "content": "notes.md 1.2K"}
                ],
            }
        )
    view = {
        "type": "tool_use",
        "id": "last",
        "name": "memory",
        "input": {"command": "view", "path": "/memories/notes.md"},
    }
    messages.append({"role": "assistant", "content": [view]})
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "last", "content": "1: race in cache"}
            ],
        }
    )
    return {
        "model": "claude-sonnet-4-5",
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": messages,
    }


@pytest.mark.parametrize("earlier", [1, 2])
def test_keep_one_clears_every_earlier_thinking_turn(earlier: int) -> None:
    out = apply_context_edits(_memory_session(earlier), [KEEP_ONE])
    assert [e["cleared_thinking_turns"] for e in out.applied_edits] == [earlier]


def test_keep_two_leaves_one_earlier_turn_and_the_answered_turn_keeps_its_thinking() -> None:
    keep_two = {**KEEP_ONE, "keep": {"type": "thinking_turns", "value": 2}}
    assert [
        e["cleared_thinking_turns"]
        for e in apply_context_edits(_memory_session(3), [keep_two]).applied_edits
    ] == [2]
    request = _memory_session(2)  # now the answered message thinks too (ours: it stays)
    request["messages"][-2]["content"].insert(
        0, {"type": "thinking", "thinking": "ok", "signature": "s"}
    )
    out = apply_context_edits(request, [KEEP_ONE])
    assert out.applied_edits[0]["cleared_thinking_turns"] == 2
    assert out.request["messages"][-2]["content"][0]["type"] == "thinking"


# --- the small-result line and the cookbook runs ---------------------------------------------

SMALL = "Finding #{n} recorded (session-local)."  # 36 characters for n < 10
SEARCH_56 = "Found 1 match(es):\n  notes/incident.md\n  -> cache misses"
SEARCH_59 = SEARCH_56 + " ok"


def _text_of(kind: str, n: int) -> str:
    sizes = {"L": 10_250, "M": 8_000, "B": 8_000 * 4}  # words of "alpha beta gamma delta "
    if kind in sizes:
        return "alpha beta gamma delta " * (sizes[kind] // 4)
    return {"S": SMALL.format(n=n % 10), "x": SEARCH_56, "y": SEARCH_59}[kind]


def _tokens(text: str) -> int:
    return result_tokens(Pair({}, {"type": "tool_result", "tool_use_id": "t", "content": text}))


def test_the_line_lies_between_the_recorded_small_and_counted_results() -> None:
    assert (len(SMALL.format(n=3)), len(SEARCH_56), len(SEARCH_59)) == (36, 56, 59)
    line = DEFAULT_SERVER_MODEL.min_result_tokens
    assert isinstance(line, int)
    assert _tokens(SMALL.format(n=3)) < line <= min(_tokens(SEARCH_56), _tokens(SEARCH_59))


class Run:
    """A tool loop's requests: each step adds an assistant message (its tool uses, memory
    views, text) and the user message with their results; after `compact()` the next reply
    (the answer to the last request) opens with a compaction block, as a threshold
    compaction's does."""

    def __init__(self, edits: list[dict[str, Any]]) -> None:
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "Research the logs."}]
        self.edits = edits
        self.count = 0
        self.summary: list[dict[str, Any]] = []

    def step(self, kinds: str, *, memory: int = 0, words: int = 0) -> dict[str, Any]:
        uses: list[dict[str, Any]] = self.summary
        self.summary = []
        uses += [{"type": "text", "text": "note " * words}] if words else []
        results = []
        for kind in kinds + "m" * memory:
            self.count += 1
            name = "memory" if kind == "m" else "read"
            ident = f"t{self.count}"
            uses.append({"type": "tool_use", "id": ident, "name": name, "input": {"n": ident}})
            text = "File created successfully at: /memories/notes.md" if kind == "m" else None
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": ident,
                    "content": text or _text_of(kind, self.count),
                }
            )
        self.messages += [
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ]
        return self.request()

    def compact(self) -> None:
        self.summary = [{"type": "compaction", "content": "<summary>the logs so far</summary>"}]

    def request(self) -> dict[str, Any]:
        return {
            "model": "claude-sonnet-4-6",
            "messages": self.messages,
            "context_management": {"edits": self.edits},
        }


def _cleared(request: dict[str, Any], server: ServerModel) -> int:
    applied = edit_as_server(request, server=server).applied_edits
    return sum(int(e["cleared_tool_uses"]) for e in applied if "cleared_tool_uses" in e)


CLEARING = [
    {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": 30_000},
        "keep": {"type": "tool_uses", "value": 4},
        "clear_at_least": {"type": "input_tokens", "value": 10_000},
    }
]


def _clearing_run(server: ServerModel) -> list[int]:
    """Four large reads (41k estimated tokens each), a finding, four more reads, then one
    finding per request."""
    run = Run(CLEARING)
    return [_cleared(run.step(kinds), server) for kinds in ("LLLL", "S", "LLLL", "S", "S", "S")]


def _all_three_run(server: ServerModel) -> list[int]:
    """Turns 1-5: two 8k reads, then six of 32k (the fifth request passes 200k), a memory
    note now and then, a compaction in the fifth reply; turns 6-9: a finding and 2.2k tokens
    of the model's text each; turn 10: the 56- and 59-character results; turn 11: two more."""
    run = Run(
        [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 200_000},
                "keep": {"type": "tool_uses", "value": 6},
                "exclude_tools": ["memory"],
            },
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 150_000}},
        ]
    )
    counts = [
        _cleared(run.step(k, memory=m), server)
        for k, m in (("MM", 1), ("BB", 0), ("BB", 1), ("B", 0), ("B", 1))
    ]
    run.compact()
    counts += [_cleared(run.step("S", words=2_200), server) for _ in range(4)]
    counts.append(_cleared(run.step("xy"), server))
    counts.append(_cleared(run.step("xy"), server))
    return counts


RECORDED_CLEARING = [0, 0, 4, 4, 4, 4]
RECORDED_ALL_THREE = [0, 0, 0, 0, 2, 2, 2, 2, 2, 4, 4]


def test_the_default_model_reproduces_the_cookbook_clearing_run() -> None:
    assert _clearing_run(DEFAULT_SERVER_MODEL) == RECORDED_CLEARING


def test_the_default_model_reproduces_the_cookbook_all_three_run_across_its_compaction() -> None:
    assert _all_three_run(DEFAULT_SERVER_MODEL) == RECORDED_ALL_THREE


def test_the_all_three_run_is_computed_on_the_whole_history_but_read_from_the_summary() -> None:
    run = Run([*CLEARING, {"type": "compact_20260112"}])
    run.step("LLLL")
    run.step("LLLL")
    run.compact()
    out = edit_as_server(run.step("S"))
    assert out.applied_edits[0]["cleared_tool_uses"] == 4  # results before the block
    assert out.request["messages"][0]["content"][0]["type"] == "compaction"
    assert out.input_tokens < 1_000  # the model reads the summary and what followed it


def test_every_open_alternative_the_recordings_rule_out_fails_one_run() -> None:
    every_result_counts = LEGACY_ALIASES["edited"]
    assert _clearing_run(every_result_counts) != RECORDED_CLEARING
    hundred_token_line = LEGACY_ALIASES["edited-large"]
    assert _clearing_run(hundred_token_line) == RECORDED_CLEARING
    assert _all_three_run(hundred_token_line) != RECORDED_ALL_THREE  # the 56/59 never count


def test_the_unedited_trigger_basis_clears_six_on_turn_eleven() -> None:
    """Why the edited basis is the default (not settled: a tokenizer that puts two of the
    four short results under the line would let the unedited basis give 4 too)."""
    unedited = PRESETS["unedited-basis"]
    assert _clearing_run(unedited) == RECORDED_CLEARING
    assert _all_three_run(unedited)[-1] == 6


def test_the_benchmark_variants_are_the_default_and_one_change_each() -> None:
    default, basis, line = SERVER_MODELS
    assert default is DEFAULT_SERVER_MODEL
    assert (basis.trigger_basis, basis.min_result_tokens) == ("unedited", default.min_result_tokens)
    assert (line.trigger_basis, line.min_result_tokens) == ("edited", "placeholder")
