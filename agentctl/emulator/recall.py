"""What the default policy can know from the (edited) conversation it is shown.

The policy is stateless: every request it rebuilds its knowledge by walking the tool calls
it made and the results it got back. A result replaced by the clearing placeholder is gone;
a tool input cleared by `clear_tool_inputs` is gone too. What survives is what it wrote to
memory, which it can view again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]

NOTES_END = "(end of notes)"
_STOPWORD_TEXT = """
that this with from have what which when where will would your their there these those
them then than into about each every other some such only also just more most very
file files task please make sure list should could does done using used
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def task_text(request: Json) -> str:
    """The task: the text of the first user message."""
    first = request["messages"][0]
    return result_text(first.get("content"))


def keywords(task: str) -> list[str]:
    """Words of 4+ letters of the task, lowercased, stopwords removed, in first-seen order."""
    words = (w.lower() for w in re.findall(r"[A-Za-z]{4,}", task))
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))


def notes_path(task: str) -> str:
    """`/memories/<slug>-<shorthash>.md`: the same task always finds the same notes."""
    slug = "-".join(keywords(task)[:3]) or "task"
    digest = hashlib.sha256(task.strip().encode()).hexdigest()[:8]
    return f"/memories/{slug[:40]}-{digest}.md"


def result_text(content: object) -> str:
    """A tool_result's (or message's) content as plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (b.get("text", "") for b in content if isinstance(b, dict))
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def unnumber(text: str) -> list[str]:
    """Lines of a numbered view (`{n:>6}\\t{line}`), header and truncation lines dropped."""
    lines = []
    for line in text.split("\n"):
        number, tab, rest = line.partition("\t")
        if tab and number.strip().isdigit():
            lines.append(rest)
    return lines


def recorded_files(notes: str) -> dict[str, str]:
    """`- path: facts` lines of a notes text -> {path: facts}."""
    found: dict[str, str] = {}
    for line in notes.split("\n"):
        if line.startswith("- ") and ": " in line:
            path, _, facts = line[2:].partition(": ")
            found[path] = facts
    return found


@dataclass
class Recall:
    """The policy's knowledge after walking the conversation."""

    root_viewed: bool = False
    notes: str | None = None  # believed content of the notes file, when known
    notes_state: str = "absent"  # absent | unknown | known
    notes_views: int = 0
    wrote_since_view: bool = False
    files: list[str] | None = None  # the workspace listing, None when unknown or cleared
    listed: bool = False  # list_files was called in this conversation
    reads: dict[str, str | None] = field(default_factory=dict)  # path -> text (None: cleared)
    last_read: tuple[str, str | None] | None = None  # (path, text or None if cleared)
    last_read_error: str | None = None


def _pairs(messages: list[Json]) -> list[tuple[Json, Json | None]]:
    """Every tool_use with its tool_result (or None), in conversation order."""
    pairs: list[tuple[Json, Json | None]] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or isinstance(message.get("content"), str):
            continue
        following = messages[index + 1] if index + 1 < len(messages) else {"content": []}
        answers = following.get("content")
        results = {
            b.get("tool_use_id"): b
            for b in (answers if isinstance(answers, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                pairs.append((block, results.get(block.get("id"))))
    return pairs


def recall(request: Json, notes: str, placeholder: str) -> Recall:
    """Walk the conversation and rebuild what the policy knows."""
    state = Recall()
    for use, result in _pairs(request["messages"]):
        if result is None:
            continue
        text = result_text(result.get("content"))
        visible = None if text == placeholder else text
        _observe(state, use, visible, bool(result.get("is_error")), notes)
    return state


def _observe(state: Recall, use: Json, text: str | None, failed: bool, notes: str) -> None:
    raw = use.get("input")
    arguments: Json = raw if isinstance(raw, dict) else {}
    name = use.get("name")
    if name == "memory":
        _observe_memory(state, arguments, text, failed, notes)
    elif name == "list_files":
        state.listed = True
        state.files = None if text is None or failed else _listing(text)
    elif name == "read_file":
        path = str(arguments.get("path", "?"))
        state.reads[path] = None if failed else text
        state.last_read = (path, text)
        state.last_read_error = text if failed else None


def _listing(text: str) -> list[str]:
    lines = (line.partition("\t")[0] for line in text.split("\n"))
    return [p for p in lines if p and not p.startswith("[truncated")]


def _observe_memory(
    state: Recall, arguments: Json, text: str | None, failed: bool, notes: str
) -> None:
    command, path = arguments.get("command"), arguments.get("path")
    if command == "view" and path == "/memories":
        state.root_viewed = True
        state.notes_state = "unknown" if text is None or notes in text else "absent"
    elif command == "view" and path == notes:
        state.notes_views += 1
        state.wrote_since_view = False
        if failed:  # "The path ... does not exist": no notes yet
            state.notes, state.notes_state = None, "absent"
        else:
            _set_notes(state, None if text is None else "\n".join(unnumber(text)))
    elif not arguments or command is None:
        _set_notes(state, None)  # our own input was cleared: view the notes again to know
    elif path == notes and not failed:
        state.wrote_since_view = True
        _apply_write(state, arguments)
    elif path == notes:
        _set_notes(state, None)  # a write failed: re-read before trying again


def _set_notes(state: Recall, text: str | None) -> None:
    state.notes = text
    state.notes_state = "unknown" if text is None else "known"


def _apply_write(state: Recall, arguments: Json) -> None:
    command = arguments.get("command")
    if command == "create":
        _set_notes(state, str(arguments.get("file_text", "")))
    elif command == "str_replace" and state.notes is not None:
        old, new = str(arguments.get("old_str", "")), str(arguments.get("new_str", ""))
        _set_notes(state, state.notes.replace(old, new, 1))
    else:
        _set_notes(state, None)
