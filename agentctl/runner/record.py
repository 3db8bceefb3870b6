"""A run's transcript, started by its first response, and the whole session's edit ledger.

A run that fails before the model answers once (a bad key, a model the API refuses, a memory
root it cannot write) leaves no session behind, so `last` still names the last real run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentctl import clock
from agentctl.agent.model import ModelResponse
from agentctl.context.prices import Pricing
from agentctl.errors import AgentctlError
from agentctl.sessions.breakeven import EditBalance, balances_for_run
from agentctl.sessions.index import RowWriter
from agentctl.sessions.transcript import (
    FollowUpRecord,
    Record,
    ResumeRecord,
    TranscriptWriter,
    WriteFn,
    prepare_folder,
)
from agentctl.types import TurnEvent

if TYPE_CHECKING:
    from agentctl.runner.plan import Plan


class SessionRecorder(TranscriptWriter):
    """A TranscriptWriter that holds a new session's records (with their times) until the
    first response; with no path it records nothing.

    A resumed session's file exists: it is opened (and locked, and checked to be still
    `expect_size` bytes) at once, so a second run of it is refused before it sends anything.
    `write` is the os.write-like call for every record (a seam for full-disk tests).
    """

    def __init__(
        self,
        path: Path | None,
        *,
        resumed: bool = False,
        expect_size: int | None = None,
        write: WriteFn = os.write,
    ) -> None:
        self.path = path or Path()
        self._wanted = path is not None
        self._fd = -1
        self._pending: list[Record] = []
        self._results: dict[str, str] = {}  # TranscriptWriter's, set before the file opens
        self._write_fn, self._expect_size = write, expect_size
        self.opened = False  # stays True once the file exists, after close too
        if self._wanted:  # an unusable sessions folder is said before anything is sent
            prepare_folder(self.path.parent)
        if resumed:
            self._open()

    def append(self, record: Record) -> None:
        if self._fd >= 0:
            super().append(record)
        elif self._wanted:
            self._pending.append(replace(record, ts=round(clock.timestamp(), 3)))

    def response(self, turn: int, response: ModelResponse) -> None:
        self._open()
        super().response(turn, response)

    def _open(self) -> None:
        if self.opened or not self._wanted:
            return
        super().__init__(
            self.path, write=self._write_fn, expect_size=self._expect_size, observer=RowWriter()
        )
        self.opened = True
        for record in self._pending:
            super().append(record)
        self._pending.clear()


def write_header(writer: TranscriptWriter, plan: Plan) -> None:
    """The session record (a new run, a fork) or a resume record, then the messages not yet
    recorded; a follow-up's record goes just before its message, the last."""
    if not plan.resumed:
        writer.append(plan.header())
    elif plan.follow_up is None:
        writer.append(ResumeRecord(plan.session, plan.first_turn, plan.priced))
    last = len(plan.messages) - (plan.follow_up is not None)
    for index in range(plan.recorded, last):
        writer.message(index, plan.messages[index])
    if plan.follow_up is not None:
        writer.append(
            FollowUpRecord(
                plan.session, plan.first_turn, plan.follow_up, plan.priced, plan.new_client
            )
        )
        writer.message(last, plan.messages[last])


def session_balances(
    session: str, pricing: Pricing, turns: Sequence[TurnEvent], *, recorded: bool
) -> tuple[tuple[EditBalance, ...] | None, bool]:
    """(per-edit cache accounting, whether it covers the whole session). From the transcript,
    as `stats` computes it, when there is a readable one (a resumed run then counts its
    earlier turns too, each at its own pricing); else from this run's `turns` at `pricing`
    (the plan's). None: the model has no price."""
    if recorded:
        try:
            return _from_transcript(session), True
        except AgentctlError:  # e.g. a record cut by an earlier crash: this run's turns only
            pass
    balances = balances_for_run(turns, pricing)
    return (None if balances is None else tuple(balances)), False


def _from_transcript(session: str) -> tuple[EditBalance, ...] | None:
    from agentctl.sessions.catalog import session_profile
    from agentctl.sessions.report import ledger
    from agentctl.sessions.simulate import recorded_run
    from agentctl.sessions.transcript import load_session

    saved = load_session(session)
    prices = session_profile(saved)
    if prices.pricing(saved.model).price is None:
        return None
    return tuple(ledger(saved, prices, recorded_run(saved, prices)))
