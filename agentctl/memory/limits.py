"""The store's size limits (from MemorySettings), and the usage tally they are checked against."""

from __future__ import annotations

from collections.abc import Callable

from agentctl.errors import ToolError
from agentctl.memory.fsops import Usage, usage
from agentctl.memory.journal import JournalMark, journal_mark
from agentctl.profile.settings import MemorySettings


class Limits:
    """max_file_bytes, max_total_bytes and max_files for one root; 0 or less means no limit."""

    def __init__(self, settings: MemorySettings) -> None:
        self.settings = settings

    def check_write(
        self, path: str, size: int, *, old_size: int | None, current: Callable[[], Usage]
    ) -> None:
        """Refuse a write of `size` bytes to `path` (replacing `old_size`, None = new file).

        `current` gives the root's usage; it is only asked when a total limit applies.
        """
        s = self.settings
        if 0 < s.max_file_bytes < size:
            raise ToolError(
                f"File {path} would be {size} bytes, over the limit of {s.max_file_bytes} bytes "
                "per memory file; nothing was written. Keep it shorter or split it across files."
            )
        if s.max_total_bytes <= 0 and (s.max_files <= 0 or old_size is not None):
            return  # nothing else to check: skip the usage
        self._check_totals(path, size, old_size, current())

    def _check_totals(self, path: str, size: int, old_size: int | None, now: Usage) -> None:
        s = self.settings
        if old_size is None and 0 < s.max_files <= now.files:
            raise ToolError(
                f"Cannot create {path}: the memory directory already holds {now.files} files, "
                f"the limit. Delete or merge files first; nothing was written."
            )
        total = now.bytes - (old_size or 0) + size
        if 0 < s.max_total_bytes < total:
            raise ToolError(
                f"Cannot write {path}: the memory directory would hold {total} bytes, over the "
                f"limit of {s.max_total_bytes} bytes; nothing was written. Delete or shorten "
                "files first."
            )


class UsageTally:
    """The root's usage, walked once and then kept up to date with this store's own changes.

    Every agentctl change to a root, by any process, appends to its journal under the root's
    lock. So while the journal is exactly as this store's last append left it (same file, same
    size), nobody else changed the root through agentctl and the kept figure is exact; otherwise
    the tree is walked again. Call only with the root's lock held.
    """

    def __init__(self) -> None:
        self._usage: Usage | None = None
        self._mark: JournalMark | None = None

    def peek(self, root_fd: int) -> Usage | None:
        """The kept usage if it is still exact, else None (no walk)."""
        if self._usage is not None and journal_mark(root_fd) == self._mark:
            return self._usage
        return None

    def current(self, root_fd: int) -> Usage:
        """The root's usage: the kept figure if still exact, else a fresh walk."""
        kept = self.peek(root_fd)
        if kept is not None:
            return kept
        self._usage, self._mark = usage(root_fd), journal_mark(root_fd)
        return self._usage

    def forget(self) -> None:
        """Drop the kept figure (a change is under way: until it is journaled, nothing holds)."""
        self._usage = self._mark = None

    def keep(self, value: Usage | None, mark: JournalMark) -> None:
        """After a journaled change: `value` is the usage now (None: unknown, walk next time)."""
        self._usage, self._mark = value, (mark if value is not None else None)


def shifted(before: Usage | None, delta: Usage | None) -> Usage | None:
    """`before` changed by `delta`; None when either is unknown."""
    if before is None or delta is None:
        return None
    return Usage(before.files + delta.files, before.bytes + delta.bytes)
