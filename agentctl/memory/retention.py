"""Keeping a memory root's history within `memory.history_max_bytes`: two journal generations.

Past half the bound, the journal is rotated under the lock: its lines are copied to
`.agentctl-journal.1.jsonl` (replacing the older generation) and a new journal starts with one
`base` record, the tree as it is (every file with its size and blob). Blobs that neither
generation names are deleted; if the history is still over the bound, the older generation
goes too. The bound counts what is kept beyond the tree's own contents and its `base` record:
the history holds at most about the bound plus the tree plus 256 bytes per file.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from typing import Any

from agentctl.memory.fsops import RESERVED_PREFIX, lstat_at, open_own, read_own, write_all
from agentctl.memory.history import blob_sizes, contents_at, drop_blobs, put_blob
from agentctl.memory.journal import (
    JOURNAL_NAME,
    JOURNAL_VERSION,
    OLDER_NAME,
    ROOT,
    JournalMark,
    journal_mark,
    now_iso,
    parse_lines,
)

_NEW = RESERVED_PREFIX + "-journal.new"
# What a file takes in a `base` record, about (its path twice, its size and its blob id).
BASE_LINE_BYTES = 256


def history_bytes(root_fd: int) -> int:
    """The journal's generations and every kept blob, in bytes."""
    sizes = sum(blob_sizes(root_fd).values())
    for name in (JOURNAL_NAME, OLDER_NAME):
        st = lstat_at(root_fd, name)
        sizes += st.st_size if st is not None else 0
    return sizes


def rotate(root_fd: int, allowed: int) -> JournalMark | None:
    """With the lock held: start a new generation and prune to `allowed` bytes (the bound plus
    the tree's own contents); the new journal's mark."""
    base = _base_record(root_fd)
    current = read_own(root_fd, JOURNAL_NAME)
    _write_whole(root_fd, OLDER_NAME, current)
    _write_whole(root_fd, JOURNAL_NAME, _line(base))
    kept = _named(parse_lines(current)) | _named([base])
    drop_blobs(root_fd, set(blob_sizes(root_fd)) - kept)
    if history_bytes(root_fd) > allowed:  # the older generation alone is too big: let it go
        with suppress(FileNotFoundError):
            os.unlink(OLDER_NAME, dir_fd=root_fd)
        drop_blobs(root_fd, set(blob_sizes(root_fd)) - _named([base]))
    return journal_mark(root_fd)


def _base_record(root_fd: int) -> dict[str, Any]:
    files = contents_at(root_fd, ROOT)
    ids = {path: put_blob(root_fd, data)[0] for path, data in files.items()}
    return {
        "time": now_iso(),
        "command": "base",
        "path": ROOT,
        "bytes": sum(map(len, files.values())),
        "files": {path: len(data) for path, data in files.items()},
        "changes": {path: [None, ident] for path, ident in ids.items()},
        "session": None,
        "v": JOURNAL_VERSION,
    }


def _named(records: list[dict[str, Any]]) -> set[str]:
    return {
        ident
        for record in records
        if isinstance(record.get("changes"), dict)
        for pair in record["changes"].values()
        if isinstance(pair, list)
        for ident in pair
        if isinstance(ident, str)
    }


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _write_whole(root_fd: int, name: str, data: bytes) -> None:
    """Replace `name` by a file holding `data`, atomically (a temp file renamed over it)."""
    with suppress(FileNotFoundError):
        os.unlink(_NEW, dir_fd=root_fd)
    fd = open_own(root_fd, _NEW, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(_NEW, name, src_dir_fd=root_fd, dst_dir_fd=root_fd)
    os.fsync(root_fd)
