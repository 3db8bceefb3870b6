"""The `agentctl` root command: loads command modules on demand; errors go to `cli.exit_codes`."""

from __future__ import annotations

import copy
import difflib
import functools
import importlib
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from agentctl import __version__
from agentctl.cli.exit_codes import report
from agentctl.cli.options import refuse_repeats
from agentctl.cli.usage import plain_usage

HELP = """\
Run long-lived Claude agents with the memory tool and server-side context editing,
and see, turn by turn, what editing cleared and what the prompt cache did.

Exit codes: 0 finished, 1 API or runtime error, 2 usage or configuration error,
3 stopped by a limit (turns, budget, max_tokens), 130 interrupted.

\b
Examples:
  agentctl run examples/research/task.md --offline  a first run, no API key
  agentctl doctor                                   what would be used, where
  agentctl stats last                               last run's cache and edits
  agentctl COMMAND -h                               its help, with examples
"""

# name -> (module whose register() defines it, one-line help for `agentctl --help`).
# Modules are imported only when their command runs, so `agentctl memory view` does not pay
# for the run loop, the emulator or the simulator (tests/import_probe.py checks what is imported).
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agentctl.cli.run", "Run a task as a tool-use loop with memory and context editing."),
    "batch": ("agentctl.cli.batch", "Run many tasks at once (a folder, glob or JSONL file)."),
    "memory": (
        "agentctl.cli.memory",
        "Inspect and edit the directory the model sees as /memories.",
    ),
    "profile": ("agentctl.cli.profile", "Write, inspect and validate TOML profiles."),
    "example": ("agentctl.cli.example", "The shipped example tasks: list them, copy one to run."),
    "sessions": ("agentctl.cli.sessions", "Recorded runs: list, show, remove, export."),
    "stats": ("agentctl.cli.sessions", "Chart prompt size, edits and cache use of a recorded run."),
    "simulate": ("agentctl.cli.sessions", "Replay a recorded run under another profile."),
    "tune": ("agentctl.cli.sessions", "Sweep context-editing settings over a recorded run."),
    "emulator": ("agentctl.cli.emulator", "The offline Messages API emulator (no network)."),
    "mcp": ("agentctl.cli.mcp", "MCP servers of the profile: whether they start, their tools."),
    "probe": (
        "agentctl.cli.probe",
        "Settle the server's open context-editing rules (a few cents).",
    ),
    "doctor": ("agentctl.cli.doctor", "Where everything is, what a run would use and reach."),
}

# -h as well as --help, on every command (subcommand contexts inherit it from the root).
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


def load_command(name: str, sub: str | None = None) -> Any:
    """Import the module that defines `name` and return its click command (None if unknown).

    `sub`: the word after `name` on the command line. When `name` is a group and `sub` one of
    its subcommands, the group is built with that subcommand alone: typer builds each command's
    options from its signature, a few ms for a large group (`memory`), which `agentctl memory
    view` need not pay. Any other word (a typo, an option) gets the whole group."""
    if name not in COMMANDS:
        return None
    scratch = typer.Typer(rich_markup_mode=None, add_completion=False)
    # A callback keeps typer from collapsing a one-command app into that command.
    scratch.callback()(lambda: None)
    importlib.import_module(COMMANDS[name][0]).register(scratch)
    keep_only(scratch, name, sub)
    group = typer.main.get_command(scratch)
    assert isinstance(group, TyperGroup)
    command = group.commands.get(name)
    if command is not None:
        plain_usage(command)
        refuse_repeats(command)
        name_exit_codes(command)
    return command


def keep_only(scratch: typer.Typer, name: str, sub: str | None) -> None:
    """Leave in `scratch` only what `agentctl NAME [SUB]` runs: the command or group `name`
    (a module may register several, e.g. `sessions` with `stats`), and of a group only its
    subcommand `sub` when it has one. The group is a copy: the module's own app stays whole."""
    scratch.registered_commands = [
        c for c in scratch.registered_commands if c.name == name or _command_name(c) == name
    ]
    scratch.registered_groups = [g for g in scratch.registered_groups if g.name == name]
    for index, info in enumerate(scratch.registered_groups):
        whole = info.typer_instance
        if sub is None or whole is None:
            continue
        commands = [c for c in whole.registered_commands if _command_name(c) == sub]
        groups = [g for g in whole.registered_groups if g.name == sub]
        if commands or groups:
            part = copy.copy(whole)
            part.registered_commands, part.registered_groups = commands, groups
            scratch.registered_groups[index] = copy.copy(info)
            scratch.registered_groups[index].typer_instance = part


def _command_name(info: Any) -> str:
    """The name typer gives a registered command (its own, else from its function's)."""
    return str(info.name or typer.main.get_command_name(info.callback.__name__))


# For a command whose help names no exit codes of its own (run, batch, ... name theirs).
EXIT_CODES = (
    "Exit codes: 0 done, 1 API or runtime error, 2 usage or configuration error, "
    "130 interrupted (Ctrl-C)."
)


def name_exit_codes(command: Any) -> None:
    """Every command's --help ends with its exit codes (the generic ones unless it names its
    own)."""
    for sub in getattr(command, "commands", {}).values():
        name_exit_codes(sub)
    if "Exit codes" not in (command.help or "") and not command.epilog:
        command.epilog = EXIT_CODES


class LazyGroup(TyperGroup):
    """A root group whose subcommands are imported the first time they are looked up."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            command = load_command(cmd_name)
            if command is None:
                return None
            self.commands[cmd_name] = command
        return self.commands[cmd_name]

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Click's lookup; an unknown command name suggests the closest one (`rnu`: run).
        A group is built with only the subcommand that runs (`load_command`)."""
        name = args[0] if args else ""
        if name in COMMANDS and name not in self.commands and len(args) > 1:
            self.commands[name] = load_command(name, args[1])
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")  # Click's words, as in the groups
        return super().resolve_command(ctx, args)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's main, with every user-facing error reported by `cli.exit_codes.report`."""
        name = prog_name or "agentctl"  # also under CliRunner and `python -m agentctl`
        call = functools.partial(super().main, args, name, complete_var, False, **extra)
        if not standalone_mode:
            return call()
        try:
            code = call()
        except (Exception, KeyboardInterrupt) as err:
            code = report(err)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as err:
            # `agentctl sessions list | head -1`: caught before Click's own handler (which
            # would say 1, a runtime error), and mapped like every other error.
            raise typer.Exit(report(err)) from None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # Static one-liners: `agentctl --help` must not import every command module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])


app = typer.Typer(
    cls=LazyGroup,
    name="agentctl",
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
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


def main() -> None:
    """Console-script entry (errors and exit codes: `LazyGroup.main`)."""
    app()
