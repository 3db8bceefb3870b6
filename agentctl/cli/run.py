"""`agentctl run`: parse flags, build the run, render its events. Thin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.agent.events import ErrorEvent, TurnEvent
from agentctl.errors import AgentctlError
from agentctl.render.safe import error_line

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
3 stopped by a limit (turns, budget, max_tokens), 130 interrupted.
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
    print(error_line(err), file=sys.stderr)
    if json_mode:
        from agentctl.render.ndjson import NdjsonWriter

        NdjsonWriter(sys.stdout).handle(ErrorEvent(err.kind, str(err)))


def _run(opts: RunOptions, *, json_mode: bool, quiet: bool, shown: list[ErrorEvent]) -> None:
    from agentctl.agent.runner import execute, open_client, prepare
    from agentctl.render.answer import render_answer
    from agentctl.render.factory import make_renderer

    prep = prepare(opts, sys.stdin)
    for warning in [] if quiet else prep.warnings:
        print(error_line(f"warning: {warning}"), file=sys.stderr)
    renderer = make_renderer(json_mode=json_mode, quiet=quiet, stdout=sys.stdout, stderr=sys.stderr)
    turns: list[TurnEvent] = []
    try:
        with open_client(prep) as client:
            result = execute(prep, lambda e: _handle(renderer, e, shown, turns), client)
    finally:
        renderer.close()
    if not quiet:
        _print_ledger(prep.profile, turns, result.session)
    if not json_mode:
        render_answer(result.text, sys.stdout)


def _handle(
    renderer: Renderer, event: Event, shown: list[ErrorEvent], turns: list[TurnEvent]
) -> None:
    renderer.handle(event)
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
