"""The files policy over a request whose memory inputs clearing replaced with `{}`: a cut read
still visible goes on before the notes are viewed for the plan (which only they still hold)."""

from __future__ import annotations

from typing import Any

from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER as CLEARED
from agentctl.emulator import DefaultPolicy, ToolCall
from agentctl.emulator.notes import NOTES_END, notes_path

Json = dict[str, Any]
TASK = "Find every deadline."
NOTES = notes_path(TASK)
TOOLS = [{"type": "memory_20250818", "name": "memory"}] + [
    {"name": name, "input_schema": {"type": "object"}} for name in ("list_files", "read_file")
]


def turn(i: int, *calls: tuple[str, Json, str, bool]) -> list[Json]:
    """One response of tool calls (name, input, result, failed) and the results message."""
    uses = [{"type": "tool_use", "id": f"t{i}{n}", "name": name, "input": data}
            for n, (name, data, _, _) in enumerate(calls)]  # fmt: skip
    results = [{"type": "tool_result", "tool_use_id": f"t{i}{n}", "content": text,
                "is_error": failed} for n, (_, _, text, failed) in enumerate(calls)]  # fmt: skip
    return [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]


def chunk(first: int, last: int, more: bool) -> str:
    lines = [f"{n:>6}\tfiller" for n in range(first, last + 1)]
    lines[1] = f"{first + 1:>6}\tdeadline {first}: May"
    tail = [f"[truncated: more lines follow; call read_file with offset={last + 1} to continue]"]
    return "\n".join(lines + tail * more)


def reply_to(*turns: list[Json]) -> list[ToolCall]:
    messages = [{"role": "user", "content": TASK}, *(m for t in turns for m in t)]
    request = {"model": "claude-sonnet-5", "max_tokens": 1000, "tools": TOOLS,
               "messages": messages}  # fmt: skip
    blocks = DefaultPolicy(CLEARED).reply(request).blocks
    assert all(isinstance(b, ToolCall) for b in blocks), blocks
    return [b for b in blocks if isinstance(b, ToolCall)]


# What clear_tool_inputs = true, keep 1 leaves of the first turns: the directory view, the
# listing, then the notes view that found none, the create and the first read, all cleared.
OPENING = [
    turn(1, ("memory", {}, CLEARED, False)),
    turn(2, ("list_files", {}, CLEARED, False)),
    turn(3, ("memory", {}, CLEARED, True)),
    turn(4, ("memory", {}, CLEARED, False), ("read_file", {}, CLEARED, False)),
]


def test_a_cut_read_goes_on_before_the_plan_is_viewed() -> None:
    read = turn(5, ("memory", {}, CLEARED, False),
                ("read_file", {"path": "big.txt"}, chunk(1, 2000, more=True), False))  # fmt: skip
    note, going_on = reply_to(*OPENING, read)
    assert note.input["command"] == "str_replace" and note.input["path"] == NOTES
    assert note.input["new_str"] == f"- big.txt: deadline 1: May\n{NOTES_END}"
    assert going_on == ToolCall("read_file", {"path": "big.txt", "offset": 2001})


def test_the_plan_only_in_the_notes_is_viewed_once_the_read_is_done() -> None:
    read = turn(5, ("memory", {}, CLEARED, False),
                ("read_file", {"path": "big.txt", "offset": 2001}, chunk(2001, 2500, more=False),
                 False))  # fmt: skip
    note, view = reply_to(*OPENING, read)
    assert note.input["new_str"].startswith("- big.txt (from line 2001): deadline 2001: May")
    assert view == ToolCall("memory", {"command": "view", "path": NOTES})


def test_a_failed_call_with_its_input_cleared_is_the_view_that_found_no_notes() -> None:
    listing = turn(4, ("list_files", {"path": "."}, "a.txt\t10\nb.txt\t20", False))
    (create, read) = reply_to(*OPENING[:3], listing)
    assert (
        create.input["command"] == "create" and "Plan: a.txt | b.txt" in create.input["file_text"]
    )
    assert read == ToolCall("read_file", {"path": "a.txt"})
