"""The probe's requests: built so that each open server rule shows in `applied_edits`.

Every request is a whole, made-up tool-use history (the API accepts any well-formed history),
so the probe needs no cooperation from the model except in the last step. Sizes are in
agentctl's estimator units; `scaled` moves the token thresholds to the server's units with the
factor measured by the first step (against the emulator it is exactly 1).
- "size": the first basis history without edits; its billed input tokens give the factor.
- "keep": five large results, then two one-line results; trigger on tool uses, keep 4. Every
  result counts: 3 cleared; only large ones count: 1 cleared.
- "basis-1".."basis-4": the same conversation after 3..6 large results, keep 1, an input-token
  trigger between the edited and the unedited prompt on request 2 and 4: the "unedited" server
  clears one more each request (2, 3, 4, 5), the "edited" one in batches (2, 2, 4, 4).
  "basis-2b" is basis-2 plus one one-line result: 4 cleared (unedited), 3 (unedited, only
  large results count) or 2 (edited). A cache breakpoint on the last message shows how much
  each request reads from the cache: where basis-2b clears what basis-2 did, it reads
  basis-2's prompt from the cache.
- "quote": two of three large results cleared; the model is asked to quote the first one
  verbatim, i.e. the placeholder it sees.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agentctl.context.edits import BETA_CONTEXT_MANAGEMENT

DEFAULT_PROBE_MODEL = "claude-haiku-5-5"
QUOTE_PROMPT = "Quote the tool result {id} verbatim: reply with its exact content and nothing else."
ACK_PROMPT = "Reply with the single word OK."
BASIS_ROUNDS = (3, 4, 5, 6)
BASIS_TRIGGER = 7_300  # estimator units; see test_probe_script for the margins
LARGE_LINES = 90
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
    """A large, varied tool result (about 2,600 estimated tokens)."""
    return "\n".join(
        f"Record {index}.{line}: station {(index * 7 + line) % 13} measured {line * 37 % 101}"
        f" units of flow at hour {line % 24}, status nominal."
        for line in range(LARGE_LINES)
    )


def small_result(index: int) -> str:
    """A one-line tool result (about 17 estimated tokens)."""
    return f"Saved note {index}: the station log was archived; nothing else changed today."


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


def probe_steps(model: str = DEFAULT_PROBE_MODEL) -> list[Step]:
    """The probe's requests, in the order they are sent."""
    size = _basis(model, BASIS_ROUNDS[0])
    del size["context_management"]
    keep = _request(model, history([large_result(i) for i in range(5)]
                                   + [small_result(5), small_result(6)], ACK_PROMPT))  # fmt: skip
    keep["context_management"] = _edit({"type": "tool_uses", "value": 1}, 4)
    quote = _request(
        model, history([large_result(i) for i in range(3)], QUOTE_PROMPT.format(id=tool_id(0))), 200
    )
    quote["context_management"] = _edit({"type": "tool_uses", "value": 1}, 1)
    basis = [Step(f"basis-{n + 1}", _basis(model, r)) for n, r in enumerate(BASIS_ROUNDS)]
    basis.insert(2, Step("basis-2b", _basis(model, BASIS_ROUNDS[1], small=1)))
    return [Step("size", size), Step("keep", keep), *basis, Step("quote", quote)]


def scaled(request: dict[str, Any], factor: float) -> dict[str, Any]:
    """The request with its input-token triggers in the server's units (x factor)."""
    out = copy.deepcopy(request)
    for edit in (out.get("context_management") or {}).get("edits") or []:
        trigger = edit.get("trigger") or {}
        if trigger.get("type") == "input_tokens":
            trigger["value"] = max(1, round(trigger["value"] * factor))
    return out
