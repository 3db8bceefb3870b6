"""`agentctl emulator serve`: run the offline Messages API emulator until Ctrl-C. Thin."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentctl.cli.options import ServerModelOption
from agentctl.errors import EXIT_INTERRUPTED, UsageError

if TYPE_CHECKING:
    from agentctl.emulator import Exchange

app = typer.Typer(
    help="""The offline Messages API emulator (no network, no tokens spent).

\b
Examples:
  agentctl emulator serve --port 8765
  agentctl emulator check tests/recordings/*.json
  ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x agentctl run task.md
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)


FAULTS_HELP = (
    "Inject failures, e.g. '429:0.5@1,529@3,hang:5@4,drop@6,malformed@7,rate=0.2:500|drop,"
    "seed=7'. KIND@N hits request N (N-M a range); rate=P:KINDS hits other requests at "
    "random (seeded). Kinds: 429[:retry-after s], 529, 500, hang[:seconds], "
    "drop[:SSE events before the drop], malformed, streamerror[:SSE events before an "
    "overloaded error event], echokey (a 401 repeating the caller's key)."
)


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="emulator")


@app.command()
def serve(
    port: Annotated[
        int, typer.Option("--port", metavar="N", help="Port on 127.0.0.1; 0 = a free one.")
    ] = 0,
    script: Annotated[
        Path | None,
        typer.Option("--script", metavar="FILE", help="TOML script of assistant turns."),
    ] = None,
    faults: Annotated[
        str | None, typer.Option("--faults", metavar="SPEC", help=FAULTS_HELP)
    ] = None,
    server_model: ServerModelOption = "",
    web: Annotated[
        Path | None,
        typer.Option(
            "--web",
            metavar="PATH",
            help="Folder or JSON file of pages for web_search/web_fetch (default: built-in).",
        ),
    ] = None,
    context_window: Annotated[
        int | None,
        typer.Option(
            "--context-window",
            metavar="N",
            min=1,
            help="Context window in tokens for every model (default: each model's own).",
        ),
    ] = None,
    batch_ready_after: Annotated[
        int,
        typer.Option(
            metavar="N", min=0, help="A message batch ends at its Nth retrieve (0: the first)."
        ),
    ] = 0,
    batch_delay: Annotated[
        float,
        typer.Option(metavar="S", min=0, help="And not before S seconds after its create."),
    ] = 0.0,
    batch_faults: Annotated[
        str | None,
        typer.Option(
            metavar="SPEC",
            help="Batch requests that come back errored or expired: 't03:errored,t05:expired*2'.",
        ),
    ] = None,
) -> None:
    """Serve POST /v1/messages, /v1/messages/count_tokens and the Message Batches endpoints
    (/v1/messages/batches) on 127.0.0.1.

    Prints the base URL as the only line on stdout (use it as ANTHROPIC_BASE_URL), then
    serves until Ctrl-C, which exits with code 130 and no message. Without --script the
    built-in default policy plays the model.

    \b
    Examples:
      agentctl emulator serve --port 8765
      agentctl emulator serve --script examples/scripts/memory-roundtrip.toml
      agentctl emulator serve --faults '429@1,529@3'        the client must retry twice
      agentctl emulator serve --server-model default,trigger_basis=unedited
      agentctl emulator serve --web pages/                  web_search/web_fetch offline
      agentctl emulator serve --batch-ready-after 2 --batch-faults 't03:errored'
    """
    # The emulator (about 50 modules) only when a command runs, not for --help.
    from agentctl.context.calibration import resolve_server_model
    from agentctl.emulator import (
        KEEP_BYTES,
        KEEP_REQUESTS,
        BatchTiming,
        parse_batch_faults,
        running,
    )

    server = resolve_server_model(server_model, source="--server-model")
    timing = BatchTiming(ready_after=batch_ready_after, delay_s=batch_delay)
    try:
        with running(
            batch_timing=timing,
            batch_faults=parse_batch_faults(batch_faults or ""),
            script=script,
            faults=faults,
            port=port,
            keep_requests=KEEP_REQUESTS,
            keep_bytes=KEEP_BYTES,
            server_model=server.model,
            web=web,
            context_window=context_window,
        ) as emu:
            print(server.note(), file=sys.stderr)
            print(emu.base_url, flush=True)
            forever = threading.Event()
            while not forever.wait(0.5):  # wakes so a Ctrl-C that reached a server thread runs
                pass
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except OSError as err:
        raise UsageError(f"--port {port}: cannot listen on 127.0.0.1: {err.strerror}") from err


@app.command()
def check(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Recorded exchanges.")],
    server_model: ServerModelOption = "",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
) -> None:
    """Replay recorded API exchanges against one emulator and compare what the server decides.

    Each complete recording's request is sent as recorded (its betas in the header), in the
    order given (a recording's `replay_after` file first), to ONE emulator, so a cache one
    exchange writes is there for the next. Prints per exchange what matches and what differs:
    status, applied edits, usage fields and their split (figures within 15% or 10 tokens),
    iterations, the server's blocks and block key sets, server stop reasons, stream event
    order. A FILE holds one recording (an object) or several (an array, as `agentctl sessions
    export --exchanges` writes, each named FILE[i]). Partial recordings are skipped with the
    reason. Exit 0 when everything matches,
    1 when something differs, 2 when a file cannot be read.

    \b
    Examples:
      agentctl emulator check tests/recordings/*.json
      agentctl emulator check mine.json --server-model edited --json
    """
    # The emulator (about 50 modules) only when a command runs, not for --help.
    from agentctl.context.calibration import resolve_server_model
    from agentctl.emulator import RecordingError, check_all, parse_recordings, running

    named: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        try:
            named += parse_recordings(path.read_text(encoding="utf-8"), str(path))
        except OSError as err:
            raise UsageError(f"{path}: cannot read: {err.strerror}") from None
        except (RecordingError, UnicodeDecodeError) as err:
            raise UsageError(str(err)) from None
    server = resolve_server_model(server_model, source="--server-model")
    with running(server_model=server.model) as emu:
        results = check_all(emu.base_url, [n for n, _ in named], [r for _, r in named])
    print(_report_json(results, server.note()) if as_json else _report_text(results, server.note()))
    if not all(r.matches or r.skipped for r in results):
        raise typer.Exit(1)


def _report_text(results: list[Exchange], note: str) -> str:
    lines = [note]
    for result in results:
        if result.skipped:
            lines.append(f"{result.name}: skipped: {result.skipped}")
            continue
        bad = [f for f in result.findings if not f.ok]
        good = len(result.findings) - len(bad)
        verdict = "matches" if not bad else f"DIFFERS in {len(bad)}"
        lines.append(f"{result.name}: {verdict} ({good} of {len(result.findings)} checks match)")
        for f in bad:
            detail = f" ({f.note})" if f.note else ""
            lines.append(f"  {f.check}: recorded {f.recorded!r}, emulator {f.emulator!r}{detail}")
    replayed = [r for r in results if not r.skipped]
    same = sum(r.matches for r in replayed)
    skipped = len(results) - len(replayed)
    lines.append(f"{same} of {len(replayed)} replayed exchanges match; {skipped} skipped")
    return "\n".join(lines)


def _report_json(results: list[Exchange], note: str) -> str:
    from dataclasses import asdict  # not loaded by `emulator --help` (nor by typer) otherwise

    return json.dumps(
        {
            "server_model": note,
            "exchanges": [
                {
                    "file": r.name,
                    "outcome": "skipped" if r.skipped else "matches" if r.matches else "differs",
                    "skipped": r.skipped or None,
                    "findings": [asdict(f) for f in r.findings],
                }
                for r in results
            ],
        },
        indent=1,
        default=str,
    )
