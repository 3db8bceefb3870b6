"""Run a batch's tasks on N worker threads: one shared retry gate, one budget, one results file.

Each task is a normal run (`runner.plan_new` -> `runner.execute`), with its own emulator when
offline, on this process or wherever the executor (batch.executor) sends it. Workers only run
tasks and write result lines; every event goes through a queue to
the calling thread, which alone calls `on_event` (so rendering needs no lock) and alone sees
Ctrl-C: then nothing new starts, the executor gives up on running tasks, which are left
unrecorded (a resume runs them again), and the report says `interrupted`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentctl.agent.retry import RetryGate
from agentctl.agent.rounds import RoundCoordinator
from agentctl.batch.events import (
    BatchEvent,
    TaskEnded,
    TaskSkipped,
    TaskStarted,
    WorkerCrashed,
)
from agentctl.batch.executor import Executor, LocalExecutor
from agentctl.batch.folder import BatchSpec, ResultsStore
from agentctl.batch.source import BatchTask
from agentctl.batch.task_run import Budget, Raised, TaskContext, line_cost
from agentctl.batch.via import open_rounds
from agentctl.runner import BatchTrace, traced_batch

# Ctrl-C can be delivered to any thread (a worker, the emulator's server); the main thread,
# blocked on a lock with no timeout, would then never run Python's handler (seen: a batch that
# ignored SIGINT while a worker waited on the memory lock). Waking this often lets it run.
SIGNAL_POLL_S = 0.2


@dataclass
class BatchReport:
    """What this invocation did: skipped (budget) and unfinished (Ctrl-C) ids; the results
    file holds everything that finished, in this invocation or before."""

    skipped: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    interrupted: bool = False


def run_tasks(
    spec: BatchSpec,
    tasks: list[BatchTask],
    out: Path,
    store: ResultsStore,
    on_event: Callable[[BatchEvent], None],
    *,
    gate: RetryGate | None = None,
    executor: Executor | None = None,
    rounds: RoundCoordinator | None = None,
    raised: Raised | None = None,
) -> BatchReport:
    """Run the tasks of `tasks` that `store` does not hold yet, and those `raised` continues
    (on `executor`, else in this process); see the module docstring. `spec.via == "batches"`:
    every request goes in lockstep rounds (`rounds`, else one opened here from the spec:
    agentctl.batch.via)."""
    spec = spec.resolved(len(tasks))  # a spec given here directly may leave defaults out
    gate = gate or RetryGate()
    runner = executor or LocalExecutor()
    more = raised or Raised()
    if spec.via != "batches" or rounds is not None:
        return _run(spec, tasks, out, store, on_event, gate, runner, rounds, more)
    with open_rounds(spec, gate) as opened:
        return _run(spec, tasks, out, store, on_event, gate, runner, opened, more)


def _run(
    spec: BatchSpec,
    tasks: list[BatchTask],
    out: Path,
    store: ResultsStore,
    on_event: Callable[[BatchEvent], None],
    gate: RetryGate,
    executor: Executor,
    rounds: RoundCoordinator | None,
    raised: Raised,
) -> BatchReport:
    done = store.finished() - set(raised.lines)
    todo = [task for task in tasks if task.id not in done]
    spent = sum(line_cost(line) for line in store.lines)
    budget = Budget(spec.max_usd, spent)
    batched = rounds if spec.via == "batches" else None
    context = TaskContext(spec, out, gate, budget, batched, raised)
    with traced_batch(len(todo), spec.executor, spec.via) as trace:
        pool = _Pool(todo, context, store, executor, trace)
        pool.start(max(1, min(spec.parallel, len(todo))))
        return pool.drain(on_event)


class _Pool:
    """Daemon worker threads taking tasks in order; their events come back through `events`."""

    def __init__(
        self,
        todo: list[BatchTask],
        context: TaskContext,
        store: ResultsStore,
        executor: Executor,
        trace: BatchTrace,
    ) -> None:
        self.todo: queue.Queue[BatchTask] = queue.Queue()
        for task in todo:
            self.todo.put(task)
        self.events: queue.Queue[BatchEvent] = queue.Queue()
        self.context, self.store, self.executor = context, store, executor
        self.trace = trace  # a span per task, under the batch's (runner.trace)
        self.pending = {task.id for task in todo}
        self.stop = threading.Event()

    def start(self, workers: int) -> None:
        if self.context.rounds is not None:
            self.context.rounds.join(workers)  # before any worker can ask
        for n in range(workers):
            threading.Thread(target=self._work, name=f"batch-{n}", daemon=True).start()

    def _work(self) -> None:
        try:
            self._tasks()
        finally:
            if self.context.rounds is not None:
                self.context.rounds.leave()

    def _tasks(self) -> None:
        while not self.stop.is_set():
            try:
                task = self.todo.get_nowait()
            except queue.Empty:
                return
            try:
                self.events.put(self._one(task))
            except BaseException as err:  # a bug: the calling thread raises it again
                self.events.put(WorkerCrashed(err))
                return

    def _one(self, task: BatchTask) -> BatchEvent:
        if self.context.budget.exhausted():
            return TaskSkipped(task.id, "the batch budget (--max-usd) is spent")
        self.events.put(TaskStarted(task.id, task.where))
        with self.trace.task(task.id) as traced:
            outcome = self.executor.run(task, self.context)
            traced(outcome)
        self.store.write(outcome)
        return TaskEnded(outcome)

    def drain(self, on_event: Callable[[BatchEvent], None]) -> BatchReport:
        report = BatchReport()
        try:
            while self.pending:
                try:
                    event = self.events.get(timeout=SIGNAL_POLL_S)
                except queue.Empty:
                    continue  # back in Python: a Ctrl-C that reached another thread runs here
                self._note(event, report)
                on_event(event)
        except KeyboardInterrupt:
            self.stop.set()
            self.store.close()
            self.executor.cancel()
            if self.context.rounds is not None:
                self.context.rounds.cancel()  # best effort: the batch in flight
            report.interrupted = True
            report.unfinished = sorted(self.pending)
        return report

    def _note(self, event: BatchEvent, report: BatchReport) -> None:
        if isinstance(event, WorkerCrashed):
            self.stop.set()
            raise event.error
        if isinstance(event, TaskEnded):
            self.pending.discard(event.outcome["id"])
        elif isinstance(event, TaskSkipped):
            self.pending.discard(event.id)
            report.skipped.append(event.id)
