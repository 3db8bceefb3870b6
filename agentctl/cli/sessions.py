"""`agentctl sessions ...`, `stats`, `simulate`, `tune`: recorded runs and what-if tuning. Thin."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer

from agentctl.errors import AgentctlError, UsageError
from agentctl.render.safe import error_line, visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

app = typer.Typer(
    help="Recorded runs (transcripts): list, show, remove, export.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

P = ParamSpec("P")
R = TypeVar("R")
SessionArg = Annotated[
    str, typer.Argument(metavar="SESSION", help="Session id, unique prefix, or `last`.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


def register(root: typer.Typer) -> None:
    """Attach the `sessions` group and the top-level `stats`, `simulate`, `tune` commands."""
    root.add_typer(app, name="sessions")
    root.command(name="stats")(stats)
    root.command(name="simulate")(simulate)
    root.command(name="tune")(tune)


def one_line_errors(func: Callable[P, R]) -> Callable[P, R]:
    """AgentctlError -> `agentctl: message` on stderr and its exit code (also under CliRunner)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except AgentctlError as err:
            print(error_line(err), file=sys.stderr)
            raise typer.Exit(err.exit_code) from None

    return wrapper


def _console(width: int | None = None) -> Console:
    from rich.console import Console

    return Console(width=width, highlight=False, soft_wrap=False)


def _print(*renderables: RenderableType, width: int | None = None) -> None:
    console = _console(width)
    for renderable in renderables:
        console.print(renderable)


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


@app.command("list")
@one_line_errors
def list_(as_json: JsonOption = False) -> None:
    """List recorded sessions, oldest first: id, date, task, model, turns, status, tokens, cost."""
    from agentctl.sessions.catalog import list_summaries
    from agentctl.sessions.views import sessions_table

    rows = list_summaries()
    if as_json:
        _emit_json([row.to_json() for row in rows])
    elif not rows:
        print("no sessions yet (agentctl run records one per run)", file=sys.stderr)
    else:
        console = _console()
        console.print(sessions_table(rows, console.width))


@app.command()
@one_line_errors
def show(
    session: SessionArg,
    as_seen: Annotated[
        int | None,
        typer.Option("--as-seen", metavar="N", help="What the model saw at turn N, and the diff."),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="With --as-seen: do not shorten.")] = False,
) -> None:
    """The per-turn table, the summary, the final answer and the memory operations of a run."""
    from agentctl.sessions import as_seen as seen
    from agentctl.sessions.catalog import load_session

    loaded = load_session(session)
    if as_seen is not None:
        report = seen.as_seen_report(loaded, as_seen, limit=None if full else 600)
        sys.stdout.write(visible(report) if sys.stdout.isatty() else report)
        return
    from agentctl.sessions.report import show_report

    console = _console()
    console.print(show_report(loaded, console.width))
    if loaded.answer:  # on a terminal with controls visible; piped, the answer's exact text
        print("\n" + (visible(loaded.answer) if sys.stdout.isatty() else loaded.answer))


@app.command()
@one_line_errors
def rm(
    session: SessionArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete a session's transcript (the memory it wrote stays)."""
    from agentctl.sessions.catalog import load_session, remove_session

    loaded = load_session(session)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(f"session {loaded.id}: not a terminal; confirm with --yes")
        typer.confirm(f"delete session {loaded.id} ({loaded.path})?", abort=True)
    remove_session(loaded)
    print(f"removed {loaded.id}", file=sys.stderr)


@app.command()
@one_line_errors
def export(
    session: SessionArg,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE instead of stdout.")
    ] = None,
) -> None:
    """The transcript as one JSON document (header, turns, messages, result) for other tools."""
    from agentctl.sessions.catalog import export_session, load_session

    data = export_session(load_session(session))
    if output is None:
        _emit_json(data)
        return
    try:
        output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    except OSError as err:
        raise UsageError(f"{output}: cannot write: {err.strerror or err}") from None
    print(f"wrote {output}", file=sys.stderr)


@one_line_errors
def stats(
    session: SessionArg,
    svg: Annotated[Path | None, typer.Option(help="Also save the chart as an SVG file.")] = None,
    width: Annotated[
        int | None, typer.Option(help="Width in columns (default: the terminal's, at most 120).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Chart of the prompt size per turn (sent, seen after edits, read from cache), edit turns
    marked, the per-edit cache accounting and the summary table."""
    from agentctl.sessions import report
    from agentctl.sessions.catalog import load_session

    stats = report.stats_of(load_session(session))
    if as_json:
        _emit_json(stats.to_json())
        if svg is None:
            return
    width = max(width or min(_console().width, 120), 60)
    parts = report.stats_view(stats, width)
    if not as_json:
        _print(*parts, width=width)
    if svg is not None:
        report.save_svg(parts, width, svg)
        print(f"wrote {svg}", file=sys.stderr)


@one_line_errors
def simulate(
    session: SessionArg,
    profile: Annotated[str, typer.Option(help="Profile whose editing/cache settings to replay.")],
    sets: Annotated[
        list[str] | None, typer.Option("--set", metavar="KEY=VALUE", help="Override a key.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Replay a recorded run under another profile's context-editing and cache settings, per turn
    and in total, beside what happened. The conversation is replayed as recorded: how the model
    would have acted with other context cannot be known."""
    from agentctl.sessions import report
    from agentctl.sessions.catalog import load_session

    outcome = report.what_if(load_session(session), profile, tuple(sets or ()))
    if as_json:
        _emit_json(outcome.to_json())
        return
    _print(*report.what_if_view(outcome))


@one_line_errors
def tune(
    session: SessionArg,
    grid: Annotated[
        str | None,
        typer.Option(help='Grid, e.g. "trigger=20000,40000;keep=2,4;clear_at_least=0,10k".'),
    ] = None,
    write: Annotated[
        Path | None, typer.Option(help="Save the winner as a complete profile (TOML).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the --write file.")] = False,
    top: Annotated[int, typer.Option(help="How many of the best settings to list.")] = 10,
    as_json: JsonOption = False,
) -> None:
    """Sweep trigger, keep and clear_at_least (and thinking keep when thinking was on) over a
    grid by replaying the run; print the cheapest settings and the Pareto front (cost vs peak
    prompt). The recorded settings are always in the sweep."""
    from agentctl.sessions import report
    from agentctl.sessions.catalog import load_session

    outcome = report.tuning(load_session(session), grid)
    if write is not None:
        report.write_winner(outcome, write, force=force)
    if as_json:
        _emit_json(outcome.to_json())
    else:
        _print(*report.tuning_view(outcome, top))
    if write is not None:
        print(f"wrote {write}", file=sys.stderr)
