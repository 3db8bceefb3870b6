"""`agentctl emulator serve`: run the offline Messages API emulator until Ctrl-C. Thin."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from agentctl.cli.options import ServerModelOption
from agentctl.errors import EXIT_INTERRUPTED, UsageError

app = typer.Typer(
    help="""The offline Messages API emulator (no network, no tokens spent).

\b
Examples:
  agentctl emulator serve --port 8765
  ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x agentctl run task.md
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# A long-lived server must not keep every prompt it was sent: the last 50 requests, and of
# their bodies 8 MiB at most (as parsed JSON that is some 40 MB of memory).
KEEP_REQUESTS = 50
KEEP_BYTES = 8 << 20

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
      agentctl emulator serve --server-model edited-large
      agentctl emulator serve --web pages/                  web_search/web_fetch offline
      agentctl emulator serve --batch-ready-after 2 --batch-faults 't03:errored'
    """
    from agentctl.context.calibration import resolve_server_model
    from agentctl.emulator.batches import BatchTiming, parse_batch_faults
    from agentctl.emulator.server import running

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
