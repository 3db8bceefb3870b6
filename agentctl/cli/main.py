"""The `agentctl` root command: registers the command groups and maps errors to exit codes."""

from __future__ import annotations

import sys

import typer

from agentctl import __version__
from agentctl.errors import EXIT_INTERRUPTED, AgentctlError

HELP = """\
Run long-lived Claude agents with the memory tool and server-side context editing,
and see, turn by turn, what editing cleared and what the prompt cache did.

Exit codes: 0 finished, 1 API or runtime error, 2 usage or configuration error,
3 stopped by a limit (turns, budget, max_tokens), 130 interrupted.
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"agentctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run long-lived Claude agents with memory and context editing."""


def _register() -> None:
    # Each command module owns its commands and registers them here; none of them imports
    # `anthropic` at module level (see STYLE.md "Fast start").
    from agentctl.cli import emulator, memory, profile, run, sessions

    run.register(app)
    memory.register(app)
    profile.register(app)
    emulator.register(app)
    sessions.register(app)


_register()


def main() -> None:
    """Console-script entry: run the app, turn AgentctlError into one line and its exit code."""
    try:
        app()
    except AgentctlError as err:
        print(f"agentctl: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        print("agentctl: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
