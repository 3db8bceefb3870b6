"""Where a batch's tasks run: the seam between the scheduler (order, budget, results, Ctrl-C)
and the place a task executes. `local` runs each task on the scheduler's worker thread; `ray`
(batch.ray_executor) runs it as a Ray task and brings its result, transcript and memory back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from agentctl.batch.folder import BatchSpec
from agentctl.batch.ray_executor import connected
from agentctl.batch.source import BatchTask
from agentctl.batch.task_run import TaskContext, run_task
from agentctl.errors import UsageError

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs one task to its results.jsonl line; called from up to `--parallel` threads."""

    where: str  # said at the start of the batch ("this process", "a local Ray instance")

    def run(self, task: BatchTask, context: TaskContext) -> dict[str, Any]: ...

    def cancel(self) -> None:
        """Ctrl-C: give up on the tasks still running (their lines are not written)."""


class LocalExecutor:
    """Each task on the calling worker thread, counted into the budget turn by turn."""

    where = "this process"

    def run(self, task: BatchTask, context: TaskContext) -> dict[str, Any]:
        return run_task(task, context)

    def cancel(self) -> None:
        """Nothing to stop: the worker threads are daemons, their tasks go unrecorded."""


def check_executor(spec: BatchSpec) -> None:
    """UsageError (exit 2) for an executor setting that cannot work."""
    if spec.executor not in EXECUTORS:
        raise UsageError(f"--executor {spec.executor}: use local or ray")
    if spec.address is not None and spec.executor != "ray":
        raise UsageError("--address names a Ray cluster: use it with --executor ray")
    if spec.executor == "ray" and spec.via == "batches":
        raise UsageError(
            "--via batches cannot be used with --executor ray: the rounds gather every task's "
            "request in this process; use --executor local (the default) with --via batches"
        )
    if spec.executor == "ray" and spec.memory == "shared":
        raise UsageError(
            "--memory shared cannot be used with --executor ray: Ray tasks may run on other "
            "machines, with no folder in common; use --memory isolated"
        )


@contextmanager
def open_executor(spec: BatchSpec) -> Iterator[Executor]:
    """The executor `spec` names, ready for the batch (a Ray connection made, and closed after)."""
    check_executor(spec)
    if spec.executor == "local":
        yield LocalExecutor()
        return
    with connected(spec.address) as executor:
        yield executor
