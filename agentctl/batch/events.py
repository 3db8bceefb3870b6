"""What a batch reports as it goes: tasks started, ended (their result line), skipped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TaskStarted:
    id: str
    where: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "task_start", "id": self.id, "source": self.where}


@dataclass(frozen=True)
class TaskEnded:
    outcome: dict[str, Any]  # the task's line in results.jsonl

    def to_json(self) -> dict[str, Any]:
        return {"event": "task_end", **self.outcome}


@dataclass(frozen=True)
class TaskSkipped:
    id: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "task_skipped", "id": self.id, "why": self.why}


@dataclass(frozen=True)
class ExecutorReady:
    """Where the tasks run (`--executor`), said once before the first starts."""

    executor: str
    where: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "executor", "executor": self.executor, "where": self.where}


@dataclass(frozen=True)
class WorkerCrashed:
    """A bug in a worker (not an AgentctlError): the batch stops and it is raised again."""

    error: BaseException

    def to_json(self) -> dict[str, Any]:
        return {"event": "crash", "error": repr(self.error)}


BatchEvent = ExecutorReady | TaskStarted | TaskEnded | TaskSkipped | WorkerCrashed
