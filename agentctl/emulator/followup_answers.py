"""Follow-ups for the default policy: a user turn typed after the first (not tool results),
answered from what the conversation and the notes in memory hold.

A follow-up arrives after the model answered (`agentctl run --continue`), or beside tool
results (a fork given a prompt): the policy finishes the task's work first, then answers
the follow-up with the facts that bear on its words.
"""

from __future__ import annotations

import re
from typing import Any

from agentctl.emulator.notes import keywords
from agentctl.emulator.notice import is_notice

Json = dict[str, Any]
MAX_QUOTE = 200
STEM = 5
# Words of a question that name no fact ("which note mentions X?").
QUESTION_WORDS = frozenset(
    ["note", "notes", "mention", "mentions", "tell", "says", "show", "find", "know"]
)


def follow_up(messages: list[Json]) -> tuple[int, str] | None:
    """(index, text) of the latest user message after the first that carries typed text."""
    for index in range(len(messages) - 1, 0, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        text = typed_text(message.get("content"))
        if text:
            return index, text
    return None


def typed_text(content: object) -> str:
    """The text a user typed: a string content, or its text blocks (not tool results, nor
    agentctl's save-before-clear notice: `emulator.notice`)."""
    if isinstance(content, str):
        return content.strip()
    blocks = content if isinstance(content, list) else []
    parts = [
        b.get("text")
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and not is_notice(b)
    ]
    return "\n".join(p for p in parts if isinstance(p, str)).strip()


def turns_since(messages: list[Json], index: int) -> int:
    """Assistant turns after message `index`."""
    return sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")


def viewed_since(messages: list[Json], index: int, path: str) -> bool:
    """Whether a memory `view` of `path` was called after message `index`."""
    for message in messages[index + 1 :]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            arguments = block.get("input")
            if (
                block.get("name") == "memory"
                and isinstance(arguments, dict)
                and arguments.get("command") == "view"
                and arguments.get("path") == path
            ):
                return True
    return False


def question_words(question: str) -> list[str]:
    """What a fact must name to bear on `question`: its keywords cut to STEM letters (so
    "renews" finds "renewal"), and its numbers of 4+ digits (years)."""
    words = [w[:STEM] for w in keywords(question) if w not in QUESTION_WORDS]
    return list(dict.fromkeys([*words, *re.findall(r"\d{4,}", question)]))


def follow_up_answer(question: str, facts: dict[str, str], source: str) -> str:
    """The answer to `question`: the facts naming the most of its words, else all of them."""
    quoted = " ".join(question.split())[:MAX_QUOTE]
    if not facts:
        return f"You asked: {quoted}\nI have nothing on it: I found nothing to report."
    words = question_words(question)
    scores = {path: sum(w in text.lower() for w in words) for path, text in facts.items()}
    best = max(scores.values(), default=0)
    hits = {path: text for path, text in facts.items() if best and scores[path] == best}
    chosen = hits or facts
    lead = (
        f"From {source}, {len(hits)} of {len(facts)} file(s) bear on it:"
        if hits
        else f"Nothing in {source} bears on it; all I have:"
    )
    lines = [f"- {path}: {text}" for path, text in chosen.items()]
    return f"You asked: {quoted}\n{lead}\n" + "\n".join(lines)
