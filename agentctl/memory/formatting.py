"""The memory tool's result texts, byte for byte as the SDK's BetaLocalFilesystemMemoryTool."""

from __future__ import annotations

from collections.abc import Sequence

MAX_LINES = 999_999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))


def format_size(size: int) -> str:
    """`0B`, `29B`, `1K`, `1.5K`, `4K`, `1.2M`: the SDK's `_format_file_size`."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**i)
    if scaled == int(scaled):
        return f"{int(scaled)}{units[i]}"
    return f"{scaled:.1f}{units[i]}"


def listing_text(path: str, dir_size: int, items: Sequence[tuple[int, str]]) -> str:
    """A directory view: header, the directory itself, then `size<TAB>path/rel` per item."""
    header = (
        f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    )
    lines = [f"{format_size(dir_size)}\t{path}"]
    lines.extend(f"{format_size(size)}\t{path}/{rel}" for size, rel in items)
    return f"{header}\n" + "\n".join(lines)


def numbered(lines: Sequence[str], first: int) -> list[str]:
    """Lines prefixed with their 1-based number, right-aligned to 6, and a TAB."""
    return [f"{str(i + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)]


def view_slice(lines: list[str], view_range: Sequence[int] | None) -> tuple[list[str], int]:
    """The lines a view shows and the number of the first; the SDK's (lenient) range rules."""
    if not view_range or len(view_range) != 2:
        return lines, 1
    start = max(1, view_range[0]) - 1
    end = len(lines) if view_range[1] == -1 else view_range[1]
    return lines[start:end], start + 1


def file_header(path: str) -> str:
    """First line of a file view."""
    return f"Here's the content of {path} with line numbers:"


def file_view_text(path: str, shown: Sequence[str], first: int) -> str:
    """A file view: header, then numbered lines."""
    return f"{file_header(path)}\n" + "\n".join(numbered(shown, first))


def occurrence_lines(content: str, old: str, *, listed: int) -> tuple[list[int], int]:
    """The 1-based line of each (overlapping) occurrence start, as the SDK reports duplicates,
    for the first `listed` of them, and how many there are in all. Linear in the file's size.
    """
    found: list[int] = []
    count, line, last = 0, 1, 0
    pos = content.find(old)
    while pos != -1:
        count += 1
        if len(found) < listed:
            line += content.count("\n", last, pos)
            last = pos
            found.append(line)
        pos = content.find(old, pos + 1)
    return found, count


def replace_snippet(new_content: str, changed_index: int) -> str:
    """The str_replace success text: two lines either side of the 0-based changed line."""
    lines = new_content.split("\n")
    start = max(0, changed_index - 2)
    end = min(len(lines), changed_index + 3)
    body = numbered(lines[start:end], start + 1)
    return (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n" + "\n".join(body)
    )


def split_lines_keeping_cr(content: str) -> list[str]:
    """Split on LF only, without the empty tail a trailing newline leaves (insert's rule)."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def insert_content(content: str, line: int, text: str) -> str:
    """The file after inserting `text` after line `line`, with a guaranteed final newline."""
    lines = split_lines_keeping_cr(content)
    lines.insert(line, text.rstrip("\n"))
    new = "\n".join(lines)
    return new if new.endswith("\n") else new + "\n"


def truncate_listing(text: str, limit: int, path: str) -> str:
    """Cut a long listing at a line boundary and say how to see the rest."""
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit("\n", 1)[0]
    hidden = text.count("\n") - kept.count("\n")
    return (
        f"{kept}\n[Listing truncated: {hidden} more entries not shown (limit {limit} characters). "
        f"View a subdirectory of {path} to see them.]"
    )


def truncate_file_view(text: str, limit: int, first: int, last_line: int) -> str:
    """Cut a long file view at a line boundary and give the view_range that reads on."""
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit("\n", 1)[0]
    shown_count = kept.count("\n")  # lines after the header
    if shown_count == 0:  # one line longer than the limit: cut inside it
        return (
            f"{text[:limit]}\n[Output truncated at {limit} characters: line {first} is longer "
            f"than that and was cut. Lines after it: view_range [{first + 1}, -1].]"
        )
    next_line = first + shown_count
    return (
        f"{kept}\n[Output truncated at {limit} characters: showing lines {first}-{next_line - 1} "
        f"of {last_line}. To read the rest, call view with view_range [{next_line}, -1] "
        f"(or a smaller range).]"
    )
