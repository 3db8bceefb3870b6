"""A whole batch, for the CLI and Python callers alike: the folder (new, or resumed), the
tasks, the executor, the run, the summary. `run_batch` is `agentctl.run_batch`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentctl.agent.task import default_workspace
from agentctl.batch.events import BatchEvent, ExecutorReady
from agentctl.batch.executor import check_executor, open_executor
from agentctl.batch.rounds import VIAS
from agentctl.batch.scheduler import run_tasks
from agentctl.batch.source import BatchTask, read_source
from agentctl.batch.store import (
    BatchLock,
    BatchSpec,
    ResultsStore,
    create,
    load_spec,
    new_out_dir,
)
from agentctl.batch.summary import Summary, summarize
from agentctl.batch.task import Raised, keep_out
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
from agentctl.runner.plan import resolve

MEMORY_MODES = ("isolated", "shared")


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


def new_spec(
    source: str | Path,
    *,
    profile: str | Path | None = None,
    sets: Sequence[str] = (),
    offline: bool = False,
    memory: str = "isolated",
    trust_task: bool = False,
    executor: str = "local",
    address: str | None = None,
    via: str = "messages",
) -> BatchSpec:
    """A new batch's settings, paths made absolute (a resume may run from elsewhere)."""
    if memory not in MEMORY_MODES:
        raise UsageError(f"--memory {memory}: use isolated or shared")
    if via not in VIAS:
        raise UsageError(f"--via {via}: use messages or batches")
    found = find_profile_path(profile)  # recorded: a resume elsewhere reads the same file
    spec = BatchSpec(
        source=str(Path(source).expanduser().absolute()),
        profile=str(found.absolute()) if found else BUILTIN_SOURCE,
        sets=tuple(absolute_set(item) for item in sets),
        offline=offline,
        memory=memory,
        trust_task=trust_task,
        executor=executor,
        address=address,
        via=via,
    )
    check_executor(spec)
    return spec


def prepare(
    spec: BatchSpec | None,
    out: Path | None,
    *,
    parallel: int | None = None,
    max_usd: float | None = None,
    executor: str | None = None,
    address: str | None = None,
    max_turns: int | None = None,
) -> Prepared:
    """Start a batch (`spec` given; `out` or a new folder) or resume the one in `out`, with
    --parallel, --max-usd and --executor/--address as given now, else as saved. On a resume,
    `max_turns` (--max-turns) and `max_usd` raise those limits for the tasks they stopped,
    which are continued from their transcripts (batch.task.plan_continued)."""
    if spec is None and out is None:
        raise UsageError("a resume needs the batch folder")
    if spec is not None and max_turns is not None:
        raise UsageError("max_turns raises a limit on a resume; for a new batch, set max_turns")
    folder = out or new_out_dir()
    saved = spec or load_spec(folder)
    saved = _changed(saved, parallel, max_usd, executor, address)
    check_executor(saved)
    tasks = read_source(saved.source)  # a bad SOURCE is said before the folder exists
    if spec is not None and saved.via == "batches" and parallel is None:
        saved = replace(saved, parallel=max(len(tasks), 1))  # every task in each round
    if spec is not None:
        keep_out(folder, batch_roots(saved, tasks))
        create(folder, saved)
    lock = BatchLock(folder)
    try:
        store = ResultsStore(folder)  # read under the lock: what no other run is adding to
        raised = Raised() if spec is not None else _raised(saved, tasks, store, max_turns, max_usd)
    except BaseException:
        lock.release()
        raise
    return Prepared(folder, saved, tasks, store, resumed=spec is None, lock=lock, raised=raised)


def _raised(
    spec: BatchSpec,
    tasks: list[BatchTask],
    store: ResultsStore,
    max_turns: int | None,
    max_usd: float | None,
) -> Raised:
    """What a resume continues: the tasks of the source stopped on a limit it raised."""
    raised = Raised(max_turns=max_turns, max_usd=max_usd)
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
    whose settings are wrong is left to fail on its own (batch.task.plan_task, which also
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


def _changed(
    spec: BatchSpec,
    parallel: int | None,
    max_usd: float | None,
    executor: str | None,
    address: str | None,
) -> BatchSpec:
    spec = replace(
        spec,
        parallel=parallel or spec.parallel,
        max_usd=max_usd if max_usd is not None else spec.max_usd,
    )
    if executor is not None:  # a new executor: the saved address was the old one's
        return replace(spec, executor=executor, address=address)
    return spec if address is None else replace(spec, address=address)


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


def plan_batch(
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
) -> Prepared:
    """A new batch of `source` (a folder, glob or JSONL file), or with `resume=DIR` the saved
    batch in DIR, checked and ready for `start`: the arguments of `run_batch` and of
    `agentctl batch` (SOURCE, --profile, --set, ...) in one place. `max_turns` is
    `--set max_turns=N` for a new batch; on a resume it raises the limit (batch.launch.prepare)."""
    named = resume if resume is not None else out
    where = None if named is None else Path(named).expanduser()
    if resume is not None:
        if source is not None or profile is not None or sets or out is not None or via:
            raise UsageError(
                "resume=DIR (--resume DIR) runs a saved batch as it was: give no source, "
                "profile, sets, out or via with it"
            )
        spec = None
    elif source is None:
        raise UsageError("missing source: a folder of task files, a glob, or a JSONL file")
    else:
        turns = () if max_turns is None else (f"max_turns={max_turns}",)
        spec = new_spec(
            source,
            profile=profile,
            sets=(*sets, *turns),
            offline=offline,
            memory=memory,
            trust_task=trust_task,
            executor=executor or "local",
            address=address,
            via=via or "messages",
        )
    return prepare(
        spec,
        where,
        parallel=parallel,
        max_usd=max_usd,
        executor=executor,
        address=address,
        max_turns=max_turns if spec is None else None,
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
) -> BatchResult:
    """Run every task of `source` (a folder, glob or JSONL file), as `agentctl batch` does
    (`via="batches"`: in lockstep rounds through Message Batches, at batch price); or, with
    `resume=DIR`, what the batch in DIR did not finish (with `max_turns` / `max_usd`: also
    the tasks those limits stopped, continued). See docs/python.md."""
    ready = plan_batch(
        source,
        profile=profile,
        sets=sets,
        offline=offline,
        memory=memory,
        parallel=parallel,
        max_usd=max_usd,
        out=out,
        resume=resume,
        executor=executor,
        address=address,
        via=via,
        trust_task=trust_task,
        max_turns=max_turns,
    )
    return start(ready, on_event or (lambda _event: None))
