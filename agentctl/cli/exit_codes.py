"""The one place where errors become a one-line message on stderr and an exit code.

Every command reaches it through the root group (`agentctl.cli.main.LazyGroup.main`), so the
console script and `CliRunner` tests see the same lines and codes. Bugs (any other exception)
keep their traceback.
"""

from __future__ import annotations

import errno
import sys
from typing import TextIO

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError

from agentctl.errors import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    EXIT_RUNTIME,
    EXIT_USAGE,
    AgentctlError,
    ToolError,
)


def describe(err: BaseException) -> tuple[int, str] | None:
    """(exit code, message) for an error shown to the user; None for a bug."""
    if isinstance(err, AgentctlError):
        return err.exit_code, str(err)
    if isinstance(err, ToolError):  # a memory command's bad input, typed by the user here
        return EXIT_USAGE, str(err)
    if isinstance(err, ClickException):
        return err.exit_code, click_message(err)
    if isinstance(err, KeyboardInterrupt | typer.Abort):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(err, OSError):  # the user's own paths: fine to show, but one line
        return EXIT_RUNTIME, str(err)
    return None


def click_message(err: ClickException) -> str:
    """Click's usage block in one line: the message and where to read the help."""
    text = " ".join(err.format_message().split())
    ctx = getattr(err, "ctx", None)
    return f"{text} (see '{ctx.command_path} --help')" if ctx is not None else text


def report(err: BaseException, stream: TextIO | None = None) -> int:
    """Print `agentctl: message` for `err` and return its exit code; re-raise a bug."""
    if isinstance(err, NoArgsIsHelpError):  # a bare `agentctl run`: its help, as Click shows it
        err.show()
        return err.exit_code
    if isinstance(err, OSError) and err.errno == errno.EPIPE:
        # `agentctl sessions list | head -1`: the reader has what it wanted. Exit as a process
        # that SIGPIPE ended, with nothing more on the dead pipe (not even Python's exit flush).
        from agentctl.render.base import silence

        silence(sys.stdout)
        return EXIT_CLOSED_PIPE
    described = describe(err)
    if described is None:
        raise err
    # On an error only: --help and a clean run never load these.
    from agentctl.redact import redact
    from agentctl.render.lines import say
    from agentctl.render.safe import error_line

    code, message = described
    say(error_line(redact(message)), stream or sys.stderr)
    return code
