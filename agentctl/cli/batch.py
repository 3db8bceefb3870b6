"""`agentctl batch`: parse flags, start or resume a batch, print progress and the summary. Thin."""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentctl.cli.memory import ReviewOption, review_sets
from agentctl.errors import InterruptedRunError
from agentctl.render.safe import visible
from agentctl.sessions.transcript import json_safe

if TYPE_CHECKING:
    from agentctl.batch import BatchResult, Prepared
    from agentctl.batch.events import BatchEvent
    from agentctl.render.board import Board

# Lazy imports: the batch machinery (the runner and everything under it) and Rich load when a
# batch starts, not for `batch --help`.

HELP = """\
Run many tasks at once: SOURCE is a folder of task files, a glob ('tasks/*.md'), or a JSONL
file of {"id": ..., "task": "the prompt", "set": {"key": value}} lines. Each task is a normal
run (a transcript each); up to --parallel N run at once, backing off together on a 429.

Output goes to --out DIR (default: a new folder under the data folder, printed at the start):
results.jsonl (one line per finished task: id, status, exit_code, answer, turns, totals,
cost_usd, session, memory), and with --memory isolated (the default) each task's memory in
tasks/ID/memory, copied from the profile's memory root, which is never changed. --memory
shared: one root for all tasks, through the store's lock. --max-usd X: no task starts once
the batch has spent X; running tasks get what is left as their limit.

--executor ray runs each task as a Ray task (pip install 'agentctl[ray]'): on the cluster
at --address ADDR, else on a local Ray instance started for the batch. Profile, task,
workspace and memory copy travel with each task; results, transcripts and memory come back.

--via batches: all tasks advance in lockstep rounds, each round's requests sent as one
Message Batch (half price; a round can take up to 24 h, so this is for evaluations, not
interactive use); tool calls are answered locally between rounds. --parallel then defaults to
every task (a task not in flight waits for a later round). Costs are shown at batch price;
--max-usd then also stops tasks in flight once the batch has spent X. Not with --executor ray
(the rounds are kept in this process).

Ctrl-C stops cleanly (via batches: the batch in flight is canceled, best effort); --resume DIR
runs what did not finish. Tasks stopped on a limit are left as they are, unless the resume
raises it: --resume DIR --max-turns N (or --max-usd X) continues the tasks that limit stopped
from their own transcripts, as run --resume does.

Exit codes: 0 every task finished, 1 a task failed, 2 usage or configuration error,
3 a task hit a limit or the budget stopped the batch, 130 interrupted.

\b
Examples:
  agentctl batch tasks/ --offline --parallel 4
  agentctl batch tasks/ --via batches --max-usd 5
  agentctl batch tasks.jsonl --profile balanced --max-usd 5 --out runs/b1
  agentctl batch --resume runs/b1
  agentctl batch --resume runs/b1 --max-turns 20
  agentctl batch tasks/ --executor ray --address ray://head:10001 --parallel 8
  agentctl batch 'evals/*.md' --json | jq -c 'select(.event == "task_end")'
"""


def register(root: typer.Typer) -> None:
    """Attach the `batch` command to the root app."""
    root.command(name="batch", help=HELP, no_args_is_help=True)(batch)


def batch(
    source: Annotated[
        str | None,
        typer.Argument(metavar="SOURCE", help="Folder of task files, glob, or JSONL file."),
    ] = None,
    profile: Annotated[str | None, typer.Option(metavar="FILE", help="Profile TOML file.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a profile key (repeatable)."),
    ] = None,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline", help="In-process emulators: one per task (--via batches: one for all)."
        ),
    ] = False,
    parallel: Annotated[
        int | None, typer.Option(metavar="N", help="Tasks run at once (default 1).", min=1)
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(
            metavar="X",
            help="Batch budget in USD (on --resume: the new budget, which also continues "
            "tasks stopped on a cost limit).",
            min=0,
        ),
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Each task stops after N turns (exit 3); on --resume: tasks that stopped on "
            "max_turns go on for up to N more.",
            min=1,
        ),
    ] = None,
    memory: Annotated[
        str, typer.Option(metavar="MODE", help="isolated (default) or shared.")
    ] = "isolated",
    memory_review: ReviewOption = None,
    out: Annotated[Path | None, typer.Option(metavar="DIR", help="Batch folder.")] = None,
    resume: Annotated[
        Path | None, typer.Option(metavar="DIR", help="Run what a batch did not finish.")
    ] = None,
    json_mode: Annotated[bool, typer.Option("--json", help="NDJSON events on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    trust_task: Annotated[
        bool, typer.Option("--trust-task", help="As for run: front matter may widen.")
    ] = False,
    executor: Annotated[
        str | None, typer.Option(metavar="NAME", help="local (default) or ray.")
    ] = None,
    address: Annotated[
        str | None, typer.Option(metavar="ADDR", help="Ray cluster (default: a local one).")
    ] = None,
    via: Annotated[
        str | None,
        typer.Option(metavar="API", help="messages (default) or batches (half price)."),
    ] = None,
) -> None:
    from agentctl import batch

    with ExitStack() as traced:
        show = _Progress(traced, json_mode=json_mode, quiet=quiet)
        done = batch.run_batch(
            source,
            profile=profile,
            sets=(*(set_ or ()), *review_sets(memory_review)),
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
            on_event=show.handle,
            on_ready=show.ready,
        )
    show.end(batch.summary_lines(done.summary), done.summary.to_json(), done.out)
    raise typer.Exit(_exit_code(done))


def _left_note(lines: list[dict[str, Any]], out: Path) -> str:
    """One line: the tasks a resume leaves stopped on a limit, and how to continue them."""
    from agentctl.batch.task_run import RAISABLE

    named = ", ".join(f"{line['id']} ({line.get('limit') or 'limit'})" for line in lines[:5])
    more = f" and {len(lines) - 5} more" if len(lines) > 5 else ""
    kinds = [kind for kind in RAISABLE if any(line.get("limit") == kind for line in lines)]
    flags = " ".join(f"{RAISABLE[kind]} {'N' if kind == 'max_turns' else 'X'}" for kind in kinds)
    one = len(lines) == 1
    how = (
        f"to continue {'it' if one else 'them'} from where {'it' if one else 'they'} stopped, "
        f"raise the limit: agentctl batch --resume {out} {flags}"
        if kinds
        else "no batch flag raises these; continue one with agentctl run --resume SESSION --set"
    )
    count = "1 task" if one else f"{len(lines)} tasks"
    left = "left as it is" if one else "left as they are"
    return f"{count} stopped on a limit, {left}: {named}{more}; {how}"


def _exit_code(done: BatchResult) -> int:
    if done.interrupted:
        raise InterruptedRunError(
            f"batch stopped by Ctrl-C; continue with: agentctl batch --resume {done.out}"
        )
    counts = done.summary.counts
    if counts["failed"]:
        return 1
    return 3 if counts["limit"] or counts["skipped"] else 0


class _Progress:
    """Progress on stderr: a line per finished task (under a live status line on a terminal);
    with --json, the events as NDJSON on stdout too."""

    def __init__(self, traced: ExitStack, *, json_mode: bool, quiet: bool) -> None:
        from agentctl.render.board import BoardState

        self.traced, self.state = traced, BoardState(total=0)
        self.json_mode, self.quiet = json_mode, quiet
        self.board: Board | None = None

    def ready(self, ready: Prepared) -> None:
        """The batch is checked: say what a resume leaves, start the progress and the traces."""
        from agentctl.render.board import Board, BoardState
        from agentctl.runner import traces_from_env

        self._resume_notes(ready)
        total, todo = len(ready.tasks), ready.todo
        self.state = BoardState(total=total, before=total - todo)
        if not self.quiet and sys.stderr.isatty():
            self.board = Board(_console(), self.state)
        self._emit({"event": "batch_start", "out": str(ready.out), "tasks": total, "todo": todo})
        self._say(f"agentctl: batch: {todo} of {total} tasks to run; results in {ready.out}")
        if self.board is not None:
            self.board.start()
        self.traced.enter_context(traces_from_env())  # OTEL_TRACES_EXPORTER: the batch's spans

    def _resume_notes(self, ready: Prepared) -> None:
        if not ready.resumed or self.quiet:
            return
        if Path(ready.spec.cwd) != Path.cwd():
            # Relative profile paths (the default ./memory root) mean what they meant there.
            note = f"warning: the batch was started in {ready.spec.cwd}; run --resume from there"
            print(visible(f"agentctl: {note}", keep=""), file=sys.stderr)
        left = ready.left_at_limit()
        if left:
            note = _left_note(left, ready.out)
            print(visible(f"agentctl: batch: {note}", keep=""), file=sys.stderr)

    def handle(self, event: BatchEvent) -> None:
        from agentctl.batch.events import ExecutorReady, TaskEnded, TaskSkipped, TaskStarted

        self._emit(event.to_json())
        self.state.running += isinstance(event, TaskStarted)
        if isinstance(event, ExecutorReady) and event.executor != "local":
            self._say(f"agentctl: batch: tasks run on {event.where}")
        elif isinstance(event, TaskEnded):
            self._ended(event.outcome)
        elif isinstance(event, TaskSkipped):
            self._say(f"[{self._count()}] {event.id} skipped: {event.why}")

    def _ended(self, line: dict[str, Any]) -> None:
        from agentctl.render.format import fmt_usd
        from agentctl.types import Totals

        self.state.finished(Totals.from_json(line["totals"]), failed=line["status"] == "failed")
        cost = fmt_usd(line["cost_usd"])
        text = f"[{self._count()}] {line['id']} {line['status']} ({line['turns']} turns, {cost})"
        self._say(text + (f": {line['error']}" if line["error"] else ""))

    def _count(self) -> str:
        return f"{self.state.before + self.state.done}/{self.state.total}"

    def end(self, lines: list[str], data: dict[str, Any], folder: Path) -> None:
        if self.board is not None:
            self.board.close()
        self._emit(data)
        for line in [] if self.quiet else [*lines, f"  results: {folder / RESULTS}"]:
            print(visible(line, keep=""), file=sys.stderr, flush=True)

    def _say(self, text: str) -> None:
        if self.board is not None:
            self.board.line(text)
        elif not self.quiet:
            print(visible(text, keep=""), file=sys.stderr, flush=True)

    def _emit(self, data: dict[str, Any]) -> None:
        if self.json_mode:
            print(json_safe(json.dumps(data, ensure_ascii=False)), flush=True)


RESULTS = "results.jsonl"


def _console() -> Any:
    from agentctl.render.factory import make_console

    return make_console(sys.stderr, no_color=bool(os.environ.get("NO_COLOR")))
