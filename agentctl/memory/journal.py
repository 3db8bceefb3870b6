"""The journal of a memory root: one JSON line per successful mutating command, newest last."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from agentctl.memory.fsops import FILE_MODE, RESERVED_PREFIX

JOURNAL_NAME = RESERVED_PREFIX + "-journal.jsonl"
JOURNAL_VERSION = 1


@dataclass(frozen=True)
class JournalEntry:
    """One mutating command: what, where, how many bytes it wrote, and who asked."""

    time: str
    command: str
    path: str
    new_path: str | None = None
    bytes: int = 0
    session: str | None = None
    v: int = JOURNAL_VERSION


class JournalMark(NamedTuple):
    """Which file the journal is and how long: unchanged means no one appended since."""

    dev: int
    ino: int
    size: int


def now_iso() -> str:
    """UTC time with milliseconds, as journal entries carry it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def append_entry(root_fd: int, entry: JournalEntry) -> JournalMark:
    """Append one line and flush it to disk (O_APPEND: lines of concurrent writers never mix).

    Returns the journal's mark right after the line (exact when the root's lock is held).
    """
    line = json.dumps(asdict(entry), ensure_ascii=False, separators=(",", ":")) + "\n"
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(JOURNAL_NAME, flags, FILE_MODE, dir_fd=root_fd)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return JournalMark(st.st_dev, st.st_ino, st.st_size)


def read_entries(root: Path) -> list[dict[str, Any]]:
    """All journal records, oldest first; unreadable lines are skipped, a missing log is empty."""
    try:
        text = (root / JOURNAL_NAME).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records
