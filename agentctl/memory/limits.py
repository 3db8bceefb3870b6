"""The store's size limits (from MemorySettings), checked against the usage tally (tally.py)."""

from __future__ import annotations

from collections.abc import Callable

from agentctl.errors import ToolError
from agentctl.memory.fsops import Usage
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


def shifted(before: Usage | None, delta: Usage | None) -> Usage | None:
    """`before` changed by `delta`; None when either is unknown."""
    if before is None or delta is None:
        return None
    return Usage(before.files + delta.files, before.bytes + delta.bytes)
