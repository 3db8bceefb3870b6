"""The transcript: one JSONL file per session, its format, writer and reader side by side.

- `records`: what a line means (the typed records, their JSON both ways, the history rule,
  a message's references to the tool results recorded before it);
- `writer`: session ids and paths, and the one writer (locked, append-only, flushed per record);
- `reader`: the one reader, a single walk from a file to a `Transcript` (header, turns,
  history, outcome), which the sessions commands, resume, fork, replay and simulate all take.

The names other packages use are each module's `__all__`, imported here; docs/run.md
("Transcript format") documents the records.
"""

from __future__ import annotations

from agentctl.sessions.transcript.reader import *  # noqa: F403
from agentctl.sessions.transcript.records import *  # noqa: F403
from agentctl.sessions.transcript.writer import *  # noqa: F403
