"""`agentctl sessions ...`, `stats`, `simulate`, `tune`: recorded runs and what-if tuning. Thin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from agentctl.cli.options import ReplayServerModelOption
from agentctl.errors import UsageError
from agentctl.render.safe import error_line, visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

# Lazy imports: each subcommand imports its own part of sessions/ and render/ (the catalog
# for `list`, the simulator for `simulate` and `tune`, charts for `stats`), and Rich only
# when it draws: one subcommand does not load the others' code, `sessions --help` none of it.

app = typer.Typer(
    help="""Recorded runs (transcripts): list, show, remove, export.

SESSION is a session id, a unique prefix of one, or `last`.

\b
Examples:
  agentctl sessions list
  agentctl sessions show last
  agentctl sessions export last -o run.json
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)

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


# Not a terminal: there is no width to fit, so tables take the room they need and no cell is
# cut or wrapped (a pipe into grep or a file must carry every digit).
PIPE_WIDTH = 1_000


def _console(width: int | None = None) -> Console:
    from rich.console import Console

    from agentctl.render.format import color_system

    if width is None and not sys.stdout.isatty():
        width = PIPE_WIDTH
    return Console(width=width, highlight=False, soft_wrap=False, color_system=color_system())


def _print(*renderables: RenderableType, width: int | None = None) -> None:
    """On a terminal, as Rich draws it; piped, unwrapped and without trailing spaces."""
    console = _console(width)
    if console.is_terminal:
        for renderable in renderables:
            console.print(renderable)
        return
    with console.capture() as captured:
        for renderable in renderables:
            console.print(renderable)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def _emit_json(data: Any, out: TextIO | None = None) -> None:
    """Written piece by piece as it is encoded (a long session's export is never one string)."""
    out = out or sys.stdout
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


@app.command("list")
def list_(
    as_json: JsonOption = False,
    count: Annotated[
        int | None,
        typer.Option("-n", "--count", metavar="N", min=1, help="Only the N newest sessions."),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            "--search", "-s", metavar="TEXT", help="Only sessions whose id, task or model has TEXT."
        ),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            "--status", metavar="STATUS", help="Only sessions with STATUS (end_turn, limit...)."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", metavar="TEXT", help="Only sessions whose model has TEXT."),
    ] = None,
) -> None:
    """List recorded sessions, newest first: id, start time (UTC; from 100 columns, and always
    when piped), task, model, turns, status, prompt tokens sent (all turns), cost. Served by
    the sessions index (kept as runs write, refreshed from the files when stale).

    Exit codes: 0 listed (also when there is none yet), 2 bad option.

    \b
    Examples:
      agentctl sessions list -n 5
      agentctl sessions list --search kestrel --status end_turn
      agentctl sessions list --json | jq -r '.[].session'
    """
    from agentctl.sessions.index import Filters, listing
    from agentctl.sessions.list_row import rows_json

    rows = listing(Filters(count, search, status, model))
    if as_json:
        sys.stdout.write(rows_json(rows) + "\n")
    elif not rows:
        asked = search or status or model
        what = f"no session matches {asked!r}" if asked else "no sessions yet"
        known = sorted({row.status for row in listing(Filters())}) if status else []
        hint = f"statuses recorded: {', '.join(known)}" if known else ""
        print(f"{what} ({hint or 'agentctl run records one per run'})", file=sys.stderr)
    else:
        from agentctl.render.sessions_list import sessions_table, sessions_text

        # Piped, the width is PIPE_WIDTH (as `_console()` would say): no Rich console is built
        # for a listing laid out without Rich.
        text = None if sys.stdout.isatty() else sessions_text(rows, PIPE_WIDTH)
        if text is None:
            _print(sessions_table(rows, _console().width))
        else:
            sys.stdout.write(text)


@app.command()
def show(
    session: SessionArg,
    as_seen: Annotated[
        int | None,
        typer.Option("--as-seen", metavar="N", help="What the model saw at turn N, and the diff."),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="With --as-seen: do not shorten.")] = False,
) -> None:
    """The per-turn table, the summary, the final answer and the memory operations of a run.

    \b
    Examples:
      agentctl sessions show last
      agentctl sessions show 20261130 --as-seen 14   what the model saw, turn 14
    """
    from agentctl.sessions import as_seen as seen
    from agentctl.sessions.transcript import load_session

    if full and as_seen is None:
        raise UsageError("--full is for --as-seen N (the prompt in full): add --as-seen N")
    loaded = load_session(session)
    for warning in loaded.warnings:
        print(error_line(f"warning: {warning}"), file=sys.stderr)
    if as_seen is not None:
        report = seen.as_seen_report(loaded, as_seen, limit=None if full else 600)
        sys.stdout.write(visible(report))  # piped too: a view, not the data
        return
    from agentctl.render.sessions_view import show_report

    _print(show_report(loaded, _console().width))
    if loaded.answer:  # controls visible, piped too (`run` prints the answer's exact text)
        print("\n" + visible(loaded.answer))


@app.command()
def rm(
    session: SessionArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete a session's transcript (the memory it wrote stays).

    \b
    Example:
      agentctl sessions rm last --yes
    """
    from agentctl.sessions.catalog import remove_session
    from agentctl.sessions.transcript import load_session

    loaded = load_session(session)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(f"session {loaded.id}: not a terminal; confirm with --yes")
        typer.confirm(f"delete session {loaded.id} ({loaded.path})?", abort=True)
    remove_session(loaded)
    print(f"removed {loaded.id}", file=sys.stderr)


@app.command()
def export(
    session: SessionArg,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
    ] = None,
    exchanges: Annotated[
        Path | None,
        typer.Option(
            "--exchanges",
            metavar="FILE",
            help="Write the API exchanges instead (a JSON array, - for stdout).",
        ),
    ] = None,
) -> None:
    """The transcript as one JSON document (header, turns, messages, result) for other tools;
    with --exchanges, its API exchanges (request as sent, response as received, no key or
    auth header) as a JSON array of recordings that `agentctl emulator check` replays.

    \b
    Examples:
      agentctl sessions export last -o run.json
      agentctl sessions export last | jq '.turns | length'
      agentctl sessions export last --exchanges run-exchanges.json
      agentctl emulator check run-exchanges.json
    """
    from agentctl.sessions.catalog import export_session
    from agentctl.sessions.transcript import load_session

    if exchanges is not None and output is not None:
        raise UsageError("--exchanges FILE and --output FILE: give one of them")
    loaded = load_session(session)
    data: Any
    if exchanges is not None:
        from agentctl.sessions.exchanges import session_exchanges

        data = session_exchanges(loaded)
        output = None if str(exchanges) == "-" else exchanges
    else:
        data = export_session(loaded)
    if output is None:
        _emit_json(data)
        return
    try:
        with output.open("w", encoding="utf-8") as f:
            _emit_json(data, f)
    except OSError as err:
        raise UsageError(f"{output}: cannot write: {err.strerror or err}") from None
    count = f" ({len(data)} exchanges)" if exchanges is not None else ""
    print(f"wrote {output}{count}", file=sys.stderr)


def stats(
    session: SessionArg,
    svg: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Also save the chart as an SVG file.")
    ] = None,
    width: Annotated[
        int | None,
        typer.Option(
            metavar="N", help="Chart width in columns (default: the terminal's, at most 120)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Chart of the prompt size per turn (sent, seen after edits, read from cache), edit turns
    marked, the per-edit cache accounting and the summary table.

    \b
    Examples:
      agentctl stats last
      agentctl stats last --svg run.svg --width 100
      agentctl stats last --json | jq '.totals'
    """
    from agentctl.sessions import report
    from agentctl.sessions.transcript import load_session

    stats = report.stats_of(load_session(session))
    if as_json:
        _emit_json(stats.to_json())
        if svg is None:
            return
    from agentctl.render.chart import save_svg
    from agentctl.render.sessions_view import stats_view

    tty = sys.stdout.isatty()
    width = max(width or min(_console().width, 120), 60)
    parts = stats_view(stats, width)
    if not as_json:
        _print(*parts, width=width if tty else None)
    if svg is not None:
        save_svg(parts, width, svg)
        print(f"wrote {svg}", file=sys.stderr)


def _note_models(note: str, every: bool) -> None:
    """Which server model the replay plays (and, for `all`, that it plays every preset)."""
    from agentctl.sessions.across import all_note

    print(note + (f"; {all_note()}" if every else ""), file=sys.stderr)


def simulate(
    session: SessionArg,
    profile: Annotated[
        str,
        typer.Option(metavar="FILE", help="Profile whose editing/cache settings to replay."),
    ],
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a key (repeatable)."),
    ] = None,
    server_model: ReplayServerModelOption = "",
    as_json: JsonOption = False,
) -> None:
    """Replay a recorded run under another profile's context-editing and cache settings, per turn
    and in total, beside what happened. The conversation is replayed as recorded: how the model
    would have acted with other context cannot be known.

    \b
    Examples:
      agentctl simulate last --profile configs/aggressive.toml
      agentctl simulate last --profile configs/balanced.toml --set context_editing.tool_uses.keep=2
      agentctl simulate last --profile configs/no-editing.toml --json | jq '.totals'
    """
    from agentctl.sessions import report
    from agentctl.sessions.transcript import load_session

    outcome = report.what_if(load_session(session), profile, tuple(sets or ()), server_model)
    _note_models(outcome.server_model.note(), bool(outcome.by_model))
    if as_json:
        _emit_json(outcome.to_json())
        return
    from agentctl.render.sessions_view import what_if_view

    _print(*what_if_view(outcome))


def tune(
    session: SessionArg,
    grid: Annotated[
        str | None,
        typer.Option(
            metavar="GRID",
            help='Grid, e.g. "trigger=20000,40000;keep=2,4;clear_at_least=0,10k".',
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Save the winner as a complete profile (TOML)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the --write file.")] = False,
    top: Annotated[
        int, typer.Option(metavar="N", help="How many of the best settings to list.")
    ] = 10,
    server_model: ReplayServerModelOption = "",
    tokens_within: Annotated[
        float | None,
        typer.Option(
            metavar="RATIO",
            help="Rank by fewest prompt tokens among settings costing at most RATIO x no"
            " editing (e.g. 0.4); the others after them, cheapest first.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Sweep trigger, keep, clear_at_least, strategy, low_water, the cache TTL and
    clear_tool_inputs (and thinking keep when thinking was on) by replaying the run: the
    default grid, then a descent from its winner one setting at a time, or exactly --grid;
    print the cheapest settings and the Pareto front (cost vs peak prompt). The recorded
    settings are always in the sweep. The descent never clears the memory tool's inputs
    (the model's own notes); a --grid that does marks those settings "(hides notes)".

    \b
    Examples:
      agentctl tune last
      agentctl tune last --grid "trigger=30k,60k;keep=2,4" --top 5
      agentctl tune last --grid "strategy=batched;low_water=0,40%;ttl=5m,1h;trigger;keep"
      agentctl tune last --grid "trigger=6k;keep=1;clear_tool_inputs=false,read_file"
      agentctl tune last --tokens-within 0.4
      agentctl tune last --write tuned.toml && agentctl run task.md --profile tuned.toml
    """
    from agentctl.sessions import report
    from agentctl.sessions.transcript import load_session

    if force and write is None:
        raise UsageError("--force overwrites the --write file: give --write FILE, or drop --force")
    outcome = report.tuning(load_session(session), grid, server_model, tokens_within)
    _note_models(outcome.server_model.note(), bool(outcome.by_model))
    if write is not None:
        report.write_winner(outcome, write, force=force)
    if as_json:
        _emit_json(outcome.to_json())
    else:
        from agentctl.render.sessions_view import tuning_view

        _print(*tuning_view(outcome, top))
    if write is not None:
        print(f"wrote {write}", file=sys.stderr)
