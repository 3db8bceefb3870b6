"""The transcript: one JSONL file per session, its format, writer and reader side by side.

- `format`: what a line means (the typed records, their JSON both ways, the history rule,
  a message's references to the tool results recorded before it);
- `writer`: session ids and paths, and the one writer (locked, append-only, flushed per record);
- `reader`: the one reader, a single walk from a file to a `Transcript` (header, turns,
  history, outcome), which the sessions commands, resume, fork, replay and simulate all take.

The names other packages use are imported here; docs/run.md ("Transcript format") documents
the records.
"""

from __future__ import annotations

from agentctl.sessions.transcript.format import (
    BATCH_PRICE,
    LIST_PRICE,
    EventRecord,
    FollowUpRecord,
    MalformedRecord,
    MessageRecord,
    Record,
    RequestRecord,
    ResponseRecord,
    ResumeRecord,
    SessionHeader,
    ToolResultRecord,
    apply_message,
    from_json,
    pricing_label,
    to_json,
    with_history,
)
from agentctl.sessions.transcript.reader import (
    MessagesView,
    Transcript,
    TurnRecord,
    find_session,
    list_sessions,
    load_session,
    read_kinds,
    read_records,
    read_transcript,
)
from agentctl.sessions.transcript.writer import (
    TranscriptWriteError,
    TranscriptWriter,
    WriteFn,
    in_use,
    json_safe,
    make_private_dirs,
    new_session_id,
    prepare_folder,
    save_transcript,
    session_path,
)

__all__ = [
    "BATCH_PRICE",
    "LIST_PRICE",
    "EventRecord",
    "FollowUpRecord",
    "MalformedRecord",
    "MessageRecord",
    "MessagesView",
    "Record",
    "RequestRecord",
    "ResponseRecord",
    "ResumeRecord",
    "SessionHeader",
    "ToolResultRecord",
    "Transcript",
    "TranscriptWriteError",
    "TranscriptWriter",
    "TurnRecord",
    "WriteFn",
    "apply_message",
    "find_session",
    "from_json",
    "in_use",
    "json_safe",
    "list_sessions",
    "load_session",
    "make_private_dirs",
    "new_session_id",
    "prepare_folder",
    "pricing_label",
    "read_kinds",
    "read_records",
    "read_transcript",
    "save_transcript",
    "session_path",
    "to_json",
    "with_history",
]
