"""The sessions index: one SQLite row per transcript (its `sessions list` row).

A writer adds its session's row when it closes; a listing first compares every transcript's
size and modification time with its row and re-reads only the files that changed (a run
still going, a copied or resumed transcript, an index deleted or from another version). The
index is a cache: whatever goes wrong with it, the listing reads the files instead.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentctl import __version__
from agentctl.errors import AgentctlError
from agentctl.home import TRANSCRIPT_SUFFIX as SUFFIX
from agentctl.home import sessions_dir
from agentctl.sessions.list_row import SessionSummary
from agentctl.types import Totals, Usage

if TYPE_CHECKING:
    from agentctl.sessions.catalog import SummaryTally
    from agentctl.sessions.transcript import Record

INDEX_NAME = "index.sqlite3"
# Rows are rebuilt when this or agentctl's version changes (a row holds a cost under the
# price table of the version that wrote it).
SCHEMA = 3
# A row's columns: the header facts, the row's Totals spread out (each Usage count, then the
# other sums: read from their definitions, so a new count needs no change here), the rest.
_HEAD = ("id", "started", "task", "task_source", "model", "turns", "status")
_USAGE = tuple(f.name for f in fields(Usage))
_SUMS = tuple(f.name for f in fields(Totals) if f.name != "usage")
_TAIL = ("pricing", "forked_from", "forked_at", "follow_ups")
_FIELDS = (*_HEAD, *_USAGE, *_SUMS, *_TAIL)
_USAGE_AT, _SUMS_AT, _TAIL_AT = len(_HEAD), len(_HEAD) + len(_USAGE), -len(_TAIL)
_SEARCHED = ("id", "task", "task_source", "model")


def index_path() -> Path:
    """Where the index lives: beside the transcripts, in the private sessions folder."""
    return sessions_dir() / INDEX_NAME


@dataclass(frozen=True)
class Filters:
    """What `sessions list` keeps: the `count` newest whose id, task, task file or model has
    `search`, whose status is `status` and whose model has `model` (any case)."""

    count: int | None = None
    search: str | None = None
    status: str | None = None
    model: str | None = None


def listing(filters: Filters = Filters()) -> list[SessionSummary]:
    """The sessions that pass `filters`, newest first (by transcript modification time)."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    with _open(folder) as db:
        refresh(db, folder)
        return _query(db, filters)


def reindex() -> int:
    """Bring the index in line with the transcripts; how many files it had to read."""
    folder = sessions_dir()
    if not folder.is_dir():
        return 0
    with _open(folder) as db:
        return refresh(db, folder)


def refresh(db: sqlite3.Connection, folder: Path) -> int:
    """Bring the rows in line with the transcripts in `folder`; how many files were read."""
    files = _transcripts(folder)
    known = {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, size, mtime FROM rows")}
    stale = [name for name, stat in files.items() if known.get(name) != stat]
    gone = [(name,) for name in known.keys() - files.keys()]
    if not stale and not gone:
        return 0

    from agentctl.sessions.catalog import summarize

    with db:
        db.executemany("DELETE FROM rows WHERE id = ?", gone)
        for name in stale:
            size, mtime = files[name]
            _put(db, name, size, mtime, summarize(folder / f"{name}{SUFFIX}"))
    return len(stale)


def note_written(path: Path, tally: SummaryTally) -> None:
    """A writer's row for the transcript it has just closed, from the records it wrote
    (never an error: a listing re-reads a file whose row is missing or stale)."""
    with contextlib.suppress(AgentctlError, OSError, ValueError, sqlite3.Error):
        stat = path.stat()
        summary = tally.summary(path.stem)
        with _open(path.parent) as db, db:
            _put(db, path.stem, stat.st_size, stat.st_mtime_ns, summary)


class RowWriter:
    """A transcript writer's observer: the list row tallied from the records as they are
    written, put in the index when the writer closes the file."""

    def __init__(self) -> None:
        from agentctl.sessions.catalog import SummaryTally

        self.tally = SummaryTally()

    def add(self, record: Record) -> None:
        self.tally.add(record)

    def closed(self, path: Path) -> None:
        note_written(path, self.tally)


def _transcripts(folder: Path) -> dict[str, tuple[int, int]]:
    """Session id -> (size, mtime in ns) of every transcript file in `folder`."""
    files = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.endswith(SUFFIX):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file():
                    stat = entry.stat()
                    files[entry.name[: -len(SUFFIX)]] = (stat.st_size, stat.st_mtime_ns)
    return files


def _put(
    db: sqlite3.Connection, name: str, size: int, mtime: int, row: SessionSummary | None
) -> None:
    """One row; a file with no list row (empty, or no header yet) is kept as unlisted."""
    values = _values(row) if row else [name, *[None] * (len(_FIELDS) - 1)]
    columns = ", ".join(_FIELDS)
    marks = ", ".join("?" * (len(_FIELDS) + 3))
    sql = f"INSERT OR REPLACE INTO rows ({columns}, size, mtime, listed) VALUES ({marks})"
    db.execute(sql, (*values, size, mtime, row is not None))


def _query(db: sqlite3.Connection, filters: Filters) -> list[SessionSummary]:
    where: list[str] = ["listed"]
    params: list[str | int] = []
    if filters.search:
        where.append("has(?, " + ", ".join(_SEARCHED) + ")")
        params.append(filters.search.casefold())
    if filters.model:
        where.append("has(?, model)")
        params.append(filters.model.casefold())
    if filters.status:
        where.append("status = ?")
        params.append(filters.status)
    sql = f"SELECT {', '.join(_FIELDS)} FROM rows WHERE {' AND '.join(where)}"
    sql += " ORDER BY mtime DESC, id DESC LIMIT ?"
    params.append(-1 if filters.count is None else filters.count)
    return [_row(values) for values in db.execute(sql, params)]


def _values(row: SessionSummary) -> list[Any]:
    totals = row.totals
    return [
        *(getattr(row, name) for name in _HEAD),
        *(getattr(totals.usage, name) for name in _USAGE),
        *(getattr(totals, name) for name in _SUMS),
        *(getattr(row, name) for name in _TAIL),
    ]


def _row(values: Any) -> SessionSummary:
    """`_values` read back (SQLite keeps an unknown cost, NaN, as NULL)."""
    sums: list[Any] = [math.nan if v is None else v for v in values[_SUMS_AT:_TAIL_AT]]
    totals = Totals(Usage(*values[_USAGE_AT:_SUMS_AT]), *sums)
    return _by_position(*values[:_USAGE_AT], totals, *values[_TAIL_AT:])


_by_position: Callable[..., SessionSummary] = SessionSummary  # the columns are in field order


def _has(needle: str, *values: str | None) -> bool:
    return any(needle in (value or "").casefold() for value in values)


@contextlib.contextmanager
def _open(folder: Path) -> Iterator[sqlite3.Connection]:
    """The index of `folder` (made 0600, emptied when from another version; a damaged one is
    replaced, and one that cannot be opened at all is kept in memory for this listing)."""
    try:
        db = _connect(folder / INDEX_NAME)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            os.unlink(folder / INDEX_NAME)
        try:
            db = _connect(folder / INDEX_NAME)
        except (OSError, sqlite3.Error):
            db = _connect(None)
    try:
        yield db
    finally:
        db.close()


def _connect(path: Path | None) -> sqlite3.Connection:
    if path is not None:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
    db = sqlite3.connect(":memory:" if path is None else path, timeout=10)
    try:
        db.create_function("has", -1, _has, deterministic=True)
        _schema(db)
    except sqlite3.Error:
        db.close()
        raise
    return db


def _schema(db: sqlite3.Connection) -> None:
    version = f"{SCHEMA} {__version__}"
    with db:
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        found = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if found != (version,):
            db.execute("DROP TABLE IF EXISTS rows")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))
        # Typeless columns keep each value as written (an int, a float, a text, NULL).
        columns = ", ".join((*_FIELDS[1:], "size", "mtime", "listed"))
        db.execute(f"CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, {columns})")
