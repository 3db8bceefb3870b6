"""What travels with a batch task to another machine and back (the Ray executor's payload).

Out: the planned run (profile resolved, budget share set), the task's memory copy, its
workspace and emulator script, as bytes: no shared file system is assumed. On the worker the
plan is pointed at a temporary folder holding them (`run_parcel`). Back: the result line, the
transcript and the resulting memory, as bytes. Imports no Ray: the worker calls `run_parcel`.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.agent.retry import RetryGate
from agentctl.batch.source import BatchTask
from agentctl.batch.task_run import Budget, refused_line, run_plan
from agentctl.errors import UsageError
from agentctl.runner import Plan
from agentctl.tools.workspace import walk_files

# A workspace is packed once per batch and sent to every task that uses it; past this size
# the task is refused rather than pushing a whole checkout through the object store.
WORKSPACE_LIMIT = 64 * 1024 * 1024
TRANSCRIPT = "transcript.jsonl"  # in the worker's folder for the task


@dataclass(frozen=True)
class Parcel:
    """A task ready to run anywhere: its plan and the bytes of the folders it names."""

    task: BatchTask
    plan: Plan
    memory: bytes  # tar of the task's memory copy
    script: bytes | None  # the emulator script file, if the task names one


@dataclass(frozen=True)
class Returned:
    """What a task sends back: its results.jsonl line, transcript and memory (tar)."""

    line: dict[str, Any]
    transcript: bytes | None  # None: the run ended before the model answered once
    memory: bytes


def pack_tree(root: Path) -> bytes:
    """Every file and folder under `root` as tar bytes (symlinks kept as links)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(root.rglob("*")):
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def pack_workspace(root: Path) -> bytes:
    """The workspace as the workspace tools see it (no hidden names, no symlinks), as tar
    bytes; UsageError past WORKSPACE_LIMIT."""
    buffer = io.BytesIO()
    size = 0
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in walk_files(root, root):
            size += path.stat().st_size
            if size > WORKSPACE_LIMIT:
                raise UsageError(
                    f"workspace {root}: more than {WORKSPACE_LIMIT // 2**20} MB to send with "
                    "each Ray task; name a smaller one (front matter `workspace`, "
                    "tools.workspace_root) or set tools.workspace = false"
                )
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def unpack_tree(data: bytes, dest: Path, what: str) -> None:
    """Tar bytes into `dest` (made if missing); members that would land outside are refused
    (tarfile's "data" filter): UsageError naming `what` and the problem."""
    try:
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as err:
        raise UsageError(f"{what}: cannot unpack it in {dest} ({err})") from None


def run_parcel(parcel: Parcel, workspace: bytes | None) -> Returned:
    """On the worker: unpack, run the plan there (its own emulator when offline, its own retry
    gate), pack what came of it."""
    with tempfile.TemporaryDirectory(prefix="agentctl-task-") as tmp:
        folder = Path(tmp)
        try:
            plan = localise(parcel, workspace, folder)
        except UsageError as err:
            return Returned(refused_line(parcel.task, err), None, parcel.memory)
        line = run_plan(parcel.task, plan, RetryGate(), Budget(None))
        saved = folder / TRANSCRIPT
        transcript = saved.read_bytes() if saved.is_file() else None
        return Returned(line, transcript, pack_tree(plan.profile.memory.root))


def localise(parcel: Parcel, workspace: bytes | None, folder: Path) -> Plan:
    """The parcel's plan pointed at `folder`: memory, workspace, script and transcript."""
    plan = parcel.plan
    memory = folder / "memory"
    unpack_tree(parcel.memory, memory, "the task's memory copy")
    profile = plan.profile
    profile = dataclasses.replace(
        profile, memory=dataclasses.replace(profile.memory, root=memory.resolve())
    )
    where = plan.workspace
    if workspace is not None:
        where = (folder / "workspace").resolve()
        unpack_tree(workspace, where, "the task's workspace")
    script = plan.script
    if parcel.script is not None:
        script = folder / "emulator-script"
        script.write_bytes(parcel.script)
    return dataclasses.replace(
        plan, profile=profile, workspace=where, script=script, transcript=folder / TRANSCRIPT
    )
