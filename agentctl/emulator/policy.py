"""The default model: works through any task with memory and workspace tools, deterministically.

A last user message asking to "Quote the tool result ID verbatim" is answered with that
result's content as seen (`echo`; `agentctl probe` reads the placeholder so). Otherwise,
each turn it rebuilds what it knows from the edited conversation (`recall`), then takes the
first step that applies:
  1. `memory view /memories`; 2. view its notes file if the listing shows it (or the listing
  was cleared, or its own writes can no longer be seen); 3. `list_files` if offered and the
  listing is unknown (neither visible nor saved as the notes' `Plan:` line); 4. one response
  with up to two tool calls: a memory write (`create` the notes file with the plan, else
  `str_replace` of the end marker with a `- path: facts` line for the file it just read) and
  `read_file` of the next file not yet noted; 5. re-view the notes if it wrote since it last
  viewed them; 6. answer with the facts from its notes (without memory: from the reads it can
  still see); a follow-up (a user turn typed after the first, emulator/followup_answers.py) is
  answered with the facts that bear on its words, once the steps above are done.
A workspace listing more than LARGE_WORKSPACE files is sampled (see `reading_plan`): the notes
say so, and the answer names it.

A task with a line `memory: when told` plays a model that uses memory only when told to: it
works through the files as above without the memory tool, and when the latest user message
carries a text block after its tool results that speaks of memory and clearing (agentctl's
save-before-clear notice, docs/context.md; `emulator.notice`), its next response writes the
facts of every read it can still see to its notes file, alone. It answers with the facts of
its notes and of the reads it can still see. Without the notice it never writes memory: what
clearing removes is lost.
"""

from __future__ import annotations

import re
from typing import Any

from agentctl.emulator import notice
from agentctl.emulator.echo import quoted_result
from agentctl.emulator.followup_answers import (
    follow_up,
    follow_up_answer,
    turns_since,
    viewed_since,
)
from agentctl.emulator.model import Block, Reply, TextOut, ThinkingOut, ToolCall, assistant_turns
from agentctl.emulator.notes import (
    NOTES_END,
    chunk_key,
    keywords,
    note_path,
    notes_path,
    notes_text,
    plan_files,
    recorded_files,
    sampled_note,
    unnumber,
)
from agentctl.emulator.recall import Recall, recall, result_text, task_text
from agentctl.emulator.research import research_reply
from agentctl.emulator.server_tools import offered_server_tools
from agentctl.emulator.structured import requested_schema, shaped_answer
from agentctl.emulator.validation import thinking_enabled

Json = dict[str, Any]

MAX_FILES = 200  # any workspace terminates
MAX_TURNS = 2 * MAX_FILES + 12  # a hard stop even if every result keeps being cleared
# A workspace listing more files than LARGE_WORKSPACE is sampled: READ_BUDGET files (paths
# naming a task word first, then the shallowest), the first part of each, so that with the
# setup and answer turns the run fits the default max_turns (50).
LARGE_WORKSPACE = 100
READ_BUDGET = 40
MAX_CHUNKS = 5  # reads of one long file (read_file cuts at its line/size limit)
MAX_IDLE_TURNS = 5  # answer after this many turns in a row without reading a file
FACTS_PER_FILE = 3
FACT_CHARS = 160
WHEN_TOLD = re.compile(r"^\s*memory:\s*when told\s*$", re.IGNORECASE | re.MULTILINE)


def file_facts(text: str, words: list[str], fallback: bool = True) -> list[str]:
    """Up to 3 lines naming a task keyword, else the first non-empty line."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    hits = [line for line in lines if any(w in line.lower() for w in words)]
    chosen = hits[:FACTS_PER_FILE] or (lines[:1] if fallback else [])
    return [line[:FACT_CHARS] for line in chosen]


class DefaultPolicy:
    """The model used when no script is given."""

    def __init__(self, placeholder: str) -> None:
        self.placeholder = placeholder  # how it recognises a cleared result

    def reply(self, request: Json) -> Reply:
        quote = quoted_result(request)
        if quote is not None:
            return Reply((TextOut(quote),))
        task = task_text(request)
        offered = {str(t.get("name")) for t in request.get("tools") or []}
        if "web_search" in offered_server_tools(request):
            research = research_reply(request, memory="memory" in offered)
            if research is not None:
                reply = _with_thinking(request, research, "Research the task's searches.")
                return _shaped(request, reply)
        notes = notes_path(task)
        state = recall(request, notes, self.placeholder)
        question = follow_up(request["messages"])
        if question is not None:  # the turns before the follow-up were not idling
            state.idle_turns = min(state.idle_turns, turns_since(request["messages"], question[0]))
        if "memory" in offered and WHEN_TOLD.search(task):
            return _when_told(request, state, offered, notes, self.placeholder)
        calls, why = _next_calls(state, offered, notes, task)
        if assistant_turns(request) >= MAX_TURNS or state.idle_turns >= MAX_IDLE_TURNS:
            calls, why = [], "I am not making progress; answering with what I have."
        if (
            not calls
            and question is not None
            and _recheck(request, state, offered, notes, question[0])
        ):
            calls, why = [_memory("view", path=notes)], "Check my notes for the follow-up."
        blocks: list[Block] = [ThinkingOut(why)] if thinking_enabled(request) else []
        if calls:
            return Reply((*blocks, *calls))
        if question is not None:
            facts, source = known_facts(state, offered, notes, task)
            text = follow_up_answer(question[1], facts, source)
        else:
            text = answer(state, offered, notes, task)
        return Reply((*blocks, TextOut(shaped_answer(request, text))))


def _shaped(request: Json, reply: Reply) -> Reply:
    """A final answer (no tool call) as the request's output format asks: its text joined
    into one block of JSON."""
    if requested_schema(request) is None or any(isinstance(b, ToolCall) for b in reply.blocks):
        return reply
    text = "".join(b.text for b in reply.blocks if isinstance(b, TextOut))
    kept = [b for b in reply.blocks if not isinstance(b, TextOut)]
    return Reply((*kept, TextOut(shaped_answer(request, text))), reply.stop_reason)


def _recheck(request: Json, state: Recall, offered: set[str], notes: str, since: int) -> bool:
    """View the notes once per follow-up: the views made before may be cleared, and another
    session sharing the memory folder may have changed them since."""
    if "memory" not in offered or not state.notes_exist:
        return False
    return not viewed_since(request["messages"], since, notes)


def _with_thinking(request: Json, reply: Reply, why: str) -> Reply:
    if not thinking_enabled(request):
        return reply
    return Reply((ThinkingOut(why), *reply.blocks), reply.stop_reason)


def _repeats(state: Recall, call: ToolCall) -> bool:
    """The previous turn made exactly this one call (its result was cleared at once)."""
    return state.previous == [(call.name, call.input)]


def _next_calls(
    state: Recall, offered: set[str], notes: str, task: str
) -> tuple[list[ToolCall], str]:
    memory = "memory" in offered
    view_notes = _memory("view", path=notes)
    if memory and not state.root_viewed:
        return [_memory("view", path="/memories")], "First, check my memory directory."
    if memory and state.notes_exist is not None and _fresh_read(state, task):
        # Note what was just read before anything else, while the result is still visible.
        return _work(state, offered, notes, task), "Record what I just read."
    if memory and state.notes_next is not None:
        page = _memory("view", path=notes, view_range=[state.notes_next, -1])
        if not _repeats(state, page):
            return [page], "My notes are long: read the next part."
    unknown = state.notes_exist is None or (state.notes_exist and not state.knew_notes)
    if memory and unknown and not _repeats(state, view_notes):
        return [view_notes], f"Read my notes in {notes}."
    listing = ToolCall("list_files", {"path": "."})
    # List once per conversation (the workspace may have changed since the notes).
    unlisted = not state.listed or _known_files(state, task) is None
    if "list_files" in offered and unlisted and not _repeats(state, listing):
        return [listing], "List the workspace files."
    calls = _work(state, offered, notes, task)
    if calls:
        return calls, "Record what I found, then read the next file."
    if memory and state.wrote_since_view and state.notes_exist:
        return [view_notes], "Re-read my notes before answering."
    return [], "I have everything I need; write the answer."


def _fresh_read(state: Recall, task: str) -> bool:
    """A read result is visible and not yet in the notes."""
    pending = _pending_note(state, task)
    return pending is not None and state.last_read is not None and state.last_read.text is not None


def _memory(command: str, **arguments: Any) -> ToolCall:
    return ToolCall("memory", {"command": command, **arguments})


def _pending_note(state: Recall, task: str) -> str | None:
    """The `- path: facts` line for the file just read, if it is not recorded yet."""
    if state.last_read is None or state.noted_last_read:
        return None
    path, text = state.last_read.key, state.last_read.text
    if path in recorded_files(state.notes or ""):
        return None
    if state.last_read_error is not None:
        return f"- {path}: (could not read it: {state.last_read_error.strip()[:FACT_CHARS]})"
    if text is None:
        return f"- {path}: (its content was cleared before I noted it)"
    # A later chunk without a keyword says so, rather than quoting its first line.
    first = state.last_read.offset <= 1
    facts = file_facts("\n".join(unnumber(text)), keywords(task), fallback=first)
    # A file quoting the end marker must not add a second one (str_replace needs it unique).
    quoted = " | ".join(facts).replace(NOTES_END, "(end-of-notes)")
    return f"- {path}: {quoted or '(nothing relevant)'}"


def _known_files(state: Recall, task: str) -> list[str] | None:
    """The plan: from the listing if still visible, else as saved in memory (listings get
    cleared too)."""
    return reading_plan(state.files, task) if state.files is not None else plan_files(state.notes)


def _sampled(state: Recall) -> bool:
    """The workspace is too large to read whole (as listed, or as the notes say)."""
    if state.files is not None:
        return len(state.files) > LARGE_WORKSPACE
    return sampled_note(state.notes) is not None


def reading_plan(files: list[str], task: str) -> list[str]:
    """The files to read, at most READ_BUDGET: all of a small workspace in listing order; of a
    larger one, paths naming a task word first, then the shallowest, each group in listing
    order, listed in that order."""
    if len(files) <= LARGE_WORKSPACE:
        return files
    words = keywords(task)

    def rank(item: tuple[int, str]) -> tuple[bool, int, int]:
        index, path = item
        named = any(w in path.lower() for w in words)
        return (not named, path.count("/"), index)

    return [path for _, path in sorted(enumerate(files), key=rank)[:READ_BUDGET]]


def _note_calls(state: Recall, files: list[str] | None, notes: str, task: str) -> list[ToolCall]:
    line = _pending_note(state, task)
    if state.notes_exist is False and (files is not None or line):
        listed = len(state.files) if _sampled(state) and state.files is not None else None
        text = notes_text(task, files, line, listed=listed)
        return [_memory("create", path=notes, file_text=text)]
    if line and state.notes_exist:
        # The end marker is ours and always there: no need to know the rest of the file.
        new = f"{line}\n{NOTES_END}"
        return [_memory("str_replace", path=notes, old_str=NOTES_END, new_str=new)]
    return []


def _work(state: Recall, offered: set[str], notes: str, task: str) -> list[ToolCall]:
    files = _known_files(state, task)
    memory = "memory" in offered
    calls = _note_calls(state, files, notes, task) if memory else []
    limit = READ_BUDGET if _sampled(state) else MAX_FILES
    if "read_file" not in offered or state.read_calls >= limit:
        return calls
    # A cut read goes on first: its next offset is in the result still visible, while the
    # plan and what is done may be only in the notes (clearing took the writes' inputs).
    following = None if _sampled(state) else _continuation(state)
    if following is None and files is None and memory and state.notes_exist:
        return [*calls, _memory("view", path=notes)]  # the plan is in the notes
    following = following or _next_file(state, files)
    if following is not None:
        calls.append(following)
    return calls


def _continuation(state: Recall) -> ToolCall | None:
    """The next chunk of a file whose read was cut, up to MAX_CHUNKS reads per file."""
    last = state.last_read
    offset = last.continuation() if last is not None else None
    if last is None or offset is None or state.chunks.get(last.path, 0) >= MAX_CHUNKS:
        return None
    return ToolCall("read_file", {"path": last.path, "offset": offset})


def _next_file(state: Recall, files: list[str] | None) -> ToolCall | None:
    done = {note_path(key) for key in recorded_files(state.notes or "")} | set(state.reads)
    following = next((p for p in (files or [])[:MAX_FILES] if p not in done), None)
    return ToolCall("read_file", {"path": following}) if following is not None else None


def answer(state: Recall, offered: set[str], notes: str, task: str) -> str:
    """The final text: the facts in the notes, else those the model can still see."""
    facts, source = known_facts(state, offered, notes, task)
    if not facts:
        return f"Task: {task.strip()[:200]}\nI found nothing to report."
    lines = [f"- {path}: {text}" for path, text in facts.items()]
    if _sampled(state):
        lines.append(f"(A large workspace: I read {READ_BUDGET} of its files; name a subfolder.)")
    return f"From {source}, {len(facts)} file(s):\n" + "\n".join(lines)


def known_facts(
    state: Recall, offered: set[str], notes: str, task: str
) -> tuple[dict[str, str], str]:
    """{path: facts} from the notes in memory, else from the reads still visible; and which."""
    if "memory" in offered and state.notes and recorded_files(state.notes):
        return recorded_files(state.notes), f"my notes ({notes})"
    return _visible_facts(state, task), "the files I read"


def _visible_facts(state: Recall, task: str) -> dict[str, str]:
    words = keywords(task)
    return {
        path: " | ".join(file_facts("\n".join(unnumber(text)), words))
        for path, text in state.reads.items()
        if text is not None
    }


def told(request: Json) -> bool:
    """The latest user message carries the save-before-clear notice after its tool results
    (`emulator.notice`: a text block that speaks of memory and clearing)."""
    return notice.told(request["messages"][-1])


def _when_told(
    request: Json, state: Recall, offered: set[str], notes: str, placeholder: str
) -> Reply:
    """The `memory: when told` model: no memory use unless the notice just came."""
    task = task_text(request)
    seen = visible_facts(request, placeholder, task)
    blocks: list[Block] = []
    if told(request):
        if thinking_enabled(request):
            blocks.append(ThinkingOut("Told to save: write what I can still see to memory."))
        return Reply((*blocks, _save_call(state, seen, notes, task)))
    calls, why = _next_calls(state, offered - {"memory"}, notes, task)
    if assistant_turns(request) >= MAX_TURNS or state.idle_turns >= MAX_IDLE_TURNS:
        calls, why = [], "I am not making progress; answering with what I have."
    blocks = [ThinkingOut(why)] if thinking_enabled(request) else []
    if calls:
        return Reply((*blocks, *calls))
    return Reply((*blocks, TextOut(_told_answer(state, seen, task))))


def visible_facts(request: Json, placeholder: str, task: str) -> dict[str, str]:
    """The facts of every read_file result still visible, by chunk (`notes.chunk_key`)."""
    words = keywords(task)
    found: dict[str, str] = {}
    messages = request["messages"]
    for index, message in enumerate(messages[:-1]):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        answers = messages[index + 1].get("content")
        results = {
            b.get("tool_use_id"): b
            for b in (answers if isinstance(answers, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result" and not b.get("is_error")
        }
        for block in content:
            result = results.get(block.get("id")) if block.get("name") == "read_file" else None
            text = result_text(result.get("content")) if result is not None else placeholder
            if text == placeholder:
                continue
            data = block.get("input") or {}
            offset = data.get("offset", 1) if isinstance(data.get("offset", 1), int) else 1
            facts = file_facts("\n".join(unnumber(text)), words, fallback=offset <= 1)
            if facts:
                found[chunk_key(str(data.get("path", "?")), offset)] = " | ".join(facts)
    return found


def _save_call(state: Recall, seen: dict[str, str], notes: str, task: str) -> ToolCall:
    """Every visible read's facts as `- key: facts` lines, in a new notes file (or appended)."""
    saved = recorded_files(state.notes or "")
    fresh = {k: v for k, v in seen.items() if k not in saved}
    lines = "\n".join(f"- {path}: {facts}" for path, facts in fresh.items()) or None
    if state.notes_exist:
        new = f"{lines}\n{NOTES_END}" if lines else NOTES_END
        return _memory("str_replace", path=notes, old_str=NOTES_END, new_str=new)
    text = notes_text(task, _known_files(state, task), lines)
    return _memory("create", path=notes, file_text=text)


def _told_answer(state: Recall, seen: dict[str, str], task: str) -> str:
    """The facts in the notes, then those of reads still visible."""
    facts = {**recorded_files(state.notes or ""), **seen}
    if not facts:
        return f"Task: {task.strip()[:200]}\nI found nothing to report."
    lines = [f"- {path}: {text}" for path, text in facts.items()]
    return f"From my notes and the files I can still see, {len(facts)} file(s):\n" + "\n".join(
        lines
    )
