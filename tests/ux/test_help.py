"""Every command's help: -h works, it has examples, and placeholders share one style."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import COMMANDS, app, load_command


def command_paths() -> list[tuple[str, ...]]:
    """(name,) for each top command, (group, name) for each command of a group."""
    paths: list[tuple[str, ...]] = []
    for name in COMMANDS:
        command: Any = load_command(name)
        paths.append((name,))
        paths += [(name, sub) for sub in getattr(command, "commands", {})]
    return paths


def help_of(*path: str) -> str:
    result = CliRunner().invoke(app, [*path, "-h"])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_dash_h_works_and_usage_uses_plain_placeholders(path: tuple[str, ...]) -> None:
    text = help_of(*path)
    usage = text.splitlines()[0]
    assert usage.startswith(f"Usage: agentctl {' '.join(path)}") or usage.startswith("Usage: ")
    assert not re.search(r"[{}<>]", usage), usage
    options = text.split("Options:")[-1]
    # An option's value placeholder is UPPERCASE (FILE, DIR, N, ...), never <path> or <str>.
    assert not re.search(r"<(path|str|int|float|file)>", options), options


@pytest.mark.parametrize(
    "path",
    [p for p in command_paths() if len(p) == 1 or p[0] in ("profile", "sessions", "emulator")],
    ids=" ".join,
)
def test_every_command_and_group_help_has_examples(path: tuple[str, ...]) -> None:
    assert "Example" in help_of(*path)


def test_root_help_lists_the_completion_options() -> None:
    text = help_of()
    assert "--install-completion" in text and "--show-completion" in text and "-h, --help" in text


def test_completion_script_names_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    # Typer otherwise detects the shell from the process tree (`make` runs recipes under sh,
    # which it does not support) and takes no shell argument: name the shell instead.
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    result = CliRunner().invoke(app, ["--show-completion", "bash"], prog_name="agentctl")
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "_AGENTCTL_COMPLETE=complete_bash" in result.stdout
