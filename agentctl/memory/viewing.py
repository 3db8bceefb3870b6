"""The view command: directory listings (depth 2, hidden skipped) and numbered file views."""

from __future__ import annotations

import os
import stat

from agentctl.errors import ToolError
from agentctl.memory.formatting import (
    MAX_LINES,
    file_view_text,
    listing_text,
    truncate_file_view,
    truncate_listing,
    view_slice,
)
from agentctl.memory.fsops import scan_sorted

_MAX_DEPTH = 2


def view_dir(dir_fd: int, path: str, max_chars: int) -> str:
    """The listing of an open directory, as the SDK prints it, cut at `max_chars`."""
    items: list[tuple[int, str]] = []
    _collect(dir_fd, "", 1, items)
    text = listing_text(path, os.fstat(dir_fd).st_size, items)
    return truncate_listing(text, max_chars, path)


def _collect(dir_fd: int, prefix: str, depth: int, items: list[tuple[int, str]]) -> None:
    for entry in scan_sorted(dir_fd):
        if entry.name.startswith("."):
            continue
        rel = f"{prefix}/{entry.name}" if prefix else entry.name
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # vanished while listing
        if stat.S_ISDIR(st.st_mode):
            items.append((st.st_size, rel + "/"))
            if depth < _MAX_DEPTH:
                _collect_subdir(dir_fd, entry.name, rel, depth + 1, items)
        elif stat.S_ISREG(st.st_mode):
            items.append((st.st_size, rel))


def _collect_subdir(
    dir_fd: int, name: str, rel: str, depth: int, items: list[tuple[int, str]]
) -> None:
    try:
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return  # vanished or swapped for a symlink between scan and open: skip it
    try:
        _collect(sub, rel, depth, items)
    finally:
        os.close(sub)


def view_file(path: str, content: str, view_range: tuple[int, int] | None, max_chars: int) -> str:
    """A numbered view of a file's text (optionally a line range), cut at `max_chars`."""
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
    shown, first = view_slice(lines, view_range)
    text = file_view_text(path, shown, first)
    return truncate_file_view(text, max_chars, first, len(lines))
