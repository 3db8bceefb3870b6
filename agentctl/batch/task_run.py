"""One task of a batch as a normal run: its plan (memory copy, budget share), its result line."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentctl.agent.model import ModelClient
from agentctl.agent.retry import RetryGate
from agentctl.batch.folder import BatchSpec, task_folder
from agentctl.batch.source import BatchTask
from agentctl.errors import AgentctlError, LimitError, UsageError
from agentctl.profile.loader import Overrides
from agentctl.runner import Plan, RunResult, execute, open_client, plan_new, plan_resume, resolve
from agentctl.sessions.transcript import LIST_PRICE, make_private_dirs
from agentctl.types import Event, Totals, TurnEvent

if TYPE_CHECKING:
    from agentctl.agent.rounds import RoundClient, RoundCoordinator
    from agentctl.profile.settings import LimitSettings, MemorySettings, Profile


# The limits a resume can raise, by the `limit` a result line names: the flag that raises it.
RAISABLE = {"max_turns": "--max-turns", "max_usd": "--max-usd"}


@dataclass(frozen=True)
class Raised:
    """The limits a `--resume` raised (`--max-turns N`, `--max-usd X`) and the tasks stopped
    on one of them, by id with their last result line: continued from their transcripts."""

    max_turns: int | None = None
    max_usd: float | None = None
    lines: dict[str, dict[str, Any]] = field(default_factory=dict)

    def covers(self, line: dict[str, Any]) -> bool:
        """Is `line` a task stopped on a limit this resume raised?"""
        if line.get("status") != "limit":
            return False
        limit = line.get("limit")
        return (limit == "max_turns" and self.max_turns is not None) or (
            limit == "max_usd" and self.max_usd is not None
        )


class Budget:
    """The batch-wide `--max-usd`: what was spent (from every worker's turns) against it."""

    def __init__(self, limit: float | None, spent: float = 0.0) -> None:
        self.limit = limit if limit and limit > 0 else None
        self.spent = spent
        self._lock = threading.Lock()

    def add(self, cost: float) -> None:
        if math.isfinite(cost):
            with self._lock:
                self.spent += cost

    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def remaining(self) -> float | None:
        return None if self.limit is None else max(self.limit - self.spent, 0.0)


@dataclass(frozen=True)
class TaskContext:
    """What every task of one batch shares."""

    spec: BatchSpec
    out: Path
    gate: RetryGate
    budget: Budget
    rounds: RoundCoordinator | None = None  # --via batches: every request goes in its rounds
    raised: Raised = field(default_factory=Raised)  # what a resume continues


class BudgetSpentError(LimitError):
    """Via batches: a turn found the batch budget (--max-usd) spent."""


class _Tally:
    """The task's totals turn by turn (a failed task keeps what it spent), fed to the budget.
    `stop_at_budget` (via batches, where every task is in flight at once, so "no new task
    starts" bounds nothing): a turn that finds the batch budget spent ends the task."""

    def __init__(self, plan: Plan, budget: Budget, *, stop_at_budget: bool = False) -> None:
        self.cost = plan.pricing().cost
        self.budget = budget
        self.stop_at_budget = stop_at_budget
        self.totals = Totals()
        self.turns = 0

    def handle(self, event: Event) -> None:
        if isinstance(event, TurnEvent):
            cost = self.cost(event.usage)
            self.totals = self.totals.add_turn(event, cost)
            self.turns += 1
            self.budget.add(cost)
            if self.stop_at_budget and self.budget.exhausted():
                raise BudgetSpentError(
                    f"the batch budget is spent (--max-usd {self.budget.limit:g})"
                )


def run_task(task: BatchTask, context: TaskContext) -> dict[str, Any]:
    """Plan and run the task; its line for results.jsonl, whether it finished or failed.
    Via batches, its requests go in the rounds, from the worker's place (batch.scheduler)."""
    earlier = context.raised.lines.get(task.id)
    seat = context.rounds.seat(task.id) if context.rounds else nullcontext(None)
    with seat as rounds:
        try:
            if earlier is None:
                plan = plan_task(task, context, batched=rounds is not None)
            else:
                plan = plan_continued(task, earlier, context, batched=rounds is not None)
        except AgentctlError as err:
            line = refused_line(task, err)
        else:
            line = run_plan(task, plan, context.gate, context.budget, rounds)
    return line if earlier is None else continued_line(earlier, line)


def refused_line(task: BatchTask, err: AgentctlError) -> dict[str, Any]:
    """The line of a task that could not be planned (it never ran)."""
    return _line(task, "failed", err.exit_code, error=str(err))


def failed_line(task: BatchTask, plan: Plan, error: str) -> dict[str, Any]:
    """The line of a planned task that was lost without an answer (exit code 1)."""
    return _line(task, "failed", 1, plan=plan, error=error)


def line_cost(line: dict[str, Any]) -> float:
    """What a result line says the task spent (0 when it does not say)."""
    cost = line.get("cost_usd")
    return float(cost) if isinstance(cost, int | float) else 0.0


def run_plan(
    task: BatchTask,
    plan: Plan,
    gate: RetryGate,
    budget: Budget,
    rounds: RoundClient | None = None,
) -> dict[str, Any]:
    """Run the planned task (spending counted into `budget` turn by turn); its result line.
    `rounds`: its requests go in the batch's lockstep rounds instead of its own client."""
    tally = _Tally(plan, budget, stop_at_budget=rounds is not None)
    connection: AbstractContextManager[ModelClient] = (
        nullcontext(rounds) if rounds is not None else open_client(plan, gate=gate)
    )
    try:
        with connection as model:
            result = execute(plan, client=model, on_event=tally.handle)
    except AgentctlError as err:
        if err.exit_code != 3:
            return _line(task, "failed", err.exit_code, tally, plan, error=str(err))
        line = _line(task, "limit", 3, tally, plan, error=str(err))
        return {**line, "limit": _limit_hit(err, tally, plan)}
    return _line(task, "ok", 0, tally, plan, result=result)


def _limit_hit(err: AgentctlError, tally: _Tally, plan: Plan) -> str:
    """Which limit stopped the task (results.jsonl's `limit`), checked in the order the loop
    checks them (agent.loop.check_limits); `stop` for a stop reason (max_tokens, a context
    window exceeded), which no batch flag raises."""
    limits = plan.profile.limits
    if isinstance(err, BudgetSpentError):
        return "max_usd"
    if tally.turns >= plan.profile.max_turns:
        return "max_turns"
    if limits.max_input_tokens and tally.totals.usage.prompt_tokens >= limits.max_input_tokens:
        return "max_input_tokens"
    if limits.max_usd and tally.totals.cost_usd >= limits.max_usd:
        return "max_usd"
    return "stop"


def plan_task(task: BatchTask, context: TaskContext, *, batched: bool = False) -> Plan:
    """The task's plan under the batch's profile, its front matter (and JSONL `set`), then
    --set; with its own copy of the memory root (isolated) and at most what is left of the
    batch budget as its own limit; `batched`: priced as a Message Batches run."""
    spec = context.spec
    overrides = Overrides(sets=spec.sets)
    plan = plan_new(
        task.task, spec.profile_arg(), overrides, offline=spec.offline, trust_task=spec.trust_task
    )
    roots = [("the memory root", plan.profile.memory.root), ("the workspace", plan.workspace)]
    keep_out(context.out, [(f"{what} of {task.where}", root) for what, root in roots if root])
    if batched and spec.offline:
        _one_emulator(task, plan, resolve(spec.profile_arg(), overrides)[0])
    limits = _within_budget(plan.profile.limits, context.budget)
    memory = plan.profile.memory
    if spec.memory == "isolated":
        root = _copy_memory(memory, context.out, task.id)
        memory = dataclasses.replace(memory, root=root)
    profile = dataclasses.replace(plan.profile, limits=limits, memory=memory)
    return dataclasses.replace(plan, profile=profile, batch_price=batched)


def _within_budget(limits: LimitSettings, budget: Budget) -> LimitSettings:
    """`limits` with at most what is left of the batch budget as `max_usd`."""
    left = budget.remaining()
    if left is not None and not (limits.max_usd and limits.max_usd <= left):
        return dataclasses.replace(limits, max_usd=max(left, 1e-9))
    return limits


def plan_continued(
    task: BatchTask, earlier: dict[str, Any], context: TaskContext, *, batched: bool = False
) -> Plan:
    """A task stopped on a limit this resume raised, continued from its transcript as
    `run --resume` does (its recorded profile, memory and workspace; limits counted from
    here): --max-turns on top, and its own `limits.max_usd` (as the batch's profile, front
    matter and --set give it) within what is left of the batch budget."""
    spec, raised = context.spec, context.raised
    session = earlier.get("session")
    if not session:
        raise UsageError(f"{task.where}: its result line names no session to continue")
    values: dict[str, Any] = {}
    if raised.max_turns is not None:
        values["max_turns"] = raised.max_turns
    origins = {key: f"--max-turns {value}" for key, value in values.items()}
    plan = plan_resume(str(session), Overrides(values=values, origins=origins))
    front = task.task.front_matter()
    more = Overrides(sets=spec.sets, extra=front.data, untrusted=None if spec.trust_task else front)
    own = resolve(spec.profile_arg(), more)[0].limits.max_usd
    limits = dataclasses.replace(plan.profile.limits, max_usd=own)
    profile = dataclasses.replace(plan.profile, limits=_within_budget(limits, context.budget))
    return dataclasses.replace(plan, profile=profile, batch_price=batched)


def continued_line(earlier: dict[str, Any], line: dict[str, Any]) -> dict[str, Any]:
    """The line of a continued task: this part's outcome, with the turns, totals and cost of
    both parts (what the task spent in all: the budget and the summary count it once)."""
    both = Totals.from_json(earlier.get("totals") or {}) + Totals.from_json(
        line.get("totals") or {}
    )
    totals = both.to_json()
    return {
        **line,
        "turns": int(earlier.get("turns") or 0) + int(line.get("turns") or 0),
        "totals": totals,
        "cost_usd": totals["cost_usd"],  # a line's cost is its totals' (see _line)
        "session": line.get("session") or earlier.get("session"),
        "memory": line.get("memory") or earlier.get("memory"),
    }


def keep_out(out: Path, roots: list[tuple[str, Path]]) -> None:
    """UsageError if the batch folder `out` is inside one of `roots` (named folders a task
    sees): tasks would read each other's answers and memory, and an isolated copy of a
    memory root holding it would copy itself into itself."""
    where = out.expanduser().resolve()
    for what, root in roots:
        base = Path(root).expanduser().resolve()
        if where == base or base in where.parents:
            raise UsageError(
                f"--out {out}: inside {what} ({base}), which tasks see; "
                "put the batch folder elsewhere"
            )


def _one_emulator(task: BatchTask, plan: Plan, batch_profile: Profile) -> None:
    """UsageError for what a task would need its own emulator for: `--via batches --offline`
    has one emulator answer every task (the batch profile's server model, built-in web)."""
    mine = plan.profile.context_editing.server_model
    shared = batch_profile.context_editing.server_model
    if mine != shared:
        why = f"context_editing.server_model {mine!r}: not with --via batches --offline"
        raise UsageError(
            f"{task.where}: {why} (its one emulator plays {shared or 'the default'!r})"
        )
    if plan.script is not None:
        why = "emulator_script: not with --via batches (one emulator answers every task)"
        raise UsageError(f"{task.where}: {why}")
    if plan.web is not None:
        why = f"{plan.web}: an offline web for one task, not with --via batches --offline"
        raise UsageError(f"{task.where}: {why} (one emulator with the built-in web answers all)")


def _copy_memory(memory: MemorySettings, out: Path, task_id: str) -> Path:
    """A fresh copy of the base root for this task (agentctl's own files left out); the base
    is only read, and first measured against the memory limits (a sparse file would be
    copied at its full size for every task)."""
    base = memory.root
    dest = task_folder(out, task_id) / "memory"
    if dest.exists():  # a task cut short before: start again from the base
        shutil.rmtree(dest)
    make_private_dirs(dest.parent)
    if base.is_dir():
        _check_copy(base, memory)
        ignore = shutil.ignore_patterns(".agentctl*")
        shutil.copytree(base, dest, symlinks=True, ignore=ignore)
    else:
        dest.mkdir(mode=0o700)
    dest.chmod(0o700)
    return dest.resolve()


def _check_copy(base: Path, memory: MemorySettings) -> None:
    """UsageError naming the file and the limit if the base root holds more than a memory
    root may (memory.max_file_bytes, max_total_bytes, max_files); walked without recursion."""
    total = files = 0
    for folder, dirs, names in os.walk(base):
        dirs[:] = [name for name in dirs if not name.startswith(".agentctl")]
        for name in names:
            path = Path(folder) / name
            if name.startswith(".agentctl") or path.is_symlink():
                continue
            size = path.stat().st_size
            total, files = total + size, files + 1
            if size > memory.max_file_bytes:
                _too_big(path, f"{size} bytes, past memory.max_file_bytes {memory.max_file_bytes}")
            if total > memory.max_total_bytes:
                _too_big(base, f"past memory.max_total_bytes {memory.max_total_bytes}")
            if files > memory.max_files:
                _too_big(base, f"more than memory.max_files {memory.max_files} files")


def _too_big(path: Path, why: str) -> None:
    raise UsageError(f"memory root copy: {path}: {why}; each task gets its own copy")


def _line(
    task: BatchTask,
    status: str,
    code: int,
    tally: _Tally | None = None,
    plan: Plan | None = None,
    *,
    result: RunResult | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    totals = tally.totals if tally is not None else Totals()
    return {
        "id": task.id,
        "status": status,
        "exit_code": code,
        "answer": result.text if result is not None else None,
        # the parsed answer when the profile asks for structured output ([output] schema)
        "output": result.output if result is not None else None,
        "turns": tally.turns if tally is not None else 0,
        "totals": totals.to_json(),
        "cost_usd": totals.cost_json,
        "session": plan.session if plan is not None else None,
        "memory": str(plan.profile.memory.root) if plan is not None else None,
        "error": error,
        "source": task.where,
        "pricing": plan.priced if plan is not None else LIST_PRICE,
    }
