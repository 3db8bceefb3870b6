"""The root command: help, version, exit-code mapping, and what a light command imports."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import typer
import typer.main
from import_probe import loaded_by_command
from typer.core import TyperGroup
from typer.testing import CliRunner

from agentctl import __version__
from agentctl.cli.main import app


def test_help_lists_exit_codes() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "130 interrupted" in result.output


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"agentctl {__version__}"


@pytest.mark.slow
def test_help_does_not_import_the_sdk() -> None:
    _, loaded = loaded_by_command(["--help"], ["anthropic", "httpx", "pydantic", "mcp"])
    assert loaded == []


@pytest.mark.slow
def test_batch_help_imports_neither_the_sdk_nor_ray() -> None:
    out, loaded = loaded_by_command(
        ["batch", "--help"], ["anthropic", "httpx", "pydantic", "mcp", "ray"]
    )
    assert "--executor" in out and out.rstrip().endswith("EXIT=0")
    assert loaded == []


def test_every_listed_command_loads_and_nothing_registered_is_unlisted() -> None:
    from agentctl.cli.main import COMMANDS, load_command

    for name in COMMANDS:
        assert load_command(name) is not None, name
    for module in {m for m, _ in COMMANDS.values()}:
        scratch = typer.Typer()
        scratch.callback()(lambda: None)
        importlib.import_module(module).register(scratch)
        group = typer.main.get_command(scratch)
        assert isinstance(group, TyperGroup)
        assert set(group.commands) <= set(COMMANDS), module


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["bogus"])
    assert result.exit_code == 2
    assert "No such command" in result.output


@pytest.mark.slow
def test_memory_view_imports_only_the_memory_command(tmp_path: Path) -> None:
    mods = [
        *("anthropic", "httpx", "pydantic", "mcp", "agentctl.cli.run", "agentctl.emulator"),
        *("agentctl.cli.sessions", "agentctl.agent.loop", "agentctl.tools.mcp"),
        *("agentctl.memory.blame", "hashlib"),  # a revert's and a write's, not a view's
    ]
    out, loaded = loaded_by_command(["memory", "view", "--root", str(tmp_path)], mods)
    assert loaded == []
    assert "/memories" in out


@pytest.mark.parametrize(
    "command",
    [[], ["run"], ["batch"], ["doctor"], ["profile"], ["sessions", "list"], ["sessions", "show"]],
)
def test_help_fits_an_80_column_terminal(command: list[str]) -> None:
    """The examples' comments ran past 80 columns (the terminal wrapped them mid-word, e.g.
    `run --help`'s `a follow-up to the la` / `st session`): every line fits now."""
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Examples:" in result.output
    too_long = [line for line in result.output.splitlines() if len(line) > 80]
    assert too_long == []


@pytest.mark.slow
def test_profile_show_loads_the_profile_but_not_what_a_run_steers_with() -> None:
    mods = [
        *("anthropic", "httpx", "pydantic", "rich.console", "tomllib", "agentctl.emulator"),
        *("agentctl.types", "agentctl.context.batching", "agentctl.context.engine"),
    ]
    out, loaded = loaded_by_command(["profile", "show"], mods)
    assert loaded == []
    assert "context_management" in out and out.rstrip().endswith("EXIT=0")


def test_a_group_is_built_with_only_the_subcommand_that_runs() -> None:
    from agentctl.cli.main import load_command

    whole = set(load_command("memory").commands)
    assert {"view", "cat", "rm"} <= whole
    assert set(load_command("memory", "view").commands) == {"view"}
    assert set(load_command("memory", "viw").commands) == whole  # a typo: all, to suggest
    assert set(load_command("memory", "--help").commands) == whole
    assert set(load_command("memory").commands) == whole  # the module's own app stays whole
    assert load_command("stats", "last").name == "stats"
    result = CliRunner().invoke(app, ["memory", "viw"])
    assert result.exit_code == 2 and "Did you mean 'view', 'review'?" in result.output
