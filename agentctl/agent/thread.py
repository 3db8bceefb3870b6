"""Message threads (beta `message-threads-2026-08-12`): a turn sends only what is new.

With `api.threads` on, the first request of a run carries `thread: {"type": "create"}` and
the whole history; the server holds the conversation under its response's id, and each
later request is `thread: {"type": "continue", "previous_message_id": ID}` with only the
messages added since that response (none after a `pause_turn`) and without `system` and
`tools`, which the thread keeps from its create (the SDK's tool runner does the same:
anthropic/lib/threads/_thread_state.py). Everything else is as without threads: the loop
builds the whole request (batched clearing steers on it, the transcript records it) and
this module only cuts what goes over the wire.

A new thread is created when the history the request starts from changes (an on-demand
compaction's summary, or a reply's threshold compaction block: the loop then holds and sends
the history from that block on, and a new thread holds no more than the server reads), and
for the turn after a refusal (the server may hold the refused turn). A compaction request
goes without a thread. When the server does not know the thread (404, as after a restart)
the turn is sent again as a new thread; when it refuses threads (400 naming `thread`), the
run goes on without them, sending the whole history the loop holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentctl.errors import ApiError

BETA_THREADS = "message-threads-2026-08-12"
CREATE_ONLY = ("system", "tools")  # the thread's own after its create


@dataclass
class Thread:
    """Where a run stands on its server-held thread."""

    on: bool
    previous_id: str | None = None  # the reply the next request continues from
    start: int = 0  # the history index the thread's first message is at
    held: int = 0  # history[:held] is what the server holds (through the last reply)
    sending: int = 0  # the history's length when the request in flight was sent

    def wire(self, request: Mapping[str, Any], history_length: int, start: int) -> dict[str, Any]:
        """What goes over the wire for `request` (the whole request, `start` the index of
        its first message in a history of `history_length` messages)."""
        out = dict(request)
        self.sending = history_length
        if not self.on:
            return out
        out["betas"] = [*request.get("betas", ()), BETA_THREADS]
        if self.previous_id is None or start != self.start or self.held > history_length:
            self.previous_id, self.start = None, start
            out["thread"] = {"type": "create"}
            return out
        for name in CREATE_ONLY:
            out.pop(name, None)
        out["messages"] = list(request["messages"][self.held - start :])
        out["thread"] = {"type": "continue", "previous_message_id": self.previous_id}
        return out

    def answered(self, raw: Mapping[str, Any], stop_reason: str) -> None:
        """The request in flight was answered by `raw` (the message as sent)."""
        if not self.on:
            return
        message_id = raw.get("id")
        if stop_reason == "refusal" or not isinstance(message_id, str) or not message_id:
            self.previous_id = None
            return
        self.previous_id, self.held = message_id, self.sending + 1

    def recovers(self, err: ApiError) -> bool:
        """Whether a failed threaded request is worth sending again (this state adjusted)."""
        if not self.on:
            return False
        if err.status == 404 and self.previous_id is not None:
            self.previous_id = None  # the server lost the thread: a new one, whole history
            return True
        if err.status == 400 and "thread" in str(err):
            self.on, self.previous_id = False, None  # no threads here: the whole history
            return True
        return False
