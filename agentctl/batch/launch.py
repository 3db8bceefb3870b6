"""A whole batch, for the CLI and Python callers alike: the folder (new, or resumed), the
tasks, the executor, the run, the summary. `run_batch` is `agentctl.run_batch`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentctl.agent.task import default_workspace
from agentctl.batch.events import BatchEvent, ExecutorReady
from agentctl.batch.executor import check_executor, open_executor
from agentctl.batch.folder import (
    BatchLock,
    BatchSpec,
    ResultsStore,
    choices,
    create,
    default_of,
    load_spec,
    new_out_dir,
)
from agentctl.batch.scheduler import run_tasks
from agentctl.batch.source import BatchTask, read_source
from agentctl.batch.summary import Summary, summarize
from agentctl.batch.task_run import Raised, keep_out
from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.loader import (
    BUILTIN_SOURCE,
    PATH_KEYS,
    Overrides,
    dotted_path,
    find_profile_path,
    from_cwd,
    parse_set_value,
)
from agentctl.runner import resolve


@dataclass(frozen=True)
class Prepared:
    """A batch ready to run: its folder, settings, tasks and the results it already holds."""

    out: Path
    spec: BatchSpec
    tasks: list[BatchTask]
    store: ResultsStore
    resumed: bool
    lock: BatchLock  # held until `start` ends: no second run of the same folder meanwhile
    raised: Raised = field(default_factory=Raised)  # tasks a resume continues past a limit

    @property
    def todo(self) -> int:
        done = self.store.finished() - set(self.raised.lines)
        return len(self.tasks) - len(done & {t.id for t in self.tasks})

    def left_at_limit(self) -> list[dict[str, Any]]:
        """The lines of tasks stopped on a limit that this run leaves as they are."""
        ids = {task.id for task in self.tasks}
        return [
            line
            for line in self.store.lines
            if line.get("status") == "limit"
            and line["id"] in ids
            and line["id"] not in self.raised.lines
        ]


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: its folder, every result line it holds (this call's and earlier
    ones'), the summary, and what this call skipped (budget) or left unfinished (Ctrl-C)."""

    out: Path
    results: tuple[dict[str, Any], ...]
    summary: Summary
    skipped: tuple[str, ...] = ()
    unfinished: tuple[str, ...] = ()
    interrupted: bool = False


@dataclass(frozen=True)
class BatchRequest(BatchSpec):
    """A batch as `agentctl batch`'s flags and `run_batch`'s keywords ask for it: its settings
    (the `BatchSpec` fields; 0, "" or None: not given) and where it goes: a new batch of `source` in
    `out` (None: a new folder), or with `resume` the saved batch in that folder, where only
    parallel, max_usd, executor and address may change. Built once by the caller;
    `plan_batch` turns it into the saved `BatchSpec`."""

    out: str | Path | None = None
    resume: str | Path | None = None
    max_turns: int | None = None  # a new batch: --set max_turns=N; a resume: raised (prepare)

    def spec(self) -> BatchSpec:
        """The settings alone (what a batch folder saves)."""
        return BatchSpec(**{f.name: getattr(self, f.name) for f in fields(BatchSpec)})


def new_spec(asked: BatchRequest) -> BatchSpec:
    """A new batch's settings, paths made absolute (a resume may run from elsewhere)."""
    if asked.source is None:
        raise UsageError("missing source: a folder of task files, a glob, or a JSONL file")
    for name, allowed in choices().items():  # a default ("" for via) is not given
        value = getattr(asked, name)
        if value not in allowed and value != default_of(name):
            raise UsageError(f"--{name} {value}: use {' or '.join(allowed)}")
    found = find_profile_path(asked.profile)  # recorded: a resume elsewhere reads the same file
    turns = () if asked.max_turns is None else (f"max_turns={asked.max_turns}",)
    return replace(
        asked.spec(),
        source=str(Path(asked.source).expanduser().absolute()),
        profile=str(found.absolute()) if found else BUILTIN_SOURCE,
        sets=tuple(absolute_set(item) for item in (*asked.sets, *turns)),
    )


def prepare(spec: BatchSpec | None, out: Path | None, asked: BatchRequest) -> Prepared:
    """Start a batch (`spec` given; `out` or a new folder) or resume the one in `out`, with
    --parallel, --max-usd and --executor/--address as `asked` now, else as saved. On a resume,
    `asked.max_turns` (--max-turns) and `asked.max_usd` raise those limits for the tasks they
    stopped, which are continued from their transcripts (batch.task_run.plan_continued)."""
    if spec is None and out is None:
        raise UsageError("a resume needs the batch folder")
    folder = out or new_out_dir()
    saved = _changed(spec or load_spec(folder), asked)
    check_executor(saved.resolved(0))
    assert saved.source is not None
    tasks = read_source(saved.source)  # a bad SOURCE is said before the folder exists
    saved = saved.resolved(len(tasks))
    if spec is not None:
        keep_out(folder, batch_roots(saved, tasks))
        create(folder, saved)
    lock = BatchLock(folder)
    try:
        store = ResultsStore(folder)  # read under the lock: what no other run is adding to
        raised = Raised() if spec is not None else _raised(saved, tasks, store, asked)
    except BaseException:
        lock.release()
        raise
    return Prepared(folder, saved, tasks, store, resumed=spec is None, lock=lock, raised=raised)


def _raised(
    spec: BatchSpec,
    tasks: list[BatchTask],
    store: ResultsStore,
    asked: BatchRequest,
) -> Raised:
    """What a resume continues: the tasks of the source stopped on a limit it raised."""
    raised = Raised(max_turns=asked.max_turns, max_usd=asked.max_usd)
    ids = {task.id for task in tasks}
    lines = {line["id"]: line for line in store.lines if line["id"] in ids and raised.covers(line)}
    if lines and spec.executor == "ray":
        raise UsageError(
            f"--max-turns/--max-usd on --resume continue {len(lines)} tasks stopped on a limit "
            "from their transcripts, here: not with --executor ray; add --executor local"
        )
    return replace(raised, lines=lines)


def absolute_set(item: str) -> str:
    """A --set item with a relative path value made absolute against the current folder
    (what the shell meant), so a resume from elsewhere reads the same path."""
    key, sep, text = item.partition("=")
    path = dotted_path(key.strip()) if sep else None
    value = parse_set_value(text.strip()) if path else None
    if path is None or ".".join(path) not in PATH_KEYS or not isinstance(value, str) or not value:
        return item
    return f"{key.strip()}={json.dumps(from_cwd(path, value))}"


@contextmanager
def working_folder(folder: str) -> Iterator[None]:
    """Run in the folder the batch started in (a resume from elsewhere): paths a profile
    leaves to their defaults (./memory) are the batch's, not the new folder's. The process's
    current folder, restored after; a folder that is gone is refused in one line."""
    before = Path.cwd()
    if Path(folder) == before:
        yield
        return
    try:
        os.chdir(folder)
    except OSError as err:
        raise UsageError(f"the batch was started in {folder}: {err.strerror}") from None
    try:
        yield
    finally:
        os.chdir(before)


def batch_roots(spec: BatchSpec, tasks: list[BatchTask]) -> list[tuple[str, Path]]:
    """The folders each task sees: its memory root and its workspace (its own, else the
    profile's workspace root), as its profile, front matter and --set give them. A task
    whose settings are wrong is left to fail on its own (batch.task_run.plan_task, which also
    checks each task's exact plan again)."""
    roots: list[tuple[str, Path]] = []
    for task in tasks:
        try:
            front = None if spec.trust_task else task.task.front_matter()
            more = Overrides(extra=task.task.overrides, sets=spec.sets, untrusted=front)
            profile, _ = resolve(spec.profile_arg(), more)
        except AgentctlError:
            continue
        roots.append((f"the memory root of {task.where}", profile.memory.root))
        if profile.tools.workspace:
            chosen = task.task.workspace or default_workspace(task.task)
            where = chosen or profile.tools.workspace_root
            roots.append((f"the workspace of {task.where}", where))
    return roots


def _changed(spec: BatchSpec, asked: BatchRequest) -> BatchSpec:
    spec = replace(
        spec,
        parallel=asked.parallel or spec.parallel,
        max_usd=asked.max_usd if asked.max_usd is not None else spec.max_usd,
    )
    if asked.executor:  # a new executor: the saved address was the old one's
        return replace(spec, executor=asked.executor, address=asked.address)
    return spec if asked.address is None else replace(spec, address=asked.address)


def start(prepared: Prepared, on_event: Callable[[BatchEvent], None]) -> BatchResult:
    """Run what the batch has not finished; every event goes to `on_event`."""
    spec, store = prepared.spec, prepared.store
    try:
        with working_folder(spec.cwd), open_executor(spec) as executor:
            on_event(ExecutorReady(spec.executor, executor.where))
            report = run_tasks(
                spec,
                prepared.tasks,
                prepared.out,
                store,
                on_event,
                executor=executor,
                raised=prepared.raised,
            )
    finally:
        prepared.lock.release()
    held = store.finished()  # a continued task skipped or cut short keeps its earlier line
    summary = summarize(
        store.lines,
        [i for i in report.skipped if i not in held],
        [i for i in report.unfinished if i not in held],
    )
    return BatchResult(
        out=prepared.out,
        results=tuple(store.lines),
        summary=summary,
        skipped=tuple(report.skipped),
        unfinished=tuple(report.unfinished),
        interrupted=report.interrupted,
    )


def plan_batch(asked: BatchRequest) -> Prepared:
    """A new batch of `asked.source` (a folder, glob or JSONL file), or with `asked.resume`
    the saved batch in that folder, checked and ready for `start`. `asked.max_turns` is
    `--set max_turns=N` for a new batch; on a resume it raises the limit (`prepare`)."""
    named = asked.resume if asked.resume is not None else asked.out
    where = None if named is None else Path(named).expanduser()
    if asked.resume is not None:
        named_too = (asked.source, asked.profile, asked.out)
        if asked.sets or asked.via or any(item is not None for item in named_too):
            raise UsageError(NOT_WITH_RESUME)
        return prepare(None, where, asked)
    return prepare(new_spec(asked), where, asked)


NOT_WITH_RESUME = (
    "resume=DIR (--resume DIR) runs a saved batch as it was: give no source, "
    "profile, sets, out or via with it"
)


def run_batch(
    source: str | Path | None = None,
    *,
    profile: str | Path | None = None,
    sets: Sequence[str] = (),
    offline: bool = False,
    memory: str = "isolated",
    parallel: int | None = None,
    max_usd: float | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    executor: str | None = None,
    address: str | None = None,
    via: str | None = None,
    trust_task: bool = False,
    max_turns: int | None = None,
    on_event: Callable[[BatchEvent], None] | None = None,
    on_ready: Callable[[Prepared], None] | None = None,
) -> BatchResult:
    """Run every task of `source` (a folder, glob or JSONL file), as `agentctl batch` does
    (`via="batches"`: in lockstep rounds through Message Batches, at batch price); or, with
    `resume=DIR`, what the batch in DIR did not finish (with `max_turns` / `max_usd`: also
    the tasks those limits stopped, continued). `on_ready` is given the checked batch (its
    folder, settings and tasks) before any task starts. See docs/python.md."""
    asked = BatchRequest(
        None if source is None else str(source),
        profile=None if profile is None else str(profile),
        sets=tuple(sets),
        offline=offline,
        memory=memory,
        parallel=parallel or 0,
        max_usd=max_usd,
        out=out,
        resume=resume,
        executor=executor or "",
        address=address,
        via=via or "",
        trust_task=trust_task,
        max_turns=max_turns,
    )
    ready = plan_batch(asked)
    try:
        if on_ready is not None:
            on_ready(ready)
    except BaseException:
        ready.lock.release()
        raise
    return start(ready, on_event or (lambda _event: None))
