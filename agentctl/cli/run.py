"""`agentctl run`: parse flags, build the run, render its events. Thin."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer._click.core import Context as ClickContext
from typer.core import TyperCommand

from agentctl.cli import run_conversation
from agentctl.cli.lifetime import ctrl_c_once, stop_with_parent
from agentctl.cli.memory import ReviewOption, review_sets
from agentctl.cli.run_conversation import latest_by_default
from agentctl.errors import AgentctlError, ClosedPipeError, UsageError
from agentctl.profile.loader import Overrides
from agentctl.profile.settings import Profile
from agentctl.render.lines import say
from agentctl.render.safe import error_line
from agentctl.types import ErrorEvent, Event, StartEvent, TurnEvent

if TYPE_CHECKING:
    from agentctl.cli.run_conversation import Runner
    from agentctl.render.base import Renderer
    from agentctl.runner import Plan, RunResult
    from agentctl.tools.approval import Approver

# Lazy imports: the runner, renderers and transcript readers load when the run starts,
# not for `run --help` (and the SDK only in the client module, on first use).

BUILT_IN = Profile()  # the built-in defaults that --help names

HELP = """\
Run TASK (a Markdown file, or - for stdin) as a tool-use loop with the memory tool, the
read-only workspace tools and server-side context editing, as the profile sets them.

stdout carries the final answer (or NDJSON events with --json); the per-turn table, progress
and warnings go to stderr. Every run the model answers writes a transcript; --resume
continues one.

Exit codes: 0 finished, 1 API or runtime error, 2 usage or configuration error,
3 stopped by a limit (turns, budget, max_tokens), 130 interrupted (Ctrl-C), 141 the reader
of stdout went away (`| head` ends the run and records it as interrupted).

\b
Examples:
  agentctl run examples/research/task.md --offline    no API key needed
  agentctl run task.md --profile configs/balanced.toml --max-usd 2
  agentctl run task.md --json | jq -c 'select(.event == "turn")'
  echo "Summarise ./notes" | agentctl run - --workspace ./notes
  agentctl run --resume last --max-turns 20           continue the last run
  agentctl run -p "Summarise ./notes" --offline       the task as text
  agentctl run -c -p "And the open questions?"        a follow-up question
  agentctl run --fork last@3 -p "Try another route"   branch off at turn 3
  prog | agentctl run - --input-format ndjson --json  one {"text": ...} a line
  agentctl run task.md --output-schema answer.json    a JSON answer, checked
  agentctl run task.md --stream                       the text as it arrives
"""


class _RunCommand(TyperCommand):
    """`--continue`/`-c` with its SESSION left out means the latest session."""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        return super().parse_args(ctx, latest_by_default(args))


def register(root: typer.Typer) -> None:
    """Attach the `run` command to the root app."""
    root.command(name="run", help=HELP, no_args_is_help=True, cls=_RunCommand)(run)


def run(
    task: Annotated[
        str | None,
        typer.Argument(
            metavar="TASK", help="Task file (Markdown, optional +++ TOML front matter), or -."
        ),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="Profile TOML file, or a preset name (balanced, ...)."),
    ] = None,
    model: Annotated[
        str | None, typer.Option(metavar="MODEL", help="Model id for this run.")
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Stop after N turns (exit 3); N >= 1. Default: the profile's max_turns "
            f"(built in: {BUILT_IN.max_turns}).",
        ),
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(
            metavar="X",
            help="Stop once the estimated cost reaches X USD (exit 3); needs a priced model. "
            f"Default: the profile's limits.max_usd (built in: {BUILT_IN.limits.max_usd:g}, "
            "no budget).",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a profile key (repeatable)."),
    ] = None,
    memory_review: ReviewOption = None,
    workspace: Annotated[
        Path | None, typer.Option(metavar="DIR", help="Root of the read-only workspace tools.")
    ] = None,
    json_mode: Annotated[bool, typer.Option("--json", help="NDJSON events on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table; errors only.")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the in-process emulator, no API key.")
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option(metavar="SESSION", help="Continue a run that stopped (id, prefix, last)."),
    ] = None,
    trust_task: Annotated[
        bool,
        typer.Option(
            "--trust-task",
            help="Let the task's front matter set [api], [prices], looser limits, web tools "
            "and paths outside its folder.",
        ),
    ] = False,
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", "-p", metavar="TEXT", help="The task (or follow-up) as text."),
    ] = None,
    follow: Annotated[
        str | None,
        typer.Option(
            "--continue",
            "-c",
            metavar="[SESSION]",
            help="Ask a finished session a follow-up (-p TEXT), in its own transcript "
            "(SESSION: id, prefix; default last).",
        ),
    ] = None,
    fork: Annotated[
        str | None,
        typer.Option(
            metavar="SESSION[@TURN]",
            help="Start a new session from that session's history up to turn TURN's answer "
            "(default: its last turn); -p TEXT asks what comes next.",
        ),
    ] = None,
    input_format: Annotated[
        str,
        typer.Option(
            metavar="text|ndjson",
            help='ndjson: with TASK -, one user turn a stdin line ({"text": ...}), each '
            "answered in turn in one session.",
        ),
    ] = "text",
    output_schema: Annotated[
        Path | None,
        typer.Option(
            "--output-schema",
            metavar="FILE",
            help="JSON Schema file the final answer must match (structured output): the "
            "answer is JSON, checked against it (exit 1 if it does not match); with --json "
            "the result event carries it as `output`. Profile: [output] schema.",
        ),
    ] = None,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream",
            help="Write the model's text to stdout as it arrives (once: not again at the "
            "end); the table stays on stderr. Not with --json.",
        ),
    ] = False,
) -> None:
    run_conversation.check_flags(task, prompt, resume, follow, fork, input_format)
    if stream and json_mode:
        raise UsageError(
            "--stream writes the answer's text to stdout and --json writes NDJSON events "
            "there: use one of them (NDJSON has the answer in its result event)"
        )
    if not quiet and sys.stderr.isatty():  # the SDK and the emulator take a moment to load
        print("agentctl: starting the run…", file=sys.stderr, flush=True)
    sets = [*(set_ or []), *review_sets(memory_review)]
    overrides = flag_overrides(model, max_turns, max_usd, sets, output_schema=output_schema)
    talk = run_conversation.Talk(follow, fork, workspace, offline, trust_task)
    execute_plan = functools.partial(
        _announce_and_execute, json_mode=json_mode, quiet=quiet, stream=stream
    )
    if input_format == "ndjson":  # each turn's errors are reported as a run's are
        run_conversation.converse(
            sys.stdin, profile, overrides, talk,
            execute_plan=execute_plan,
            on_error=functools.partial(_error_event, json_mode=json_mode),
        )  # fmt: skip
        return
    try:
        if prompt is not None or follow is not None or fork is not None:
            plan = run_conversation.plan_flags(task, prompt, profile, overrides, talk)
        else:
            plan = _plan(task, profile, overrides, workspace, offline, resume, trust_task)
    except AgentctlError as err:
        _error_event(err, json_mode=json_mode)
        raise
    execute_plan(plan)


def _announce_and_execute(
    plan: Plan,
    *,
    json_mode: bool,
    quiet: bool,
    runner: Runner | None = None,
    stream: bool = False,
) -> None:
    """The plan's warnings and server note, then the run (`runner`: how to execute it)."""
    for warning in [] if quiet else plan.warnings:
        say(error_line(f"warning: {warning}"), sys.stderr)
    # Name the server rules when they are not the default and matter: the emulator plays them
    # offline, and batched clearing steers by them against any server.
    steering = plan.profile.context_editing.tool_uses.strategy == "batched"
    server = plan.server
    if (
        not quiet
        and server is not None
        and server.source != "default"
        and (plan.offline or steering)
    ):
        say(error_line(server.note()), sys.stderr)
    _execute(plan, json_mode=json_mode, quiet=quiet, runner=runner, stream=stream)


def flag_overrides(
    model: str | None,
    max_turns: int | None,
    max_usd: float | None,
    sets: list[str],
    *,
    output_schema: Path | None = None,
) -> Overrides:
    """--model / --max-turns / --max-usd / --output-schema as override values (after every
    --set), each named in an error as the user typed it."""
    flags = {
        "--model": model,
        "--max-turns": max_turns,
        "--max-usd": max_usd,
        "--output-schema": str(output_schema) if output_schema is not None else None,
    }
    keys = {
        "--model": "model",
        "--max-turns": "max_turns",
        "--max-usd": "limits.max_usd",
        "--output-schema": "output.schema",
    }
    given = {flag: value for flag, value in flags.items() if value is not None}
    return Overrides(
        sets=tuple(sets),
        values={keys[flag]: value for flag, value in given.items()},
        origins={keys[flag]: f"{flag} {value}" for flag, value in given.items()},
    )


def _plan(
    task: str | None,
    profile: str | None,
    overrides: Overrides,
    workspace: Path | None,
    offline: bool,
    resume: str | None,
    trust_task: bool,
) -> Plan:
    """A new run of TASK, or the continuation of a saved session with --resume."""
    from agentctl.agent.task import read_task
    from agentctl.runner import plan_new, plan_resume

    if resume is not None:
        if task is not None or profile is not None:
            raise UsageError(
                "--resume continues a saved session with its own task and profile; "
                "drop TASK/--profile (change keys with --set)"
            )
        return plan_resume(resume, overrides, workspace=workspace, offline=offline)
    if task is None:
        raise UsageError("missing TASK: give a Markdown file, - for stdin, or --resume SESSION")
    return plan_new(
        read_task(task, sys.stdin),
        profile,
        overrides,
        workspace=workspace,
        offline=offline,
        trust_task=trust_task,
    )


def _error_event(err: AgentctlError, *, json_mode: bool) -> None:
    """With --json, an error the run did not report itself goes out as an error event too."""
    if json_mode:
        from agentctl.render.ndjson import NdjsonWriter

        NdjsonWriter(sys.stdout).handle(ErrorEvent(err.kind, str(err)))


class _Screen:
    """The renderer, noting whether it has shown the run's error (then the CLI prints none) and
    how many turns ran; `note` (where memory went) is said right after the start line."""

    def __init__(
        self, renderer: Renderer, note: str | None = None, warnings: list[str] | None = None
    ) -> None:
        self.renderer, self.note = renderer, note
        self.error_shown = False
        self.turns = 0
        # The plan's warnings, printed before the run; those added since (the MCP servers'
        # tools that cannot be offered) are said after the start line.
        self.warnings = warnings if warnings is not None else []
        self.warned = len(self.warnings)

    def handle(self, event: Event) -> None:
        self.renderer.handle(event)
        if self.note and isinstance(event, StartEvent):
            say(self.note, sys.stderr)
        if isinstance(event, StartEvent):
            for warning in self.warnings[self.warned :]:
                say(error_line(f"warning: {warning}"), sys.stderr)
        self.error_shown = self.error_shown or isinstance(event, ErrorEvent)
        self.turns += isinstance(event, TurnEvent)


def _execute(
    plan: Plan,
    *,
    json_mode: bool,
    quiet: bool,
    runner: Runner | None = None,
    stream: bool = False,
) -> None:
    from agentctl.render.answer import render_answer
    from agentctl.render.base import MultiRenderer
    from agentctl.render.factory import make_renderer
    from agentctl.render.stream import AnswerStream
    from agentctl.runner import traces_from_env

    note = None if quiet else _memory_note(plan.profile, stdin_task=plan.task_source == "<stdin>")
    renderer = make_renderer(
        json_mode=json_mode, quiet=quiet, stdout=sys.stdout, stderr=sys.stderr, stream=stream
    )
    if stream:
        # The answer's stream first: a turn's text ends its line before the turn's row.
        renderer = MultiRenderer((AnswerStream(sys.stdout), renderer))
    screen = _Screen(renderer, note, None if quiet else plan.warnings)
    # A second Ctrl-C, while the first stops the run, must not lose the summary so far.
    # OTEL_TRACES_EXPORTER: the run's spans go there (docs/tracing.md).
    with traces_from_env(), ctrl_c_once():
        result = _stop_or_finish(
            plan, renderer, screen, json_mode=json_mode, quiet=quiet, runner=runner
        )
    if not quiet:
        _print_ledger(result, plan)
    if not json_mode and not stream:
        render_answer(result.text, sys.stdout, structured=plan.output_schema is not None)


def _stop_or_finish(
    plan: Plan,
    renderer: Renderer,
    screen: _Screen,
    *,
    json_mode: bool,
    quiet: bool,
    runner: Runner | None = None,
) -> RunResult:
    """Run the plan; on a stop (Ctrl-C, a limit), print what the run did so far."""
    from agentctl.runner import execute

    try:
        # SIGTERM/SIGHUP stop it as Ctrl-C does; with MCP servers the parent's end too.
        with stop_with_parent(bool(plan.profile.mcp.servers)), _approver(renderer) as approve:
            if runner is not None:  # a conversation's next user turn
                return runner(plan, screen.handle, approve)
            return execute(plan, on_event=screen.handle, approve=approve)
    except AgentctlError as err:
        renderer.close()
        # Ctrl-C or a limit: what the run did so far (not when the reader went away).
        if screen.turns and not quiet and not isinstance(err, ClosedPipeError):
            _print_partial_summary(plan.session)
        if screen.error_shown:
            raise typer.Exit(err.exit_code) from None
        _error_event(err, json_mode=json_mode)
        raise
    finally:
        renderer.close()


@contextmanager
def _approver(renderer: Renderer) -> Iterator[Approver | None]:
    """The approval prompt on the terminal (the live table paused while it asks), read from
    stdin, or from the controlling terminal (/dev/tty) when stdin carries the task or the
    turns; None without a terminal on stderr or to read from: the calls the rules ask about
    are denied."""
    from agentctl.render.base import Pausable
    from agentctl.render.prompt import TerminalApprover

    if not sys.stderr.isatty():
        yield None
        return
    pause = renderer.paused if isinstance(renderer, Pausable) else nullcontext
    if sys.stdin.isatty():
        yield TerminalApprover(sys.stdin, sys.stderr, pause)
        return
    try:
        tty = open("/dev/tty", encoding="utf-8", errors="replace")  # noqa: SIM115
    except OSError:  # no controlling terminal (a daemon, setsid, a container without one)
        yield None
        return
    with tty:
        yield TerminalApprover(tty, sys.stderr, pause)


def _print_partial_summary(session: str) -> None:
    """The summary of a run that stopped early, on stderr, as the renderer would draw it."""
    from agentctl.render.factory import make_console
    from agentctl.render.plain import format_summary_lines
    from agentctl.render.table import summary_view
    from agentctl.sessions.report import recorded_result
    from agentctl.sessions.transcript import load_session

    result, events = recorded_result(load_session(session))
    if not sys.stderr.isatty():
        sys.stderr.write("".join(f"{line}\n" for line in format_summary_lines(result, events)))
        return
    console = make_console(sys.stderr, no_color=bool(os.environ.get("NO_COLOR")))
    console.print(summary_view(result, events, console.width, title="summary so far"))


def _memory_note(profile: Profile, *, stdin_task: bool) -> str | None:
    """A task from stdin, or a memory folder this run creates: where memory is kept."""
    root = profile.memory.root
    if not profile.tools.memory or not (stdin_task or not root.exists()):
        return None
    return f"agentctl: memory: {root}{'' if root.exists() else ' (a new folder)'}"


def _print_ledger(result: RunResult, plan: Plan) -> None:
    """Did each clearing pay for its cache rewrite? For the whole session, said so on resume
    (and after a follow-up or a fork, whose turn numbers go on too)."""
    from agentctl.render.sessions_view import ledger_line

    line = ledger_line(result.balances, result.session_id)
    if line and result.resumed:
        first, last = result.first_turn + 1, result.first_turn + len(result.turns)
        scope = "the whole session" if result.balances_cover_session else "these turns only"
        how = "forked" if plan.forked_from else "continued" if plan.follow_up else "resumed"
        line += (
            f"\n  {how} at turn {first}: the table covers turns {first}-{last}; "
            f"the cache accounting covers {scope}"
        )
    if line:
        say(line, sys.stderr)
