"""The probe's requests: built so that each open server rule shows in `applied_edits`.

Every request is a whole, made-up tool-use history (the API accepts any well-formed history),
so the probe needs no cooperation from the model except in the last step. Sizes are in
agentctl's estimator units; `scaled` moves the token thresholds to the server's units with the
factor measured by the first step (against the emulator it is exactly 1).
- "size": the first basis history without edits; its billed input tokens give the factor.
- "ladder": a ladder of results of 1 to 190 estimated tokens, then three large ones; trigger
  on tool uses, keep 3. Results that count toward keep are cleared (the large ones are the
  three kept), so the number cleared says which sizes count: the small-result line.
- "ladder-again": the same request once more, right after its clearing, with the cache
  breakpoint on the same block: what it reads from the cache says whether a cleared prompt
  is cached and read back.
- "basis-1".."basis-4": the same conversation after 3..6 large results, keep 1, an input-token
  trigger between the edited and the unedited prompt on request 2 and 4: the "unedited" server
  clears one more each request (2, 3, 4, 5), the "edited" one in batches (2, 2, 4, 4).
  "basis-2b" is basis-2 plus one one-line result: 4 cleared (unedited), 3 (unedited, only
  large results count) or 2 (edited). A cache breakpoint on the last message shows how much
  each request reads from the cache: where basis-2b clears what basis-2 did, it reads
  basis-2's prompt from the cache.
- "quote": two of three large results cleared; the model is asked to quote the first one
  verbatim, i.e. the placeholder it sees.
- "think-1".."think-5": a plain conversation with thinking on, each request answering one more
  question, with clear_thinking and no `keep`; each history holds the earlier replies as the
  server sent them (signed thinking), so `cleared_thinking_turns` on 0..4 earlier thinking
  turns gives the default keep. Their histories are filled in as the replies arrive (`resolve`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agentctl.context.edits import BETA_CONTEXT_MANAGEMENT
from agentctl.context.tokens import estimate_text_tokens

DEFAULT_PROBE_MODEL = "claude-haiku-5-5"
QUOTE_PROMPT = "Quote the tool result {id} verbatim: reply with its exact content and nothing else."
BASIS_ROUNDS = (3, 4, 5, 6)
BASIS_TRIGGER = 7_300  # estimator units; see tests/probe/test_steps.py for the margins
LARGE_LINES = 90
# Words in each result of the ladder; `LADDER` is their sizes in estimated tokens of content,
# the unit of the server model's small-result line (`min_result_tokens`).
LADDER_WORDS = (*range(1, 20), 22, 27, 35, 42, 49, 64, 82, 107, 136, 173)
LADDER_KEEP = 3
THINK_STEPS = 5
THINK_PROMPT = "Reply with the single word OK. (question {n})"
THINKING_BUDGET = 1024
THINKING: dict[str, Any] = {"type": "enabled", "budget_tokens": THINKING_BUDGET}
WORDS = ("station", "log", "entry", "flow", "valve", "north", "pump", "reading", "checked", "ok")
TOOL = {
    "name": "read_file",
    "description": "Read a text file from the project.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
SYSTEM = "You are helping to test a tool-use conversation. Follow the last instruction exactly."


@dataclass(frozen=True)
class Step:
    """One probe request (thresholds in estimator units) and what it is for."""

    name: str
    request: dict[str, Any]


def large_result(index: int) -> str:
    """A large, varied tool result (about 1,500 estimated tokens)."""
    return "\n".join(
        f"Record {index}.{line}: station {(index * 7 + line) % 13} measured {line * 37 % 101}"
        f" units of flow at hour {line % 24}, status nominal."
        for line in range(LARGE_LINES)
    )


def small_result(index: int) -> str:
    """A one-line tool result (about 25 estimated tokens)."""
    return f"Saved note {index}: the station log was archived; nothing else changed today."


def _words(count: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(count))


LADDER = tuple(estimate_text_tokens(_words(n)) for n in LADDER_WORDS)
_RUNGS = dict(zip(LADDER, LADDER_WORDS, strict=True))


def rung_result(tokens: int) -> str:
    """A result whose content is `tokens` estimated tokens (a size of `LADDER`)."""
    return _words(_RUNGS[tokens])


def history(results: list[str], last_text: str = "") -> list[dict[str, Any]]:
    """A task, one read_file round per result, and `last_text` (if any) after the last one."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Read the station logs one by one."}
    ]
    for index, text in enumerate(results):
        use = {"type": "tool_use", "id": tool_id(index), "name": "read_file",
               "input": {"path": f"logs/station-{index}.txt"}}  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": tool_id(index), "content": text}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    if last_text:
        messages[-1]["content"].append({"type": "text", "text": last_text})
    return messages


def tool_id(index: int) -> str:
    return f"toolu_probe_{index:02d}"


def _request(model: str, messages: list[dict[str, Any]], max_tokens: int = 8) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": SYSTEM,
        "tools": [TOOL],
        "messages": messages,
        "betas": [BETA_CONTEXT_MANAGEMENT],
    }


def _edit(trigger: dict[str, Any], keep: int) -> dict[str, Any]:
    clear = {"type": "clear_tool_uses_20250919", "trigger": trigger,
             "keep": {"type": "tool_uses", "value": keep}}  # fmt: skip
    return {"edits": [clear]}


def _basis(model: str, rounds: int, small: int = 0) -> dict[str, Any]:
    results = [large_result(i) for i in range(rounds)]
    # No closing text: a later step's history then starts with this one, block for block, so
    # the cache can serve it (the breakpoint sits on the last tool result).
    messages = history(results + [small_result(rounds + i) for i in range(small)])
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    request = _request(model, messages)
    request["context_management"] = _edit({"type": "input_tokens", "value": BASIS_TRIGGER}, 1)
    return request


def _ladder(model: str) -> dict[str, Any]:
    rungs = [rung_result(n) for n in LADDER]
    messages = history(rungs + [large_result(i) for i in range(LADDER_KEEP)])
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    request = _request(model, messages)
    request["context_management"] = _edit({"type": "tool_uses", "value": 1}, LADDER_KEEP)
    return request


def _think(model: str, n: int) -> dict[str, Any]:
    """Question n with n - 1 earlier answers; each answer stands in until `resolve` fills it."""
    messages: list[dict[str, Any]] = []
    for index in range(1, n + 1):
        if index > 1:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "OK"}]})
        messages.append({"role": "user", "content": THINK_PROMPT.format(n=index)})
    request = _request(model, messages, max_tokens=THINKING_BUDGET + 64)
    del request["tools"]
    request["thinking"] = dict(THINKING)
    request["context_management"] = {"edits": [{"type": "clear_thinking_20251015"}]}
    return request


def resolve(step: Step, replies: dict[str, list[dict[str, Any]]]) -> Step:
    """The step with its earlier answers as the server sent them (think-N: the replies of
    think-1..think-N-1); every other step as it is."""
    if not step.name.startswith("think-"):
        return step
    request = copy.deepcopy(step.request)
    answers = [m for m in request["messages"] if m["role"] == "assistant"]
    for index, message in enumerate(answers, start=1):
        message["content"] = copy.deepcopy(replies[f"think-{index}"])
    return Step(step.name, request)


def probe_steps(model: str = DEFAULT_PROBE_MODEL) -> list[Step]:
    """The probe's requests, in the order they are sent."""
    size = _basis(model, BASIS_ROUNDS[0])
    del size["context_management"]
    ladder = _ladder(model)
    quote = _request(
        model, history([large_result(i) for i in range(3)], QUOTE_PROMPT.format(id=tool_id(0))), 200
    )
    quote["context_management"] = _edit({"type": "tool_uses", "value": 1}, 1)
    basis = [Step(f"basis-{n + 1}", _basis(model, r)) for n, r in enumerate(BASIS_ROUNDS)]
    basis.insert(2, Step("basis-2b", _basis(model, BASIS_ROUNDS[1], small=1)))
    think = [Step(f"think-{n}", _think(model, n)) for n in range(1, THINK_STEPS + 1)]
    return [
        Step("size", size),
        Step("ladder", ladder),
        Step("ladder-again", copy.deepcopy(ladder)),
        *basis,
        Step("quote", quote),
        *think,
    ]


def scaled(request: dict[str, Any], factor: float) -> dict[str, Any]:
    """The request with its input-token triggers in the server's units (x factor)."""
    out = copy.deepcopy(request)
    for edit in (out.get("context_management") or {}).get("edits") or []:
        trigger = edit.get("trigger") or {}
        if trigger.get("type") == "input_tokens":
            trigger["value"] = max(1, round(trigger["value"] * factor))
    return out
