"""The default model's web research: a task's `search: QUERY` lines drive web_search + web_fetch.

For each query not yet noted it searches, fetches the first result, and (with the memory tool)
writes one line `- [QUERY] facts` to its notes file, which ends the response with a tool call;
without memory it goes straight on to the next query inside the same response. When every
query is noted it answers from its notes (or from the fetched pages it can still see). Like
the rest of the policy it is stateless: everything comes from the (edited) conversation.

When clearing took the inputs of its notes writes (`clear_tool_inputs`), the conversation no
longer shows what it noted. It then goes on in the task's order after the latest query it can
still see noted (the queries before it are in the notes: it works through them in order), and
views its notes when it cannot tell where it is: when no noted query is visible, when the list
is done (the view is the check before answering, and what it answers from), and, after such a
check found queries missing, before each of those. A notes call whose input was cleared is
told by its place: a view is alone in its response, a write ends a search and fetch.
"""

from __future__ import annotations

import re
from typing import Any

from agentctl.emulator.model import Block, Reply, TextOut, ToolCall, assistant_turns
from agentctl.emulator.notes import NOTES_END, keywords, notes_path
from agentctl.emulator.recall import result_text, task_text

Json = dict[str, Any]

QUERY_LINE = re.compile(r"^\s*search:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
NOTE_LINE = re.compile(r"^- \[(.+?)\] ", re.MULTILINE)
FACT_CHARS = 160


def queries(task: str) -> list[str]:
    """The task's `search: QUERY` lines, in order, without repeats."""
    return list(dict.fromkeys(QUERY_LINE.findall(task)))


def research_reply(request: Json, memory: bool) -> Reply | None:
    """The next step of a research task, or None when the task names no searches."""
    task = task_text(request)
    wanted = queries(task)
    if not wanted:
        return None
    notes = notes_path(task)
    seen = _walk(request, notes)
    pending = _pending_result(request)
    view = _calls(ToolCall("memory", {"command": "view", "path": notes}))
    if memory and not seen["viewed"]:
        return view
    if pending is not None:
        step = _after_result(pending, seen, notes, task, memory)
        if step is not None:
            return step
    following = _following(seen, wanted, memory)
    # A hard stop when notes keep failing (a full memory store): answer with what there is.
    if assistant_turns(request) >= 2 * len(wanted) + 10:
        return Reply((TextOut(_answer(seen, wanted)),))
    if following is not None:
        return _calls(ToolCall("web_search", {"query": following}))
    if memory and seen["lost"]:
        return view
    return Reply((TextOut(_answer(seen, wanted)),))


def _following(seen: Json, wanted: list[str], memory: bool) -> str | None:
    """The next query to research: the first not yet noted; when the notes' content is lost
    (cleared), the first after the latest query still seen noted, None to view the notes."""
    done = seen["noted"] if memory else seen["searched"]
    if not (memory and seen["lost"]):
        return next((q for q in wanted if q not in done), None)
    latest = seen["latest"]
    if seen["checked"] or latest not in wanted:
        return None
    return next((q for q in wanted[wanted.index(latest) + 1 :] if q not in done), None)


def _calls(*calls: Block) -> Reply:
    return Reply(tuple(calls))


def _walk(request: Json, notes: str) -> Json:
    """What the visible conversation says: notes viewed/existing, queries noted/searched,
    the facts noted, and the text of fetched pages."""
    seen: Json = {"viewed": False, "exists": False, "noted": {}, "searched": {}, "pages": {}}
    # lost: a notes view or write after the last view still visible had its content cleared;
    # latest: the query of the latest note seen; checked: a view came after a write (the
    # check at the end of the list) and its content was cleared.
    seen.update(lost=False, latest=None, checked=False, wrote=False)
    results = _results_by_id(request)
    for message in request["messages"]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        alone = not any(b.get("type") == "server_tool_use" for b in blocks)
        for block in blocks:
            _see(block, results, seen, notes, alone)
    return seen


def _results_by_id(request: Json) -> dict[str, Json]:
    found: dict[str, Json] = {}
    for message in request["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if "tool_use_id" in block:
                found[str(block["tool_use_id"])] = block
    return found


def _see(block: Json, results: dict[str, Json], seen: Json, notes: str, alone: bool) -> None:
    kind, data = block.get("type"), block.get("input") or {}
    result = results.get(str(block.get("id")))
    if kind == "tool_use" and block.get("name") == "memory" and result is not None and not data:
        data = _cleared_call(result, seen, notes, alone)
    if kind == "server_tool_use" and block.get("name") == "web_search" and "query" in data:
        seen["searched"].pop(str(data["query"]), None)
        seen["searched"][str(data["query"])] = True  # ordered: the latest search last
    if kind == "server_tool_use" and result is not None and block.get("name") == "web_fetch":
        page = _page_text(result)
        if page:
            seen["pages"][str(data.get("url"))] = page
    if kind != "tool_use" or block.get("name") != "memory" or data.get("path") != notes:
        return
    command = data.get("command")
    text = str(data.get("file_text") or data.get("new_str") or "")
    if command == "view" and result is not None:
        seen["viewed"] = True
        shown = result_text(result.get("content"))
        seen["exists"] = seen["exists"] or not result.get("is_error")
        text = shown
        if not result.get("is_error"):
            _viewed(seen, shown.startswith(f"Here's the content of {notes}"))
    elif command in ("create", "str_replace") and result is not None and not result.get("is_error"):
        seen["exists"] = True
        seen["wrote"] = True
    for line in text.split("\n"):
        line = line.split("\t", 1)[-1]  # a view numbers its lines
        match = NOTE_LINE.match(line)
        if match:
            seen["noted"][match.group(1)] = line
            seen["latest"] = match.group(1)


def _viewed(seen: Json, shown: bool) -> None:
    """A successful view of the notes: what it showed is known again, or, cleared, lost."""
    seen["lost"] = not shown
    seen["checked"] = seen["wrote"] and not shown


def _cleared_call(result: Json, seen: Json, notes: str, alone: bool) -> Json:
    """A notes call whose input was cleared, as far as the conversation still tells: a view
    (alone in its response) or a write (after a search and fetch); its content is lost."""
    text = result_text(result.get("content"))
    if alone or text.startswith(f"Here's the content of {notes}"):
        return {"command": "view", "path": notes}
    if not result.get("is_error"):
        seen["exists"], seen["wrote"], seen["lost"] = True, True, True
    return {}


def _page_text(result: Json) -> str:
    content = result.get("content")
    if not isinstance(content, dict) or content.get("type") != "web_fetch_result":
        return ""
    source = (content.get("content") or {}).get("source") or {}
    return str(source.get("data", "")) if isinstance(source, dict) else ""


def _pending_result(request: Json) -> tuple[Json, Json] | None:
    """(server_tool_use, its result) when the conversation ends on one: the model goes on."""
    last = request["messages"][-1]
    content = last.get("content")
    if last.get("role") != "assistant" or not isinstance(content, list) or len(content) < 2:
        return None
    use, result = content[-2], content[-1]
    if use.get("type") != "server_tool_use" or result.get("tool_use_id") != use.get("id"):
        return None
    return use, result


def _after_result(
    pending: tuple[Json, Json], seen: Json, notes: str, task: str, memory: bool
) -> Reply | None:
    use, result = pending
    data = use.get("input") or {}
    content = result.get("content")
    if use.get("name") == "web_search":
        query = str(data.get("query", ""))
        hits = content if isinstance(content, list) else []
        if hits and isinstance(hits[0], dict) and hits[0].get("url"):
            return _calls(ToolCall("web_fetch", {"url": hits[0]["url"]}))
        return _note(seen, notes, task, query, "(no results)", memory)
    if use.get("name") == "web_fetch":
        query = _query_of_fetch(use, seen)
        text = _page_text(result)
        if isinstance(content, dict) and "error_code" in content:
            facts = f"(could not fetch it: {content['error_code']})"
        else:
            facts = _facts(text, query) if text else "(its content was cleared before I noted it)"
        return _note(seen, notes, task, query, facts, memory)
    return None


def _query_of_fetch(use: Json, seen: Json) -> str:
    """The query whose search led to this fetch: the latest one searched."""
    searched = list(seen["searched"])
    return searched[-1] if searched else str((use.get("input") or {}).get("url", ""))


def _facts(text: str, query: str) -> str:
    words = keywords(query) or keywords(text)[:3]
    body = "\n".join(line for line in text.split("\n") if not line.startswith("#"))
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", body) if s.strip()]
    hits = [s for s in sentences if any(w in s.lower() for w in words)] or sentences[:1]
    return " | ".join(hits[:2])[:FACT_CHARS] or "(empty page)"


def _note(seen: Json, notes: str, task: str, query: str, facts: str, memory: bool) -> Reply | None:
    """Write the note (ends the response on a memory call); without memory: go on."""
    if not memory:
        return None
    line = f"- [{query}] {facts}"
    if not seen["exists"]:
        first = task.strip().split("\n")[0][:100]
        text = f"# Research notes for: {first}\n\n## Searches\n{line}\n{NOTES_END}\n"
        return _calls(ToolCall("memory", {"command": "create", "path": notes, "file_text": text}))
    new = f"{line}\n{NOTES_END}"
    edit = {"command": "str_replace", "path": notes, "old_str": NOTES_END, "new_str": new}
    return _calls(ToolCall("memory", edit))


def _answer(seen: Json, wanted: list[str]) -> str:
    noted = seen["noted"]
    if noted:
        lines = [noted[q] for q in wanted if q in noted]
        return f"From my notes, {len(lines)} search(es):\n" + "\n".join(lines)
    pages = seen["pages"]
    if pages:
        lines = [f"- {url}: {_facts(text, '')}" for url, text in pages.items()]
        return f"From the pages I read, {len(lines)} page(s):\n" + "\n".join(lines)
    return "I found nothing to report."
