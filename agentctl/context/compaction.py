"""Threshold compaction (`compact_20260112`) as pure functions on request dicts.

Shared by the offline emulator and the what-if simulator. What the docs state [DOC]: the
server ignores every block before the last `compaction` block; when the prompt reaches the
trigger (default 150,000 input tokens, minimum 50,000) it summarises the conversation, puts
a `compaction` block first in the reply and (unless paused) answers from the compacted
context. What is ours (docs/context.md, "Compaction"): the summary itself, a fixed condensing
policy (`summarize`), and how the compacted prompt is laid out for the model (`compacted`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.tokens import estimate_request_tokens, estimate_text_tokens
from agentctl.context.validate import COMPACT_MIN_TRIGGER

__all__ = [
    "COMPACT_MIN_TRIGGER",
    "DEFAULT_COMPACT_TRIGGER",
    "Compaction",
    "compact",
    "compact_edit",
    "compacted",
    "opening_summary",
    "summarize",
    "summarized",
    "summarized_turns",
    "summary_task",
]

COMPACT = "compact_20260112"
DEFAULT_COMPACT_TRIGGER = 150_000  # B.4 [DOC]
# The default summarisation prompt of one model, as the docs quote it (B.4 [DOC]); the
# emulator bills its tokens as part of the compaction iteration's input.
DEFAULT_SUMMARY_PROMPT = (
    "You have written a partial transcript for the initial task above. Please write a summary "
    "of the transcript. The purpose of this summary is to provide continuity so you can "
    "continue to make progress towards solving the task in a future context, where the raw "
    "history above may not be accessible and will be replaced with this summary. Write down "
    "anything that would be helpful, including the state, next steps, learnings etc. You must "
    "wrap your summary in a <summary></summary> block."
)
# The summary policy (ours): the task verbatim up to TASK_CHARS, then one line per tool call
# and per assistant text, the last MAX_LINES of them, each cut at LINE_CHARS.
TASK_CHARS = 1000  # real summaries are a few hundred characters (recordings: 297-543)
MAX_LINES = 60
LINE_CHARS = 160
INPUT_CHARS = 100
_TASK = re.compile(r"<task>\n(.*?)\n</task>", re.DOTALL)
_TURNS = re.compile(r'<progress turns="(\d+)">')
_WORD = re.compile(r"[a-z0-9_]{4,}")

Json = dict[str, Any]


@dataclass(frozen=True)
class Compaction:
    """One compaction: the block's text, what the model continues from, and the summarisation
    call's size (its input: the prompt summarised plus the prompt asking for the summary)."""

    summary: str
    request: Json  # the compacted request
    input_tokens: int
    output_tokens: int
    pause: bool


def compact_edit(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The request's `compact_20260112` edit, or None."""
    management = request.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, Mapping) and edit.get("type") == COMPACT:
            return edit
    return None


def _is_summary(block: Any) -> bool:
    """A compaction block that counts: `content: null` is a failed one, a no-op [SDK]."""
    return (
        isinstance(block, Mapping)
        and block.get("type") == "compaction"
        and bool(block.get("content"))
    )


def _last_summary(
    messages: Sequence[Mapping[str, Any]], last: int | None = None
) -> tuple[int, int] | None:
    for i in range(len(messages) - 1 if last is None else last, -1, -1):
        content = messages[i].get("content")
        blocks = content if isinstance(content, list) else []
        for j in range(len(blocks) - 1, -1, -1):
            if _is_summary(blocks[j]):
                return i, j
    return None


def compacted(request: Mapping[str, Any], last: int | None = None) -> Json:
    """`request` as the server reads it: everything before the last compaction block dropped.
    `last`: the message known to hold the last compaction block (the incremental editor
    keeps it), so that the messages after it are not searched.

    Layout (ours): the block opens a user message of its own, as the context the model
    continues from; the blocks after it keep their message and role. Unchanged (a shallow
    copy) when there is no compaction block.
    """
    messages = list(request.get("messages") or [])
    found = _last_summary(messages, last)
    if found is None:
        return dict(request)
    i, j = found
    blocks = list(messages[i]["content"])
    kept: list[Json] = [{"role": "user", "content": [blocks[j]]}]
    if blocks[j + 1 :]:
        kept.append({**messages[i], "content": blocks[j + 1 :]})
    return {**request, "messages": [*kept, *messages[i + 1 :]]}


def trigger_of(edit: Mapping[str, Any]) -> int:
    """The edit's input-token trigger (default 150,000)."""
    trigger = edit.get("trigger")
    if isinstance(trigger, Mapping) and isinstance(trigger.get("value"), int):
        return int(trigger["value"])
    return DEFAULT_COMPACT_TRIGGER


def compact(request: Mapping[str, Any], tokens: int | None = None) -> Compaction | None:
    """The compaction the server makes for `request` (already compacted and edited), if its
    prompt reaches the trigger ("reach": >=, after the docs' wording); None otherwise.
    `tokens`: the request's `estimate_request_tokens`, when the caller has it."""
    edit = compact_edit(request)
    if edit is None:
        return None
    if (estimate_request_tokens(request) if tokens is None else tokens) < trigger_of(edit):
        return None
    return summarized(request, edit.get("instructions"), edit.get("pause_after_compaction") is True)


def summarized(request: Mapping[str, Any], instructions: Any, pause: bool = True) -> Compaction:
    """The summary of `request` (a compacted, edited view) whatever its size: what a
    threshold compaction makes once the trigger is reached, and what on-demand compaction
    (top-level `compaction: {"type": "summarize"}`) always makes. `input_tokens` is the
    summarising call's prompt: the closed prompt plus the instructions (or the default one);
    the call reads and writes the prompt cache like a request (the caller accounts it)."""
    ask = instructions if isinstance(instructions, str) and instructions else None
    summary = summarize(request.get("messages") or [], ask)
    block = {"type": "compaction", "content": summary}
    after = {**request, "messages": [{"role": "user", "content": [block]}]}
    return Compaction(
        summary=summary,
        request=after,
        input_tokens=estimate_request_tokens(request) + summary_prompt_tokens(ask),
        output_tokens=estimate_text_tokens(summary),
        pause=pause,
    )


def summary_prompt_tokens(instructions: str | None) -> int:
    """Tokens of the prompt that asks for the summary: the instructions, else the default."""
    return estimate_text_tokens(instructions or DEFAULT_SUMMARY_PROMPT)


# --- the summary (ours) -----------------------------------------------------------------


def summarize(messages: Sequence[Mapping[str, Any]], instructions: str | None = None) -> str:
    """A deterministic summary of `messages` (a compacted view: it may open with an earlier
    summary, whose task, turn count and lines carry over).

    Policy: the task (first user text, or the earlier summary's) verbatim up to TASK_CHARS;
    the number of assistant turns summarised so far; one line per tool call (name, input,
    the first line of its result) and per assistant text (its first line); only the last
    MAX_LINES lines. `instructions` are honoured as a filter: a result line is the first of
    its lines that contains a word (4+ letters) of the instructions, if any does.
    """
    words = sorted(set(_WORD.findall((instructions or "").lower())))
    task, turns, lines = _carried(messages)
    results = _results(messages)
    for message in messages:
        if message.get("role") != "assistant":
            continue
        turns += 1
        for block in _blocks(message):
            lines.extend(_line(block, results, words))
    dropped = max(len(lines) - MAX_LINES, 0)
    body = [f"({dropped} earlier lines dropped)"] if dropped else []
    body += lines[dropped:]
    return "\n".join(
        [
            "<summary>",
            "<task>",
            task[:TASK_CHARS],
            "</task>",
            f'<progress turns="{turns}">',
            *body,
            "</progress>",
            "</summary>",
        ]
    )


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, Mapping)]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping))
    return ""


def _carried(messages: Sequence[Mapping[str, Any]]) -> tuple[str, int, list[str]]:
    """Task, turns and lines of an earlier summary opening the view, else the first user text."""
    content = opening_summary(messages)
    if content is not None:
        progress = _progress(content)
        body = content[progress.end() :] if progress else ""
        lines = [line for line in body.split("\n") if line.startswith("- ")]
        return summary_task(content) or "", summarized_turns(content), lines
    first = _blocks(messages[0]) if messages else []
    text = "\n".join(_text([b]) for b in first if b.get("type") == "text")
    return text, 0, []


def _results(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for message in messages:
        for block in _blocks(message):
            if block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = _text(block.get("content"))
    return found


def _line(block: Mapping[str, Any], results: Mapping[str, str], words: list[str]) -> list[str]:
    kind = block.get("type")
    if kind == "text" and str(block.get("text", "")).strip():
        return [_cut(f"- said: {_first(str(block['text']), [])}")]
    if kind != "tool_use":
        return []
    call = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
    result = results.get(str(block.get("id")))
    outcome = "(no result)" if result is None else _first(result, words)
    return [_cut(f"- {block.get('name')} {call[:INPUT_CHARS]} -> {outcome}")]


def _first(text: str, words: list[str]) -> str:
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    hits = [line for line in lines if any(w in line.lower() for w in words)]
    return (hits or lines or ["(empty)"])[0]


def _cut(line: str) -> str:
    line = " ".join(line.split())  # one line, whatever the model or a tool sent
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 3] + "..."


def opening_summary(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The text of the compaction block that opens a compacted conversation, or None."""
    first = _blocks(messages[0]) if messages else []
    return str(first[0]["content"]) if first and _is_summary(first[0]) else None


def summary_task(content: str) -> str | None:
    """The task an agentctl summary carries, or None (not one of ours, or edited away)."""
    found = _TASK.search(content)
    return found.group(1) if found else None


def _progress(content: str) -> re.Match[str] | None:
    """The progress tag after the task (a task may quote anything)."""
    task = _TASK.search(content)
    return _TURNS.search(content, task.end() if task else 0)


def summarized_turns(content: str) -> int:
    """How many assistant turns an agentctl summary covers (0 when it does not say)."""
    found = _progress(content)
    return int(found.group(1)) if found else 0
