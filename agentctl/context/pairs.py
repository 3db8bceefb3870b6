"""Tool uses paired with their results, and what clearing one pair would change and free."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentctl.context.memo import remembered
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.context.tokens import estimate_block_tokens, estimate_text_tokens

# What a cleared tool_use.input becomes: not public; ours: an empty object, still
# valid JSON for the tool's `input` field.
DEFAULT_CLEARED_INPUT_PLACEHOLDER: dict[str, Any] = {}

TOOL_USE_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")


@dataclass
class Pair:
    """A tool use and, when present, the block that answers it (same id)."""

    use: dict[str, Any]
    result: dict[str, Any] | None = None
    ready_at: int = 0  # index of the message holding the result (of the use while unanswered)


def tool_pairs(messages: list[dict[str, Any]]) -> list[Pair]:
    """Tool uses in chronological order, each with its result (next user message for client
    tools, the same assistant message for server tools)."""
    pairs: dict[str, Pair] = {}
    order: list[Pair] = []
    for index, message in enumerate(messages):
        for is_use, key, block in remembered(
            "tool-blocks", message, partial(_tool_blocks, message)
        ):
            if is_use:
                pair = Pair(block, ready_at=index)
                pairs[key] = pair
                order.append(pair)
            else:
                found = pairs.get(key)
                if found is not None and found.result is None:
                    found.result, found.ready_at = block, index
    return order


def _tool_blocks(message: Mapping[str, Any]) -> list[tuple[bool, str, dict[str, Any]]]:
    """The message's tool uses (True, id, block) and tool results (False, tool_use_id, block),
    in order: what `tool_pairs` reads of it."""
    out: list[tuple[bool, str, dict[str, Any]]] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = str(block.get("type"))
        if kind in TOOL_USE_TYPES and message.get("role") == "assistant":
            out.append((True, str(block.get("id")), block))
        elif (kind == "tool_result" or kind.endswith("_tool_result")) and "tool_use_id" in block:
            out.append((False, str(block["tool_use_id"]), block))
    return out


def candidates(
    pairs: list[Pair], edit: Mapping[str, Any], server: ServerModel = DEFAULT_SERVER_MODEL
) -> list[Pair]:
    """The pairs a clear_tool_uses edit may clear, which are the ones that count toward
    `keep`: all but those of `exclude_tools`, those whose result is under the server model's
    small-result line (an unanswered use has no result: size 0), and those that clearing
    would not shrink (the cookbook's saved runs: such results neither count nor clear)."""
    excluded = set(edit.get("exclude_tools") or ())
    line = estimate_text_tokens(server.placeholder)
    return [
        p
        for p in pairs
        if str(p.use.get("name", "")) not in excluded
        and _counts(p, server, line)
        and freed_tokens(p, edit, server.placeholder) > 0
    ]


def _counts(pair: Pair, server: ServerModel, line: int) -> bool:
    """Whether the pair's result is over the server model's small-result line."""
    result = pair.result
    if result is None:
        return server.counts(0, line)
    held = remembered(
        "counts", result, lambda: server.counts(result_tokens(pair), line),
        server.min_result_tokens, line,
    )  # fmt: skip
    return held


def result_tokens(pair: Pair) -> int:
    """Tokens of the result's content alone (its framing excluded); 0 when unanswered."""
    result = pair.result
    if result is None:
        return 0
    return estimate_block_tokens(result) - estimate_block_tokens(replaced(result, "content", ""))


def replaced(block: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of `block` with `key` set to `value`; in a replay (`context.memo`) the same
    copy every time, so what is computed on it is computed once."""
    frozen = json.dumps(value, sort_keys=True)
    return remembered("replaced", block, lambda: {**block, key: value}, key, frozen)


def _clears_input(edit: Mapping[str, Any], name: str) -> bool:
    flag = edit.get("clear_tool_inputs")
    if isinstance(flag, list | tuple):
        return name in flag
    return bool(flag)


Change = tuple[dict[str, Any], str, Any, int]  # (block, key, new value, tokens freed)


def pair_changes(pair: Pair, edit: Mapping[str, Any], placeholder: str) -> list[Change]:
    """What clearing this pair would change; a part is left alone unless it shrinks (ours:
    a result already shorter than the placeholder, or already cleared, stays as it is)."""
    inputs = _clears_input(edit, str(pair.use.get("name", "")))
    result = pair.result
    held = remembered(
        "changes", pair.use, lambda: (result, _changes(pair, inputs, placeholder)),
        id(result), inputs, placeholder,
    )  # fmt: skip
    return list(held[1])


def _changes(pair: Pair, inputs: bool, placeholder: str) -> list[Change]:
    wanted: list[tuple[dict[str, Any], str, Any]] = []
    if pair.result is not None:  # tool_use_id and is_error stay (ours)
        wanted.append((pair.result, "content", placeholder))
    if inputs:
        wanted.append((pair.use, "input", dict(DEFAULT_CLEARED_INPUT_PLACEHOLDER)))
    changes: list[Change] = []
    for block, key, value in wanted:
        freed = estimate_block_tokens(block) - estimate_block_tokens(replaced(block, key, value))
        if freed > 0:
            changes.append((block, key, value, freed))
    return changes


def freed_tokens(pair: Pair, edit: Mapping[str, Any], placeholder: str) -> int:
    """Tokens clearing this pair would free (0 when it would change nothing)."""
    inputs = _clears_input(edit, str(pair.use.get("name", "")))
    result = pair.result
    held = remembered(
        "freed", pair.use,
        lambda: (result, sum(change[3] for change in _changes(pair, inputs, placeholder))),
        id(result), inputs, placeholder,
    )  # fmt: skip
    return held[1]
