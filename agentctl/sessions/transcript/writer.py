"""Writing transcripts: session ids and paths, and the one writer, which appends and flushes
each record as it happens (one JSONL file per session, 0600 in a 0700 folder, locked while a
run owns it). What a line means is `transcript.records`; the reader is `transcript.reader`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from agentctl import clock
from agentctl.agent.model import ModelResponse
from agentctl.errors import AgentctlError, UsageError, os_reason
from agentctl.home import TRANSCRIPT_SUFFIX, sessions_dir, unusable_folder
from agentctl.redact import redact
from agentctl.sessions.transcript.records import (
    EventRecord,
    MalformedRecord,
    MessageRecord,
    Record,
    RequestRecord,
    ResponseRecord,
    SessionHeader,
    ToolResultRecord,
    from_json,
    loads,
    refer_results,
    to_json,
)
from agentctl.types import Event, ToolCall

__all__ = [
    "TranscriptWriteError",
    "TranscriptWriter",
    "WriteFn",
    "in_use",
    "json_safe",
    "make_private_dirs",
    "new_session_id",
    "prepare_folder",
    "save_transcript",
    "session_path",
]


class Observer(Protocol):
    """Sees each record a writer appends to a new transcript, and its close (the sessions
    index's row is written so: sessions.index.RowWriter)."""

    def add(self, record: Record) -> None: ...

    def closed(self, path: Path) -> None: ...


SUFFIX = TRANSCRIPT_SUFFIX
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_CHUNK = 1 << 16
WriteFn = Callable[[int, bytes], int]


_ISSUED: set[str] = set()
_ISSUED_LOCK = threading.Lock()


def new_session_id(token: Callable[[int], str] = secrets.token_hex) -> str:
    """Sortable and unique: UTC time plus 6 random hex digits, never an id this process has
    given before nor one with a transcript (a batch starts many runs in the same second, and
    two runs on one id would write one file). `token` is a seam for tests."""
    stamp = clock.now().strftime("%Y%m%d-%H%M%S")
    with _ISSUED_LOCK:
        while True:
            session = f"{stamp}-{token(3)}"
            if session not in _ISSUED and not session_path(session).exists():
                _ISSUED.add(session)
                return session


def check_session_id(session: str) -> str:
    """The id, if it can name a file in the sessions folder (no `/`, no `..`); else UsageError."""
    if not _ID.fullmatch(session) or ".." in session:
        raise UsageError(f"session {session!r}: not a valid session id (letters, digits, - _ .)")
    return session


def session_path(session: str) -> Path:
    return sessions_dir() / f"{check_session_id(session)}{SUFFIX}"


def make_private_dirs(folder: Path) -> None:
    """mkdir -p where every folder made is 0700 (mkdir(parents=True) makes parents 0755)."""
    if folder.is_dir():
        return
    make_private_dirs(folder.parent)
    folder.mkdir(mode=0o700, exist_ok=True)


def prepare_folder(folder: Path) -> None:
    """Make the sessions folder (0700); one line, exit 2, naming it if it cannot be made or
    written (AGENTCTL_HOME under /proc, a file, read-only)."""
    try:
        make_private_dirs(folder)
        os.chmod(folder, 0o700)
    except OSError as err:
        raise unusable_folder(folder, err) from None


def save_transcript(session: str, data: bytes, header: SessionHeader | None = None) -> Path:
    """A whole transcript recorded elsewhere (a batch task run on another machine), saved
    where this machine keeps the session's (0600); never over an existing one. `header`
    replaces its session header (keeping its time): the folders as named on this machine."""
    if header is not None:
        data = _with_header(data, header)
    path = session_path(session)
    prepare_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        rest = memoryview(data)
        while rest:
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _with_header(data: bytes, header: SessionHeader) -> bytes:
    first, _, rest = data.partition(b"\n")
    try:
        old = from_json(loads(first))
    except (ValueError, MalformedRecord):
        return data  # not a header we can read: kept as it came
    if not isinstance(old, SessionHeader):
        return data
    return _encode(replace(header, ts=old.ts)) + rest


class TranscriptWriteError(AgentctlError):
    """The transcript could not be written (a full disk): the run stops, what was saved stays."""


class TranscriptWriter:
    """Appends records to one session file, which it locks; also the loop's Recorder.

    `write` is the `os.write`-like call used for every record (a seam for full-disk tests).
    A last line cut by a crash is removed (or ended, if it is a whole record) before appending.
    `expect_size`: the size the file had when it was read to be resumed; if another run has
    written since, continuing from what was read would fork the session, so it is refused.
    """

    def __init__(
        self,
        path: Path,
        *,
        write: WriteFn = os.write,
        expect_size: int | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.path, self._write = path, write
        self.repaired = ""  # what was done to a cut last line, if anything
        self._fd, self._failed, self._saved, self._turn = -1, False, 0, 0
        # the content of each tool result written since the last message, by tool_use id:
        # the message that carries them refers to these records instead of repeating them
        self._results: dict[str, str] = {}
        prepare_folder(path.parent)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            os.fchmod(self._fd, 0o600)
        except OSError as err:
            self.close()
            if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise unusable_folder(path.parent, err) from None
            message = f"session {path.stem}: cannot open {path}: {os_reason(err)}"
            raise TranscriptWriteError(message) from None
        self._lock()
        self._check_unchanged(expect_size)
        try:
            self._end = self._repair_tail()
        except OSError as err:
            self.close()
            why = os_reason(err)
            message = f"session {path.stem}: cannot end the cut last line of {path}: {why}"
            raise TranscriptWriteError(message) from None
        self._observer = observer if self._end == 0 else None  # sees a new file's records

    def _lock(self) -> None:
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            self.close()
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                message = f"session {self.path.stem}: cannot lock {self.path}: {os_reason(err)}"
                raise TranscriptWriteError(message) from None
            raise UsageError(
                f"session {self.path.stem}: another agentctl run is using it ({self.path}); "
                "wait for that run to end"
            ) from None

    def _check_unchanged(self, expect_size: int | None) -> None:
        if expect_size is None or os.fstat(self._fd).st_size == expect_size:
            return
        self.close()
        raise UsageError(
            f"session {self.path.stem}: another run wrote to it after it was read ({self.path}); "
            "resume it again"
        )

    def _repair_tail(self) -> int:
        """The file's size after ending or cutting off an unterminated last line."""
        size = os.fstat(self._fd).st_size
        start = _after_last_newline(self._fd, size)
        if start == size:
            return size
        if _is_record(os.pread(self._fd, size - start, start)):
            self.repaired = "ended the last line"
            self._write_all(b"\n")
            return size + 1
        os.ftruncate(self._fd, start)
        self.repaired = f"removed a cut last line ({size - start} bytes)"
        return start

    def append(self, record: Record) -> None:
        """One record, as one write() of one line, so a crash never interleaves records.

        A record with no time (`ts` 0) is stamped now; one held back keeps its own."""
        if self._failed:
            return  # the error that stopped the run was raised already
        stamped = record if record.ts else replace(record, ts=round(clock.timestamp(), 3))
        data = _encode(stamped)
        try:
            self._write_all(data)
        except OSError as err:
            self._fail(err)
        self._end += len(data)
        self._saved += 1
        self._turn = max(self._turn, getattr(record, "turn", 0))
        if self._observer is not None:
            self._observer.add(stamped)

    def _write_all(self, data: bytes) -> None:
        while data:
            written = self._write(self._fd, data)
            if written <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            data = data[written:]

    def _fail(self, err: OSError) -> None:
        """Cut off the partial line and stop with one line saying what the file holds."""
        self._failed = True
        # If this fails too, the reader skips the cut last line and the next writer removes it.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._end)
        raise TranscriptWriteError(
            f"session {self.path.stem}: cannot write {self.path}: {os_reason(err)}; saved: the "
            f"transcript up to turn {self._turn} ({self._saved} records by this run) and the "
            f"memory changes made; free space, then continue with: "
            f"agentctl run --resume {self.path.stem}"
        ) from None

    def write(self, record_type: str, **fields: Any) -> None:
        """A record given as its type and fields (validated like a read one)."""
        record = from_json({"type": record_type, **fields})
        if record is None:
            raise ValueError(f"unknown transcript record type {record_type!r}")
        self.append(record)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self._index()

    def _index(self) -> None:
        """Tell the observer of a file this writer wrote whole that it is closed (a resumed or
        failed one is left to the next listing, which finds the index's row stale)."""
        observer, self._observer = getattr(self, "_observer", None), None
        if observer is not None and not self._failed:
            observer.closed(self.path)

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The Recorder protocol of agentctl.agent.loop.
    def message(self, index: int, message: Mapping[str, Any]) -> None:
        """A history message; a tool result this writer recorded is referred to, not repeated."""
        record = refer_results(MessageRecord(index, dict(message)), self._results)
        self._results.clear()
        self.append(record)

    def request(self, turn: int, request: Mapping[str, Any], history: int | None = None) -> None:
        """The request minus its messages, which are recorded once each as `message` records;
        `history`: how many messages of the session's history it answers (default: as many
        as it carries; a request sent from a compaction block on carries fewer)."""
        body = {k: v for k, v in request.items() if k != "messages"}
        count = len(request.get("messages") or ()) if history is None else history
        self.append(RequestRecord(turn, count, body))

    def response(self, turn: int, response: ModelResponse) -> None:
        self.append(ResponseRecord(turn, response.request_id or "", dict(response.raw)))

    def tool_result(self, turn: int, call: ToolCall, content: str) -> None:
        record = ToolResultRecord(
            turn, call.id, call.name, call.input, call.is_error, content, denied=call.denied
        )
        self.append(record)
        self._results[call.id] = content

    def event(self, event: Event) -> None:
        """Every event except streaming progress (too many, and not needed to replay a run)."""
        event_json = getattr(event, "to_json", None)
        if event_json is not None:
            self.append(EventRecord(event_json()))


def _encode(record: Record) -> bytes:
    """The record as one line of JSON, with no credential in it (agentctl.redact: the last guard,
    whatever a tool, file or server put in a record)."""
    line = redact(json.dumps(to_json(record), ensure_ascii=False, default=str))
    return (json_safe(line) + "\n").encode("utf-8")


# A lone surrogate (a file name that is not UTF-8, as Python decodes it) has no UTF-8 form; in
# JSON it is written as its `\udcXX` escape, which reads back as the same name.
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_safe(line: str) -> str:
    """JSON text (dumped with ensure_ascii=False) that encodes as UTF-8, lossless."""
    return line if line.isascii() else _SURROGATE.sub(_json_escape, line)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def in_use(path: Path) -> bool:
    """Whether a run holds the transcript's lock right now."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _after_last_newline(fd: int, size: int) -> int:
    """The offset just after the file's last newline (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def _is_record(data: bytes) -> bool:
    try:
        return isinstance(loads(data), dict)
    except ValueError:
        return False
