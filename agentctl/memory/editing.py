"""str_replace and insert as pure functions of the file text (SDK rules, plus the fixes we make)."""

from __future__ import annotations

from agentctl.errors import ToolError
from agentctl.memory.formatting import (
    insert_content,
    occurrence_lines,
    replace_snippet,
    split_lines_keeping_cr,
)

MAX_LISTED = 50  # line numbers a "multiple occurrences" error lists (the SDK lists them all)


def replace_once(content: str, old: str, new: str, path: str) -> tuple[str, str]:
    """(new content, result text) for replacing the one occurrence of `old` by `new`."""
    if not old:
        # The SDK counts "" as occurring everywhere and lists every position; refuse plainly.
        raise ToolError(
            "No replacement was performed: old_str is empty. "
            f"Give the exact text to replace in {path}."
        )
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )
    if count > 1:
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` "
            f"in lines: {_listed_lines(content, old)}. Please ensure it is unique"
        )
    changed_index = content[: content.find(old)].count("\n")
    new_content = content.replace(old, new)
    return new_content, replace_snippet(new_content, changed_index)


def _listed_lines(content: str, old: str) -> str:
    """`1, 4, 9` as the SDK lists them; past MAX_LISTED, the first ones and the total."""
    lines, total = occurrence_lines(content, old, listed=MAX_LISTED)
    text = ", ".join(map(str, lines))
    return text if total <= MAX_LISTED else f"{text}, ... ({total} occurrences)"


def insert_at(content: str, line: int, text: str) -> str:
    """The file after inserting `text` after line `line` (0 = at the start)."""
    n_lines = len(split_lines_keeping_cr(content))
    if line < 0 or line > n_lines:
        raise ToolError(
            f"Invalid `insert_line` parameter: {line}. "
            f"It should be within the range [0, {n_lines}]."
        )
    return insert_content(content, line, text)
