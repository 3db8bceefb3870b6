"""`agentctl run`: parse flags, build the run, render its events. Thin."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.agent.events import ErrorEvent, StartEvent, TurnEvent
from agentctl.errors import AgentctlError, ClosedPipeError

if TYPE_CHECKING:
    from agentctl.agent.events import Event
    from agentctl.agent.runner import RunOptions
    from agentctl.profile.settings import Profile
    from agentctl.render.ndjson import Renderer

HELP = """\
Run TASK (a Markdown file, or - for stdin) as a tool-use loop with the memory tool, the
read-only workspace tools and server-side context editing, as the profile sets them.

stdout carries the final answer (or NDJSON events with --json); the per-turn table, progress
and warnings go to stderr. Every run writes a transcript; --resume continues one.

Exit codes: 0 finished, 1 API or runtime error, 2 usage or configuration error,
3 stopped by a limit (turns, budget, max_tokens), 130 interrupted (Ctrl-C, or the reader of
stdout went away: `| head` ends the run and records it as interrupted).

\b
Examples:
  agentctl run examples/research/task.md --offline      the emulator plays the model
  agentctl run task.md --profile configs/balanced.toml --max-usd 2
  agentctl run task.md --json | jq -c 'select(.event == "turn")'
  echo "Summarise ./notes" | agentctl run - --workspace ./notes
  agentctl run --resume last --max-turns 20              continue the last run
"""


def register(root: typer.Typer) -> None:
    """Attach the `run` command to the root app."""
    root.command(name="run", help=HELP, no_args_is_help=True)(run)


def run(
    task: Annotated[
        str | None,
        typer.Argument(
            metavar="TASK", help="Task file (Markdown, optional +++ TOML front matter), or -."
        ),
    ] = None,
    profile: Annotated[str | None, typer.Option(metavar="FILE", help="Profile TOML file.")] = None,
    model: Annotated[
        str | None, typer.Option(metavar="MODEL", help="Model id for this run.")
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option(metavar="N", help="Stop after N turns (exit 3).")
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(metavar="X", help="Stop once the estimated cost reaches X USD (exit 3)."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a profile key (repeatable)."),
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option(metavar="DIR", help="Root of the read-only workspace tools.")
    ] = None,
    json_mode: Annotated[bool, typer.Option("--json", help="NDJSON events on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No table; errors only.")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the in-process emulator, no API key.")
    ] = False,
    resume: Annotated[
        str | None, typer.Option(metavar="SESSION", help="Continue a session (id, prefix, last).")
    ] = None,
) -> None:
    from agentctl.agent.runner import RunOptions

    opts = RunOptions(
        task, profile, model, max_turns, max_usd, tuple(set_ or ()), workspace, offline, resume
    )
    shown: list[ErrorEvent] = []
    try:
        _run(opts, json_mode=json_mode, quiet=quiet, shown=shown)
    except AgentctlError as err:
        if not shown:  # else the renderer has already shown the run's error event
            _report_early(err, json_mode=json_mode)
        raise typer.Exit(err.exit_code) from None


def _report_early(err: AgentctlError, *, json_mode: bool) -> None:
    """An error before the run started: one line on stderr, and the error event with --json."""
    print(f"agentctl: {err}", file=sys.stderr)
    if json_mode:
        from agentctl.render.ndjson import NdjsonWriter

        NdjsonWriter(sys.stdout).handle(ErrorEvent(err.kind, str(err)))


def _run(opts: RunOptions, *, json_mode: bool, quiet: bool, shown: list[ErrorEvent]) -> None:
    from agentctl.agent.runner import execute, open_client, prepare
    from agentctl.render.answer import render_answer
    from agentctl.render.factory import make_renderer

    if not quiet and sys.stderr.isatty():  # the SDK and the emulator take a moment to load
        print("agentctl: starting the run…", file=sys.stderr, flush=True)
    prep = prepare(opts, sys.stdin)
    for warning in [] if quiet else prep.warnings:
        print(f"agentctl: warning: {warning}", file=sys.stderr)
    # Decided now, before the run creates the folder; said once the run has started.
    note = None if quiet else _memory_note(prep.profile, stdin_task=opts.task == "-")
    renderer = make_renderer(json_mode=json_mode, quiet=quiet, stdout=sys.stdout, stderr=sys.stderr)
    turns: list[TurnEvent] = []
    try:
        with open_client(prep) as client:
            result = execute(prep, lambda e: _handle(renderer, e, shown, turns, note), client)
    except AgentctlError as err:
        renderer.close()
        # Ctrl-C or a limit: what the run did so far (not when the reader went away).
        if turns and not quiet and not isinstance(err, ClosedPipeError):
            _print_partial_summary(prep.session)
        raise
    finally:
        renderer.close()
    if not quiet:
        _print_ledger(prep.profile, turns, result.session)
    if not json_mode:
        render_answer(result.text, sys.stdout)


def _print_partial_summary(session: str) -> None:
    """The summary of a run that stopped early, on stderr, as the renderer would draw it."""
    from agentctl.render.factory import make_console
    from agentctl.render.plain import format_summary_lines
    from agentctl.render.table import summary_view
    from agentctl.sessions.catalog import load_session
    from agentctl.sessions.report import recorded_result

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


def _handle(
    renderer: Renderer,
    event: Event,
    shown: list[ErrorEvent],
    turns: list[TurnEvent],
    note: str | None = None,
) -> None:
    renderer.handle(event)
    if note and isinstance(event, StartEvent):  # after the start line, which comes first
        print(note, file=sys.stderr)
    if isinstance(event, ErrorEvent):
        shown.append(event)
    if isinstance(event, TurnEvent):
        turns.append(event)


def _print_ledger(profile: Profile, turns: list[TurnEvent], session: str) -> None:
    """Per-edit cache accounting of this run (did each clearing pay for its cache rewrite?)."""
    from agentctl.sessions.breakeven import balances_for_run, ledger_line

    balances = balances_for_run(
        profile.model, turns, ttl=profile.cache.ttl, overrides=profile.prices
    )
    line = ledger_line(balances, session)
    if line:
        print(line, file=sys.stderr)
