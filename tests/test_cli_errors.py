"""The one error-to-exit map: every command's errors are one `agentctl: ...` line and a code."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.exit_codes import describe, report
from agentctl.cli.main import app
from agentctl.errors import EXIT_INTERRUPTED, EXIT_USAGE, LimitError, ToolError


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--bogus"], "agentctl: No such option: --bogus (see 'agentctl run --help')\n"),
        (
            ["run", "t.md", "--max-turns", "x"],
            "agentctl: Invalid value for '--max-turns': 'x' is not a valid int. "
            "(see 'agentctl run --help')\n",
        ),
        (["nosuch"], "agentctl: No such command 'nosuch'. (see 'agentctl --help')\n"),
        (
            ["sessions", "show", "--nope"],
            "agentctl: No such option: --nope (see 'agentctl sessions show --help')\n",
        ),
    ],
)
def test_flag_errors_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    assert invoke(*args) == (EXIT_USAGE, expected)


def test_a_flag_value_the_profile_refuses_names_the_flag(tmp_path: Path) -> None:
    task = tmp_path / "t.md"
    task.write_text("hi\n")
    code, err = invoke("run", str(task), "--offline", "--max-turns", "0")
    assert code == EXIT_USAGE
    assert err == (
        "agentctl: profile <built-in>, --max-turns 0: max_turns: must be an integer >= 1, got 0\n"
    )


def test_every_command_group_reports_the_same_way(tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    assert invoke("profile", "check", str(missing))[1].startswith(f"agentctl: profile {missing}")
    code, err = invoke("memory", "view", "/etc", "--root", str(tmp_path))
    root_line, error_line = err.splitlines()  # memory commands first say which folder they use
    assert code == EXIT_USAGE and root_line.startswith("memory root: ")
    assert error_line.startswith("agentctl: Path must start with /memories")
    code, err = invoke("stats", "no-such-session")
    assert code == EXIT_USAGE and err.startswith("agentctl: ") and err.count("\n") == 1


def test_the_map() -> None:
    assert describe(LimitError("stopped")) == (3, "stopped")
    assert describe(ToolError("bad path")) == (EXIT_USAGE, "bad path")
    assert describe(KeyboardInterrupt()) == (EXIT_INTERRUPTED, "interrupted")
    assert describe(ValueError("a bug")) is None
    with pytest.raises(ValueError, match="a bug"):
        report(ValueError("a bug"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rnu"], "agentctl: No such command 'rnu'. Did you mean 'run'? (see 'agentctl --help')\n"),
        (["sesions"], "agentctl: No such command 'sesions'. Did you mean 'sessions'? "
         "(see 'agentctl --help')\n"),
        (["sessions", "lst"], "agentctl: No such command 'lst'. Did you mean 'list'? "
         "(see 'agentctl sessions --help')\n"),
    ],
)  # fmt: skip
def test_a_mistyped_command_suggests_the_closest(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.stderr) == (2, message)
