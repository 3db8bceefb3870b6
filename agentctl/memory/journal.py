"""The journal of a memory root: an intent line before each change and an outcome line after.

All appends happen under the root's lock, so a change's outcome line follows its intent line
at once. An intent that is the last line (its writer was killed, or failed half way) is
settled by the next writer, or by a reader, with a `recover` record of what is on disk.
"""

from __future__ import annotations

import json
import os
import signal
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

from agentctl import clock
from agentctl.memory.fsops import RESERVED_PREFIX, lstat_at, open_own, write_all
from agentctl.memory.history import blob_id, contents_at
from agentctl.memory.lock import shared_root_lock

JOURNAL_NAME = RESERVED_PREFIX + "-journal.jsonl"
JOURNAL_VERSION = 1
OLDER_NAME = RESERVED_PREFIX + "-journal.1.jsonl"  # the generation before a rotation
ROOT = "/memories"
_TAIL_CHUNK = 64 * 1024
# Test seam: `AGENTCTL_CRASH_AT=intent:N` makes the process kill -9 itself right after its
# Nth intent line is written, before that change is made or journaled. Unset in normal use.
CRASH_ENV = "AGENTCTL_CRASH_AT"
_crash_hits: dict[str, int] = {}


@dataclass(frozen=True)
class JournalEntry:
    """One mutating command: what, where, how many bytes it wrote, and who asked."""

    time: str
    command: str
    path: str
    new_path: str | None = None
    bytes: int = 0
    session: str | None = None
    files: dict[str, int] | None = None  # import: every file written, with its size
    turn: int | None = None  # the run's turn and the model's tool_use id, where known
    tool_use_id: str | None = None
    changes: dict[str, list[str | None]] | None = None  # path -> [blob before, blob after]
    removed: list[str] | None = None  # revert, review: files deleted (`files`: those written)
    reverts: str | None = None  # revert: the session undone
    v: int = JOURNAL_VERSION

    def record(self) -> dict[str, Any]:
        """The entry as a journal line's object (optional fields only where they are set)."""
        record = asdict(self)
        for key in _OPTIONAL:
            if record[key] is None:
                del record[key]
        return record


_OPTIONAL = ("files", "turn", "tool_use_id", "changes", "removed", "reverts")


class JournalMark(NamedTuple):
    """Which file the journal is and how long: unchanged means no one appended since."""

    dev: int
    ino: int
    size: int


def now_iso() -> str:
    """UTC time with milliseconds, as journal entries carry it."""
    return clock.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")


def intent_record(entry: JournalEntry) -> dict[str, Any]:
    """The line written before a change: the entry, with `intent` in place of `command`."""
    record = entry.record()
    return {"time": record.pop("time"), "intent": record.pop("command"), **record}


def append_entry(root_fd: int, entry: JournalEntry, *, sync: bool = True) -> JournalMark:
    """Append the entry as one line (see append_record)."""
    return append_record(root_fd, entry.record(), sync=sync)


def append_record(root_fd: int, record: dict[str, Any], *, sync: bool = True) -> JournalMark:
    """Append one whole line, flushed to disk when `sync`; all of it or nothing of it.

    A short write (a full disk) is continued; if the rest cannot be written, the journal is
    cut back to where it was, so no torn line is left for the next record to be glued to. A
    torn line left by a crash is ended first. Returns the journal's mark right after the line
    (exact when the root's lock is held).
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    fd = open_own(root_fd, JOURNAL_NAME, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        start = os.fstat(fd).st_size
        torn = start > 0 and os.pread(fd, 1, start - 1) != b"\n"
        _append_or_undo(fd, (b"\n" if torn else b"") + line + b"\n", start)
        if sync:
            os.fsync(fd)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if "intent" in record:
        crash_point("intent")
    return JournalMark(st.st_dev, st.st_ino, st.st_size)


def _append_or_undo(fd: int, data: bytes, start: int) -> None:
    try:
        write_all(fd, data)
    except BaseException:
        with suppress(OSError):
            os.ftruncate(fd, start)
        raise


def journal_mark(root_fd: int) -> JournalMark | None:
    """Identity and size of the root's journal; None when there is none yet."""
    st = lstat_at(root_fd, JOURNAL_NAME)
    return None if st is None else JournalMark(st.st_dev, st.st_ino, st.st_size)


def crash_point(point: str) -> None:
    """kill -9 this process if AGENTCTL_CRASH_AT names `point` and this is its Nth hit."""
    name, _, count = os.environ.get(CRASH_ENV, "").partition(":")
    if name != point:
        return
    _crash_hits[point] = _crash_hits.get(point, 0) + 1
    if str(_crash_hits[point]) == (count or "1"):
        os.kill(os.getpid(), signal.SIGKILL)


# -- interrupted changes ---------------------------------------------------------------------


def settle(root_fd: int) -> JournalMark | None:
    """With the lock held: record the outcome of an intent left last in the journal.

    Returns the journal's mark after the `recover` line, or None when nothing was pending.
    """
    intent = _last_record(root_fd)
    if intent is None or "intent" not in intent:
        return None
    return append_record(root_fd, recover_record(root_fd, intent), sync=False)


def recover_record(root_fd: int, intent: dict[str, Any]) -> dict[str, Any]:
    """What an interrupted change left: every file now at or under its path(s), with sizes.

    Replaying it (drop what was under the paths, add `files`) gives the tree as it is, whether
    the change happened, did not, or (a folder delete) stopped half way. Its `changes` say,
    per file, what the intent found before and what is there now.
    """
    paths = [p for p in (intent.get("path"), intent.get("new_path")) if isinstance(p, str)]
    now: dict[str, bytes] = {}
    for path in paths:
        now.update(contents_at(root_fd, path))
    return {
        "time": now_iso(),
        "command": "recover",
        "path": paths[0] if paths else ROOT,
        "new_path": paths[1] if len(paths) > 1 else None,
        "bytes": sum(len(data) for data in now.values()),
        "files": {path: len(data) for path, data in now.items()},
        "interrupted": intent.get("intent"),
        "session": intent.get("session"),
        **{k: intent[k] for k in ("turn", "tool_use_id") if k in intent},
        "changes": _recovered_changes(intent.get("changes"), now),
        "v": JOURNAL_VERSION,
    }


def _recovered_changes(planned: object, now: dict[str, bytes]) -> dict[str, list[str | None]]:
    """Per file: the content the intent found (unchanged files: what is there) and now."""
    before = planned if isinstance(planned, dict) else {}
    after = {path: blob_id(data) for path, data in now.items()}
    changes: dict[str, list[str | None]] = {}
    for path in [*before, *(p for p in after if p not in before)]:
        pair = before.get(path)
        was = pair[0] if isinstance(pair, list) and pair else after.get(path)
        if was != after.get(path):
            changes[path] = [was, after.get(path)]
    return changes


def _last_record(root_fd: int) -> dict[str, Any] | None:
    """The journal's last complete, readable record (None when there is none)."""
    try:
        fd = open_own(root_fd, JOURNAL_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        end = os.fstat(fd).st_size
        chunk = _TAIL_CHUNK
        while True:
            start = max(0, end - chunk)
            lines = os.pread(fd, end - start, start).split(b"\n")
            complete = lines if start == 0 else lines[1:]  # the first may be cut
            for raw in reversed(complete):
                record = _parse(raw.decode("utf-8", errors="replace"))
                if record is not None:
                    return record
            if start == 0:
                return None
            chunk *= 4
    finally:
        os.close(fd)


# -- reading ---------------------------------------------------------------------------------


def read_entries(root: Path) -> list[dict[str, Any]]:
    """All outcome records, oldest first; unreadable lines are skipped, a missing log is empty.

    Intent lines are not entries: each is followed by its outcome (the change's entry, or a
    `recover` record). An intent still last is settled here from what is on disk, under the
    root's lock shared (so no writer is half way through a change), without writing.
    """
    with _shared(root) as root_fd:
        return [] if root_fd is None else _entries(root_fd)


def read_history(root: Path) -> list[dict[str, Any]]:
    """The entries of both generations, oldest first (the newer one's `base` record left out
    when the older one is there: it only restates where the older one ended)."""
    with _shared(root) as root_fd:
        return [] if root_fd is None else history_at(root_fd)


@contextmanager
def _shared(root: Path) -> Iterator[int | None]:
    """The root folder open with its lock shared (None: there is no such folder)."""
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        yield None
        return
    try:
        with shared_root_lock(root_fd):
            yield root_fd
    finally:
        os.close(root_fd)


def history_at(root_fd: int) -> list[dict[str, Any]]:
    """As read_history, the root's lock held by the caller."""
    older = [r for r in _records(root_fd, OLDER_NAME) if "intent" not in r]
    newer = _entries(root_fd)
    if older and newer and newer[0].get("command") == "base":
        newer = newer[1:]
    return older + newer


def newest_entries(root: Path, limit: int = 0, session: str | None = None) -> list[dict[str, Any]]:
    """`read_history` newest first, its first `limit` (0: all) of `session`'s (any: None),
    read from the journal's end: the cost is in the entries shown, not the journal's size."""
    found: list[dict[str, Any]] = []
    with _shared(root) as root_fd:
        for entry in [] if root_fd is None else _backwards(root_fd):
            if session is None or entry.get("session") == session:
                found.append(entry)
                if len(found) == limit:
                    break
    return found


def _backwards(root_fd: int) -> Iterator[dict[str, Any]]:
    """The entries of `history_at`, newest first, reading both generations from their ends."""
    later: dict[str, Any] | None = None  # the record after this one in the journal
    older = _records_backwards(root_fd, OLDER_NAME)
    newer = (record for record, _ in _records_backwards(root_fd, JOURNAL_NAME))
    ahead: deque[dict[str, Any]] = deque()  # records before this one, read early
    while True:
        if not ahead:  # the next record, unless read early
            ahead.extend(islice(newer, 1))
        if not ahead:
            break
        record = ahead.popleft()
        if "intent" in record:
            if later is None:  # last: settled from what is on disk
                yield recover_record(root_fd, record)
            elif "intent" in later:  # followed by another intent: never settled
                yield {**record, "command": "unsettled"}
        elif record.get("command") != "base" or not _first_entry(ahead, newer):
            yield record
        else:  # the newer generation's base: kept only when the older one is gone
            older_entry = next((r for r, _ in older if "intent" not in r), None)
            if older_entry is None:
                yield record
                return
            yield older_entry
        later = record
    yield from (r for r, _ in older if "intent" not in r)


def _first_entry(ahead: deque[dict[str, Any]], newer: Iterator[dict[str, Any]]) -> bool:
    """Whether the record just taken is the journal's first entry (as `_entries` reads it):
    nothing before it, or only an intent that it settles. Reads up to two records early."""
    ahead.extend(islice(newer, 2 - len(ahead)))
    return not ahead or (len(ahead) == 1 and "intent" in ahead[0])


def _records_backwards(root_fd: int, name: str) -> Iterator[tuple[dict[str, Any], bool]]:
    """(record, whether it is the file's first) for each readable line, last first."""
    try:
        fd = open_own(root_fd, name, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        lines = _lines_backwards(fd)
        parsed = (_parse(line.decode("utf-8", errors="replace")) for line in lines)
        records = (record for record in parsed if record is not None)
        current = next(records, None)
        while current is not None:
            earlier = next(records, None)
            yield current, earlier is None
            current = earlier
    finally:
        os.close(fd)


def _lines_backwards(fd: int) -> Iterator[bytes]:
    """The lines of an open file, last first, read in chunks from its end."""
    end = os.fstat(fd).st_size
    pieces: list[bytes] = []  # a line's end, read before its start (the latest piece first)
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        parts = os.pread(fd, end - start, start).split(b"\n")
        end = start
        if len(parts) == 1:
            pieces.append(parts[0])
            continue
        yield b"".join([parts[-1], *reversed(pieces)])
        yield from reversed(parts[1:-1])
        pieces = [parts[0]]
    yield b"".join(reversed(pieces))


def _records(root_fd: int, name: str) -> list[dict[str, Any]]:
    try:
        fd = open_own(root_fd, name, os.O_RDONLY)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, "rb") as handle:
        return parse_lines(handle.read())


def _entries(root_fd: int) -> list[dict[str, Any]]:
    records = _records(root_fd, JOURNAL_NAME)
    entries: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    for record in records:
        if "intent" in record:
            if pending is not None:  # never settled (a writer that could not): outcome unknown
                entries.append({**pending, "command": "unsettled"})
            pending = record
        else:
            pending = None
            entries.append(record)
    if pending is not None:
        entries.append(recover_record(root_fd, pending))
    return entries


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    """The readable records of journal text (intent lines too), in order."""
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")  # not splitlines(): names may hold U+2028, U+0085
    return [record for line in lines if (record := _parse(line)) is not None]


def _parse(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError):  # a hand-made line nested thousands deep
        return None
    return record if isinstance(record, dict) else None
