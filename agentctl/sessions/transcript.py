"""Run transcripts: one JSONL file per session, each record appended and flushed as it happens.

Every record is `{"v": 1, "type": ..., "ts": ..., ...}`; the types and their fields are
documented in docs/run.md (the sessions/simulate commands read them). Files are 0600 in a 0700
folder. Requests are recorded from our own request dict, which never holds credentials.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentctl import clock
from agentctl.agent.events import Event, ToolCall
from agentctl.agent.model import ModelResponse
from agentctl.errors import UsageError
from agentctl.home import sessions_dir, unusable_folder

FORMAT_VERSION = 1
SUFFIX = ".jsonl"
LAST = "last"


def new_session_id() -> str:
    """Sortable and unique enough: UTC time plus 6 random hex digits."""
    return clock.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def session_path(session: str) -> Path:
    return sessions_dir() / f"{session}{SUFFIX}"


def make_private_dirs(folder: Path) -> None:
    """mkdir -p where every folder made is 0700 (mkdir(parents=True) makes parents 0755)."""
    if folder.is_dir():
        return
    make_private_dirs(folder.parent)
    folder.mkdir(mode=0o700, exist_ok=True)


class TranscriptWriter:
    """Appends records to one session file; also the loop's Recorder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            make_private_dirs(path.parent)
            os.chmod(path.parent, 0o700)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as err:  # AGENTCTL_HOME under /proc, a file, read-only: one line, exit 2
            raise unusable_folder(path.parent, err) from None
        os.fchmod(self._fd, 0o600)

    def write(self, record_type: str, **fields: Any) -> None:
        """One record, as one write() of one line, so a crash never interleaves records."""
        record = {
            "v": FORMAT_VERSION,
            "type": record_type,
            "ts": round(clock.timestamp(), 3),
            **fields,
        }
        data = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        while data:
            written = os.write(self._fd, data)
            data = data[written:]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The Recorder protocol of agentctl.agent.loop.
    def message(self, index: int, message: Mapping[str, Any]) -> None:
        self.write("message", index=index, message=dict(message))

    def request(self, turn: int, request: Mapping[str, Any]) -> None:
        """The request minus its messages, which are recorded once each as `message` records."""
        body = {k: v for k, v in request.items() if k != "messages"}
        count = len(request.get("messages") or ())
        self.write("request", turn=turn, messages_count=count, request=body)

    def response(self, turn: int, response: ModelResponse) -> None:
        self.write("response", turn=turn, request_id=response.request_id, message=response.raw)

    def tool_result(self, turn: int, call: ToolCall, content: str) -> None:
        self.write(
            "tool_result",
            turn=turn,
            tool_use_id=call.id,
            name=call.name,
            input=call.input,
            is_error=call.is_error,
            content=content,
        )

    def event(self, event: Event) -> None:
        """Every event except streaming progress (too many, and not needed to replay a run)."""
        to_json = getattr(event, "to_json", None)
        if to_json is not None:
            self.write("event", event=to_json())


def read_records(path: Path) -> list[dict[str, Any]]:
    """All records of a transcript; a last line cut by a crash is skipped, others must parse."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise UsageError(f"session {path}: cannot read: {err.strerror or err}") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise UsageError(f"session {path}: line {number} is not a JSON record") from None
    return records


def list_sessions() -> list[Path]:
    """Transcript files, oldest first by modification time."""
    folder = sessions_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: (p.stat().st_mtime, p.name))


def find_session(ref: str) -> Path:
    """A transcript by session id, unique id prefix, or `last` (most recently written)."""
    sessions = list_sessions()
    if not sessions:
        raise UsageError(f"session {ref}: no sessions yet in {sessions_dir()}")
    if ref == LAST:
        return sessions[-1]
    exact = [p for p in sessions if p.stem == ref]
    matches = exact or [p for p in sessions if p.stem.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"session {ref}: no such session (see `agentctl sessions list`)")
    names = ", ".join(p.stem for p in matches[:5])
    raise UsageError(f"session {ref}: ambiguous prefix, matches {names}")
