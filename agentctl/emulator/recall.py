"""What the default policy can know from the (edited) conversation it is shown.

The policy is stateless: every request it rebuilds its knowledge by walking the tool calls
it made and the results it got back. A result replaced by the clearing placeholder is gone;
a tool input cleared by `clear_tool_inputs` is gone too. What survives is what it wrote to
memory, which it can view again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agentctl.context.compaction import opening_summary, summary_task
from agentctl.emulator.notes import chunk_key, next_page, numbered

Json = dict[str, Any]
# An error result that asks for the call again (what `--resume` sends for a call cut by a kill):
# the emulator matches the words, not agentctl's constant, so the two sides stay independent.
RETRY_HINT = "call it again"


def task_text(request: Json) -> str:
    """The task: the text of the first user message, or the task a compaction summary that
    opens the conversation carries."""
    summary = opening_summary(request["messages"])
    if summary is not None:
        return summary_task(summary) or summary
    first = request["messages"][0]
    return result_text(first.get("content"))


def result_text(content: object) -> str:
    """A tool_result's (or message's) content as plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (b.get("text", "") for b in content if isinstance(b, dict))
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


@dataclass(frozen=True)
class Read:
    """One read_file call as the policy remembers it."""

    path: str
    offset: int  # 1 = from the start
    text: str | None  # None: the result was cleared

    @property
    def key(self) -> str:
        """How the notes name this read."""
        return chunk_key(self.path, self.offset)

    def continuation(self) -> int | None:
        """The offset the result asks to continue from (`[truncated: ... offset=N ...]`)."""
        last = (self.text or "").rstrip("\n").rsplit("\n", 1)[-1]
        found = re.search(r"offset=(\d+)", last) if last.startswith("[truncated") else None
        return int(found.group(1)) if found else None


@dataclass
class Recall:
    """The policy's knowledge after walking the conversation."""

    root_viewed: bool = False
    notes_exist: bool | None = None  # None: unknown (not looked, or the evidence was cleared)
    notes: str | None = None  # content of the notes file, when known (maybe a first part)
    notes_lines: dict[int, str] = field(default_factory=dict)  # from views, by line number
    notes_next: int | None = None  # a view was truncated: the line to view from next
    knew_notes: bool = False  # its content was known at some point in this conversation
    wrote_since_view: bool = False
    files: list[str] | None = None  # the workspace listing, None when unknown or cleared
    listed: bool = False  # list_files was called in this conversation
    reads: dict[str, str | None] = field(default_factory=dict)  # path -> text (None: cleared)
    read_calls: int = 0  # read_file calls, counted even when their inputs were cleared
    memory_calls: int = 0
    last_read: Read | None = None
    last_read_error: str | None = None
    noted_last_read: bool = False  # a notes write came after the last read
    chunks: dict[str, int] = field(default_factory=dict)  # path -> read_file calls on it
    idle_turns: int = 0  # trailing assistant turns without a read_file call
    previous: list[tuple[str, Json]] = field(default_factory=list)  # last turn's calls


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


def _turn_calls(message: Json) -> list[tuple[str, Json]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    calls: list[tuple[str, Json]] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            raw = block.get("input")
            calls.append((str(block.get("name")), raw if isinstance(raw, dict) else {}))
    return calls


def _progress(state: Recall, messages: list[Json]) -> None:
    turns = [_turn_calls(m) for m in messages if m.get("role") == "assistant"]
    state.previous = turns[-1] if turns else []
    for calls in reversed(turns):
        if any(name == "read_file" for name, _ in calls):
            break
        state.idle_turns += 1


def recall(request: Json, notes: str, placeholder: str) -> Recall:
    """Walk the conversation and rebuild what the policy knows."""
    state = Recall()
    _progress(state, request["messages"])
    for use, result in _pairs(request["messages"]):
        if result is None:
            continue
        text = result_text(result.get("content"))
        visible = None if text == placeholder else text
        failed = bool(result.get("is_error"))
        # A read-only call that never ran (a run killed mid-turn) is simply made again; a cut
        # memory call may have changed the store, so it is observed as failed and checked.
        if failed and visible is not None and RETRY_HINT in visible and use.get("name") != "memory":
            _forget(state, use)
            continue
        _observe(state, use, visible, failed, notes)
    return state


def _forget(state: Recall, use: Json) -> None:
    """A read-only call that never ran (a run killed mid-turn): as a model would, redo it."""
    raw = use.get("input")
    call = (str(use.get("name")), raw if isinstance(raw, dict) else {})
    state.previous = [c for c in state.previous if c != call]


def _observe(state: Recall, use: Json, text: str | None, failed: bool, notes: str) -> None:
    raw = use.get("input")
    arguments: Json = raw if isinstance(raw, dict) else {}
    name = use.get("name")
    if name == "memory":
        if not arguments:
            arguments = _guess_memory_call(state, text, failed, notes)
        state.memory_calls += 1
        _observe_memory(state, arguments, text, failed, notes)
    elif name == "list_files":
        state.listed = True
        state.files = None if text is None or failed else _listing(text)
    elif name == "read_file":
        state.read_calls += 1
        path = str(arguments.get("path", "?"))
        offset = arguments.get("offset", 1)
        state.reads[path] = None if failed else text
        state.chunks[path] = state.chunks.get(path, 0) + 1
        state.last_read = Read(path, offset if isinstance(offset, int) else 1, text)
        state.noted_last_read = False
        state.last_read_error = text if failed else None


def _guess_memory_call(state: Recall, text: str | None, failed: bool, notes: str) -> Json:
    """A memory call whose input was cleared: what it must have been.

    The result tells, if it is still visible; otherwise its own habits do: the first memory
    call of a conversation is always the directory view, and a call that failed before the
    notes were known to exist was the view that found none (a write then creates them).
    """
    if text is not None and text.startswith("Here're the files and directories"):
        return {"command": "view", "path": "/memories"}
    if text is not None and text.startswith(f"Here's the content of {notes}"):
        return {"command": "view", "path": notes}
    if state.memory_calls == 0:
        return {"command": "view", "path": "/memories"}
    if failed and not state.notes_exist:
        return {"command": "view", "path": notes}
    return {}


def _listing(text: str) -> list[str]:
    lines = (line.partition("\t")[0] for line in text.split("\n"))
    return [p for p in lines if p and not p.startswith("[truncated")]


def _observe_memory(
    state: Recall, arguments: Json, text: str | None, failed: bool, notes: str
) -> None:
    command, path = arguments.get("command"), arguments.get("path")
    if command == "view" and path == "/memories":
        state.root_viewed = True
        if text is not None and not failed:
            state.notes_exist = notes in text
    elif command == "view" and path == notes:
        _observe_notes_view(state, text, failed, arguments.get("view_range"))
    elif not arguments or command is None:
        # Our own write, input cleared: the content is now unknown. A write to notes that
        # did not exist was the create: nothing from earlier runs to learn then.
        state.knew_notes = state.knew_notes or (state.notes_exist is False and not failed)
        _set_notes(state, None)
        state.wrote_since_view = True
        state.notes_exist = True if not failed else None
        state.noted_last_read = state.noted_last_read or not failed
    elif path == notes:
        _observe_write(state, arguments, failed)


def _set_notes(state: Recall, text: str | None) -> None:
    """Known content replaces the paged lines; unknown content forgets them."""
    state.notes, state.notes_next = text, None
    lines = text.split("\n") if text is not None else []
    state.notes_lines = dict(enumerate(lines, 1))


def _observe_notes_view(state: Recall, text: str | None, failed: bool, pages: object) -> None:
    state.wrote_since_view = False
    if failed:  # "The path ... does not exist": no notes yet
        state.notes_exist = False
        _set_notes(state, None)
        return
    state.notes_exist = True  # a cleared result keeps is_error: this view succeeded
    if text is None:
        _set_notes(state, None)
        return
    start = pages[0] if isinstance(pages, list) and pages and isinstance(pages[0], int) else 1
    if start <= 1:
        state.notes_lines = {}
    state.notes_lines.update(numbered(text))
    state.notes_next = next_page(text)  # long notes come in pages (memory view truncates)
    state.notes = "\n".join(state.notes_lines[n] for n in sorted(state.notes_lines))
    state.knew_notes = True


def _observe_write(state: Recall, arguments: Json, failed: bool) -> None:
    if failed:  # e.g. the end marker is gone: look at the file again
        _set_notes(state, None)
        state.notes_exist = None
        return
    state.notes_exist, state.wrote_since_view, state.noted_last_read = True, True, True
    command = arguments.get("command")
    if command == "create":
        _set_notes(state, str(arguments.get("file_text", "")))
        state.knew_notes = True
    elif command == "str_replace" and state.notes is not None and state.notes_next is None:
        old, new = str(arguments.get("old_str", "")), str(arguments.get("new_str", ""))
        _set_notes(state, state.notes.replace(old, new, 1))
    else:
        _set_notes(state, None)
