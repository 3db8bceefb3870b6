"""Lockstep rounds through the Message Batches API: a ModelClient per task, one batch per round.

Every task runs the normal loop with a `RoundClient`. Its `stream(request)` hands the request
to the `RoundCoordinator` and blocks. The coordinator counts places: a worker that runs tasks
one after another `join`s before its first task and `leave`s after its last, so between two
tasks it still holds the round back (a round never goes out half full just because a worker
was between tasks). When every place has a request waiting, one of the waiting threads sends
them all as one batch (one per distinct set of betas), polls until it has ended, and hands
each task its response: the same ModelResponse a streamed call gives. A request that came
back `errored` with a transient error type or `expired` waits for the next round, at most
`max_retries` times; any other outcome fails that task with an ApiError. Tool calls are
answered by each task's loop between rounds.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentctl.agent.model import ModelResponse, StreamItem
from agentctl.agent.retry import RETRYABLE_ERROR_TYPES
from agentctl.errors import AgentctlError, ApiError, InterruptedRunError

OutcomeKind = Literal["succeeded", "errored", "expired", "canceled"]
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Outcome:
    """One request's result in an ended batch."""

    kind: OutcomeKind
    response: ModelResponse | None = None
    error_type: str = ""
    message: str = ""


class BatchApi(Protocol):
    """The Message Batches calls a coordinator needs (agent/client.AnthropicBatches)."""

    def create(self, requests: Sequence[tuple[str, Mapping[str, Any]]], betas: list[str]) -> str:
        """Send one batch of (custom_id, params); its id."""
        ...

    def ended(self, batch_id: str) -> bool: ...

    def results(self, batch_id: str) -> dict[str, Outcome]: ...

    def cancel(self, batch_id: str) -> None: ...


@dataclass(frozen=True)
class PollPolicy:
    """How often an in-progress batch is asked about: `first_s`, growing by `factor` up to
    `max_s` between retrieves (the first retrieve comes right after the create); after
    `max_wait_s` of waits a batch that has not ended is canceled and the round fails (the API
    ends every batch within 24 hours, by expiry if need be: a server that never ends one must
    not hold the run forever)."""

    first_s: float = 1.0
    factor: float = 2.0
    max_s: float = 60.0
    max_wait_s: float = 25 * 3600.0

    def delays(self) -> Iterator[float]:
        delay = self.first_s
        while True:
            yield delay
            delay = min(delay * self.factor, self.max_s)


@dataclass
class _Slot:
    request: Mapping[str, Any]
    failures: int = 0
    response: ModelResponse | None = None
    error: AgentctlError | None = None

    @property
    def done(self) -> bool:
        return self.response is not None or self.error is not None


@dataclass
class RoundStats:
    """What the coordinator did: rounds run, requests sent again, the batches it sent (not a
    sum of turns: the tasks' turns and totals are their own runs')."""

    rounds: int = 0
    retried: int = 0
    batch_ids: list[str] = field(default_factory=list)

    @property
    def batches(self) -> int:
        return len(self.batch_ids)


class RoundCoordinator:
    """Gathers the live tasks' requests into rounds; see the module docstring."""

    def __init__(
        self,
        api: BatchApi,
        *,
        max_retries: int = 2,
        poll: PollPolicy | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.api = api
        self.max_retries = max_retries
        self.poll = poll or PollPolicy()
        self.stopped = threading.Event()
        self.sleep = sleep or self.stopped.wait  # Ctrl-C (cancel) cuts a wait short
        self.stats = RoundStats()
        self._cond = threading.Condition()
        self._places = 0  # joined and not left: each holds a round back until it has a request
        self._pending: dict[str, _Slot] = {}
        self._used: set[str] = set()
        self._busy = False
        self._in_flight: list[str] = []

    def join(self, places: int = 1) -> None:
        """`places` more takers of the rounds (a worker each), before any of them asks."""
        with self._cond:
            self._places += places

    def leave(self) -> None:
        """A place is done (its worker has no more tasks): rounds no longer wait for it."""
        with self._cond:
            self._places -= 1
            self._cond.notify_all()

    @contextmanager
    def seat(self, name: str) -> Iterator[RoundClient]:
        """A task's client (its custom_id from `name`) for the duration of the block, run in a
        place that has joined."""
        with self._cond:
            custom_id = self._new_id(name)
        try:
            yield RoundClient(self, custom_id)
        finally:
            with self._cond:
                self._pending.pop(custom_id, None)
                self._cond.notify_all()

    def _new_id(self, name: str) -> str:
        """A custom_id for the task (the API allows [A-Za-z0-9_-]{1,64}), unique in this run."""
        base = _NOT_ID.sub("_", name)[:56] or "task"
        custom_id, n = base, 1
        while custom_id in self._used:
            n += 1
            custom_id = f"{base}-{n}"
        self._used.add(custom_id)
        return custom_id

    def submit(self, custom_id: str, request: Mapping[str, Any]) -> ModelResponse:
        """Wait for the round that answers `request`; lead a round when it is ready."""
        slot = _Slot(request)
        with self._cond:
            self._pending[custom_id] = slot
            self._cond.notify_all()
            while not slot.done:
                if self.stopped.is_set():
                    slot.error = InterruptedRunError("stopped by Ctrl-C")
                elif self._ready():
                    self._lead()
                else:
                    self._cond.wait()
            if self._pending.get(custom_id) is slot:
                del self._pending[custom_id]
        if slot.error is not None:
            raise slot.error
        assert slot.response is not None
        return slot.response

    def _ready(self) -> bool:
        return not self._busy and bool(self._pending) and len(self._pending) >= self._places

    def _lead(self) -> None:
        """Run one round with the lock released; then settle its slots (lock held)."""
        self._busy = True
        taken = dict(sorted(self._pending.items()))
        self._cond.release()
        try:
            outcomes: dict[str, Outcome] | AgentctlError = self._run_round(taken)
        except AgentctlError as err:
            outcomes = err
        finally:
            self._cond.acquire()
            self._busy = False
        self._settle(taken, outcomes)
        self._cond.notify_all()

    def _run_round(self, taken: Mapping[str, _Slot]) -> dict[str, Outcome]:
        self.stats.rounds += 1
        groups: dict[tuple[str, ...], list[tuple[str, dict[str, Any]]]] = {}
        for custom_id, slot in taken.items():
            params = dict(slot.request)
            betas = tuple(sorted(params.pop("betas", None) or ()))
            groups.setdefault(betas, []).append((custom_id, params))
        ids = [self.api.create(requests, list(betas)) for betas, requests in groups.items()]
        self.stats.batch_ids.extend(ids)
        self._in_flight = list(ids)
        try:
            outcomes: dict[str, Outcome] = {}
            for batch_id in ids:
                self._wait_for(batch_id)
                outcomes.update(self.api.results(batch_id))
            return outcomes
        finally:
            self._in_flight = []

    def _wait_for(self, batch_id: str) -> None:
        waited = 0.0  # the sum of the waits asked for (no clock: tests inject `sleep`)
        for delay in self.poll.delays():
            if self.stopped.is_set():
                raise InterruptedRunError("stopped by Ctrl-C")
            if self.api.ended(batch_id):
                return
            if waited >= self.poll.max_wait_s:
                with contextlib.suppress(AgentctlError):  # best effort, as on Ctrl-C
                    self.api.cancel(batch_id)
                raise ApiError(
                    f"message batch {batch_id} had not ended after {waited:,.0f} s of polling "
                    "(the API ends a batch within 24 hours); it was canceled"
                )
            self.sleep(delay)
            waited += delay

    def _settle(
        self, taken: Mapping[str, _Slot], outcomes: dict[str, Outcome] | AgentctlError
    ) -> None:
        """Each slot of the round gets its response or error, or stays for the next round;
        settled slots leave `_pending` at once (their threads may not have woken yet)."""
        for custom_id, slot in taken.items():
            if isinstance(outcomes, AgentctlError):
                slot.error = outcomes
            else:
                missing = Outcome("errored", message="missing from the results")
                self._apply(custom_id, slot, outcomes.get(custom_id, missing))
            if slot.done and self._pending.get(custom_id) is slot:
                del self._pending[custom_id]

    def _apply(self, custom_id: str, slot: _Slot, outcome: Outcome) -> None:
        if outcome.kind == "succeeded" and outcome.response is not None:
            slot.response = outcome.response
            return
        why = _describe(outcome)
        transient = outcome.kind == "expired" or outcome.error_type in RETRYABLE_ERROR_TYPES
        if transient and slot.failures < self.max_retries:
            slot.failures += 1
            self.stats.retried += 1
            return  # stays pending: it goes out again in the next round
        tries = f", {slot.failures + 1} attempts (api.max_retries)" if transient else ""
        slot.error = ApiError(f"batch request {custom_id}: {why}{tries}")

    def cancel(self) -> list[str]:
        """Ctrl-C: stop every wait and cancel the batches in flight (best effort); their ids."""
        self.stopped.set()
        with self._cond:
            self._cond.notify_all()
        flying = list(self._in_flight)
        for batch_id in flying:
            with contextlib.suppress(AgentctlError):  # best effort: it ends or expires anyway
                self.api.cancel(batch_id)
        return flying


def _describe(outcome: Outcome) -> str:
    if outcome.kind == "errored":
        return f"errored ({outcome.error_type or 'error'}: {outcome.message})"
    if outcome.kind == "canceled":
        return "canceled (the batch was canceled)"
    return f"{outcome.kind}"


class RoundClient:
    """A ModelClient whose requests go out in the coordinator's rounds (no streaming)."""

    def __init__(self, coordinator: RoundCoordinator, custom_id: str) -> None:
        self.coordinator = coordinator
        self.custom_id = custom_id

    def stream(self, request: Mapping[str, Any]) -> Iterator[StreamItem]:
        yield self.coordinator.submit(self.custom_id, request)
