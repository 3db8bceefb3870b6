"""Recorded sessions as a collection: list rows, pricing and profile of a recorded run,
export and removal. Reading one transcript is `sessions.transcript` (`load_session`)."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentctl.context.prices import Pricing
from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.settings import Profile
from agentctl.sessions.list_row import SessionSummary as SessionSummary
from agentctl.sessions.transcript import (
    BATCH_PRICE,
    LIST_PRICE,
    EventRecord,
    FollowUpRecord,
    Record,
    ResumeRecord,
    SessionHeader,
    Transcript,
    TurnRecord,
    in_use,
    pricing_label,
    read_kinds,
    to_json,
)
from agentctl.types import Totals, Turn

EXPORT_FORMAT = "agentctl-session-export"
EXPORT_VERSION = 1


def priced(prices: Profile, model: str, pricing: str = LIST_PRICE) -> Pricing:
    """The one way a recorded turn is priced: the recorded profile's prices for `model`, at
    the Message Batches discount when its segment (the header, or the resume record before
    it) says `pricing: "batch"`."""
    return dataclasses.replace(prices.pricing(model), batch=pricing == BATCH_PRICE)


def turn_pricing(session: Transcript, prices: Profile, turn: TurnRecord) -> Pricing:
    """How `turn` of `session` is priced, recorded or replayed: `priced` at its pricing."""
    return priced(prices, session.model, turn.pricing)


def session_profile(session: Transcript) -> Profile:
    """The profile the run used, rebuilt from the header (validated like any profile)."""
    return session_profile_of(session.header, session.id)


def session_profile_of(header: SessionHeader, name: str) -> Profile:
    """The profile recorded in a session header; UsageError/ConfigError if it cannot be used."""
    from agentctl.profile.loader import build_profile

    data = header.profile
    if not data:
        raise UsageError(f"session {name}: the header records no profile")
    source = f"session {name}"
    profile, _ = build_profile(data, source=source, base_dir=Path(header.cwd))
    return profile


class SummaryTally:
    """A list row built record by record: from a file's header, resume and event records
    (`summarize`), or as a writer appends them (the sessions index)."""

    ONLY = (SessionHeader.TYPE, EventRecord.TYPE, ResumeRecord.TYPE, FollowUpRecord.TYPE)

    def __init__(self) -> None:
        self.header: SessionHeader | None = None
        self.pricing = LIST_PRICE
        self.turns: list[tuple[Turn, str]] = []  # each turn event with its segment's pricing
        self.status = "incomplete"
        self.follow_ups = 0  # user turns after the first (`run --continue`)

    def add(self, record: Record) -> None:
        if isinstance(record, SessionHeader):
            if self.header is None:
                self.header, self.pricing = record, record.pricing
        elif isinstance(record, ResumeRecord | FollowUpRecord):
            self.pricing = record.pricing
            self.follow_ups += isinstance(record, FollowUpRecord)
        elif isinstance(record, EventRecord):
            self._event(record)

    def _event(self, record: EventRecord) -> None:
        name = record.name
        if name == "turn":
            self.turns.append((Turn.from_json(record.event), self.pricing))
        elif name == "result":
            self.status = str(record.event.get("stop_reason") or "done")
        elif name == "error":
            self.status = str(record.event.get("kind") or "error")

    def summary(self, session: str) -> SessionSummary | None:
        """The row of session `session` (None before its header)."""
        header = self.header
        if header is None:
            return None
        return SessionSummary(
            id=session,
            started=header.ts,
            task=_first_line(header.task) or header.task_source,
            task_source=header.task_source,
            model=header.model,
            turns=len(self.turns),
            status=self.status,
            totals=_summary_totals(header, self.turns),
            pricing=pricing_label([p for _, p in self.turns] or [header.pricing]),
            forked_from=header.forked_from,
            forked_at=header.forked_at,
            follow_ups=self.follow_ups,
        )


def summarize(path: Path) -> SessionSummary | None:
    """The list row of one transcript (header, resume and event records only), None for a
    file without one."""
    try:
        records = read_kinds(path, SummaryTally.ONLY)
    except UsageError:
        return _unreadable(path)
    tally = SummaryTally()
    for record in records:
        tally.add(record)
    return tally.summary(path.stem)


def _unreadable(path: Path) -> SessionSummary | None:
    """A row saying the file cannot be read (`sessions show` names the line), if it is a file."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    started = path.stat().st_mtime
    return SessionSummary(path.stem, started, "", "", "", 0, "unreadable", UNKNOWN_COST)


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line.lstrip("# ")[:60]


UNKNOWN_COST = Totals(cost_usd=math.nan)


def _summary_totals(header: SessionHeader, turns: Sequence[tuple[Turn, str]]) -> Totals:
    """The sum of the turns, each priced at its segment's pricing under the recorded
    profile's prices (cost NaN when unknown)."""
    events = [turn for turn, _ in turns]
    profile = _prices_of(json.dumps(header.profile, sort_keys=True), header.cwd)
    if profile is None:  # a header this version cannot read: the list stays readable
        return Totals.of(events, [None] * len(events)) + UNKNOWN_COST
    model = header.model or profile.model
    return Totals.of(events, [priced(profile, model, p).usd(t.usage) for t, p in turns])


@functools.lru_cache(maxsize=32)
def _prices_of(profile: str, cwd: str) -> Profile | None:
    """The profile of a header (as JSON, and its cwd), None if it cannot be built. Kept: the
    sessions of one machine mostly share a few profiles, and building one is most of the
    cost of reading a transcript's list row."""
    header = SessionHeader(profile=json.loads(profile), cwd=cwd)
    try:
        return session_profile_of(header, "list")
    except AgentctlError:
        return None


def remove_session(session: Transcript) -> Path:
    """Delete the transcript file; the memory the run wrote is left alone."""
    if in_use(session.path):
        raise UsageError(f"session {session.id}: a run is using it; wait for that run to end")
    try:
        os.unlink(session.path)
    except OSError as err:
        raise UsageError(f"session {session.id}: cannot remove {session.path}: {err}") from None
    return session.path


def export_session(session: Transcript) -> dict[str, Any]:
    """The transcript as one JSON document for other tools: header, turns, history, outcome."""
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "session": session.id,
        "status": session.status,
        "header": to_json(session.header),
        "turns": [_turn_json(t) for t in session.turns],
        "messages": list(session.history),
        "result": session.result,
        "error": session.error,
    }


def _turn_json(turn: TurnRecord) -> dict[str, Any]:
    return {
        "turn": turn.turn,
        "ts": turn.ts,
        "messages_count": len(turn.messages),
        "request": turn.body,
        "response": turn.response,
        "event": turn.event.to_json(),
    }
