"""`--executor ray`: each task runs as a Ray task (batch.parcel.run_parcel on a worker), on a
cluster (`--address`) or on a local Ray instance started for the batch; its line, transcript
and memory land here as the local executor leaves them. The only module that imports Ray.

Each of the scheduler's `--parallel` threads submits one task and waits for it, so N bounds
the tasks in flight. Spending reaches the batch budget when a task comes back (the worker
keeps its own per-task limit, the share of the budget it was planned with).
"""

from __future__ import annotations

import importlib
import logging
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentctl.batch.parcel import (
    Parcel,
    Returned,
    pack_tree,
    pack_workspace,
    run_parcel,
    unpack_tree,
)
from agentctl.batch.source import BatchTask
from agentctl.batch.task_run import TaskContext, failed_line, line_cost, plan_task, refused_line
from agentctl.errors import AgentctlError, InterruptedRunError, UsageError
from agentctl.runner import Plan
from agentctl.sessions.transcript import save_transcript

NO_RAY = "--executor ray needs Ray on this machine: pip install 'agentctl[ray]'"


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise UsageError(NO_RAY) from None


@contextmanager
def connected(address: str | None) -> Iterator[RayExecutor]:
    """An executor on the cluster at `address`, else on a local Ray instance started here
    (and stopped at the end); a process already connected to Ray keeps its connection."""
    ray = _import_ray()
    if ray.is_initialized():
        yield RayExecutor(ray, "the Ray cluster this process is connected to")
        return
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    handlers = _handlers()  # ray.init installs its own SIGTERM handler in this process
    try:
        if address is None:
            ray.init(address="local", include_dashboard=False, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as err:
        what = f"--address {address}: cannot connect to a Ray cluster" if address else None
        raise UsageError(f"{what or 'cannot start a local Ray instance'} ({err})") from None
    where = f"the Ray cluster at {address}" if address else "a local Ray instance started for it"
    try:
        yield RayExecutor(ray, where)
    finally:
        ray.shutdown()
        _restore(handlers)


def _handlers() -> dict[int, Any]:
    """The signal handlers Ray replaces, to put back after it (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}


def _restore(handlers: dict[int, Any]) -> None:
    for sig, handler in handlers.items():
        if handler is not None:  # None: set outside Python, cannot be put back
            signal.signal(sig, handler)


class RayExecutor:
    """Plans each task here, runs it on a Ray worker, lands what comes back in the batch folder."""

    def __init__(self, ray: Any, where: str) -> None:
        self.ray, self.where = ray, where
        # No automatic retry: a rerun spends again; a task whose worker died is `failed`.
        self.remote = ray.remote(max_retries=0)(run_parcel)
        self._lock = threading.Lock()
        # Plans under way (each copies the task's memory into the batch folder): cancel()
        # waits for them, and none starts after it, so nothing of an interrupted batch
        # writes there once it has returned (a resume may start at once, in this process).
        self._planning = 0
        self._planned = threading.Condition(self._lock)
        self._workspaces: dict[Path, Any] = {}  # folder -> ObjectRef of its tar, sent once
        self._running: set[Any] = set()
        self._cancelled = False

    def run(self, task: BatchTask, context: TaskContext) -> dict[str, Any]:
        with self._lock:
            if self._cancelled:  # the store is closed: this line is not written
                return refused_line(task, InterruptedRunError("cancelled by Ctrl-C"))
            self._planning += 1
        try:
            plan = plan_task(task, context)
            parcel = Parcel(task, plan, pack_tree(plan.profile.memory.root), _script(plan))
            workspace = self._workspace(plan.workspace)
        except AgentctlError as err:
            return refused_line(task, err)
        finally:
            with self._lock:
                self._planning -= 1
                self._planned.notify_all()
        back = self._wait(self.remote.remote(parcel, workspace))
        if isinstance(back, str):
            return failed_line(task, plan, back)
        with self._lock:  # cancel() waits for a landing under way; none starts after it
            if self._cancelled:
                return failed_line(task, plan, "cancelled by Ctrl-C")  # the store is closed
            return self._land(back, plan, context)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            self._planned.wait_for(lambda: self._planning == 0)
            running = list(self._running)
        for ref in running:
            self.ray.cancel(ref, force=True)

    def _workspace(self, folder: Path | None) -> Any:
        if folder is None:
            return None
        with self._lock:
            if folder not in self._workspaces:
                self._workspaces[folder] = self.ray.put(pack_workspace(folder))
            return self._workspaces[folder]

    def _wait(self, ref: Any) -> Returned | str:
        """The task's return, or why there is none (cancelled, or its worker or node died).
        A bug in the task is raised again here (the batch stops)."""
        errors = self.ray.exceptions
        with self._lock:
            self._running.add(ref)
            if self._cancelled:
                self.ray.cancel(ref, force=True)
        try:
            back: Returned = self.ray.get(ref)
            return back
        except errors.RayTaskError as err:
            raise err.as_instanceof_cause() from None
        except errors.TaskCancelledError:
            return "cancelled by Ctrl-C"  # the store is closed: this line is not written
        except (errors.WorkerCrashedError, errors.NodeDiedError, errors.ObjectLostError) as err:
            return f"ray: the task was lost with its worker ({type(err).__name__})"
        finally:
            with self._lock:
                self._running.discard(ref)

    def _land(self, back: Returned, plan: Plan, context: TaskContext) -> dict[str, Any]:
        """The task's memory into its folder here, its transcript into the sessions folder."""
        memory = plan.profile.memory.root
        line = {**back.line, "memory": str(memory)}
        context.budget.add(line_cost(line))
        shutil.rmtree(memory, ignore_errors=True)
        try:
            unpack_tree(back.memory, memory, "the memory a Ray task sent back")
            if back.transcript is not None:  # naming the folders here, as a local task's
                save_transcript(plan.session, back.transcript, plan.header())
        except (AgentctlError, OSError) as err:
            code = err.exit_code if isinstance(err, AgentctlError) else 1
            return {**line, "status": "failed", "exit_code": code, "error": str(err)}
        return line


def _script(plan: Plan) -> bytes | None:
    if plan.script is None:
        return None
    try:
        return plan.script.read_bytes()
    except OSError as err:
        why = err.strerror or str(err)
        raise UsageError(f"emulator script {plan.script}: cannot read it ({why})") from None
