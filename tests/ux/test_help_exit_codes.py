"""Every command's --help names its exit codes, and the `--json | jq` examples in the helps
name keys the JSON has (two printed `null`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import COMMANDS, app, load_command


def leaves(path: list[str], command: Any) -> list[list[str]]:
    subs = getattr(command, "commands", None)
    if not subs:
        return [path]
    return [p for name, sub in subs.items() for p in leaves([*path, name], sub)]


ALL = [p for name in COMMANDS for p in leaves([name], load_command(name))]


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_every_help_names_exit_codes(path: list[str]) -> None:
    text = " ".join(CliRunner().invoke(app, [*path, "--help"]).stdout.split())
    assert "Exit codes: 0 " in text
    assert " 2 " in text.split("Exit codes:")[1]  # the usage error's code, at least


def jq_path(value: Any, expression: str) -> Any:
    """The few jq forms the helps use: `.a`, `.[].a`, `.a | length`."""
    expression = expression.split("|")[0].strip()
    for part in re.findall(r"\.(\[\]|[A-Za-z_]+)", expression):
        if part == "[]":
            assert isinstance(value, list) and value
            value = value[0]
        else:
            assert isinstance(value, dict) and part in value, f"no key {part!r}"
            value = value[part]
    return value


@pytest.mark.parametrize(
    ("path", "args"),
    [(["sessions", "list"], ["sessions", "list", "--json"]),
     (["stats"], ["stats", "last", "--json"]),
     (["profile", "show"], ["profile", "show", "--json"])],
)  # fmt: skip
@pytest.mark.dates
def test_the_jq_examples_name_real_keys(
    path: list[str], args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    agentctl.run("Say done.", client=agentctl.ScriptedClient("Done."), memory_root="mem")
    help_text = CliRunner().invoke(app, [*path, "--help"]).stdout
    (expression,) = re.findall(r"--json \| jq (?:-\w+ )?'?([^'\n]+)'?", help_text)
    output = CliRunner().invoke(app, args)
    assert output.exit_code == 0, output.output
    assert jq_path(json.loads(output.stdout), expression) is not None
