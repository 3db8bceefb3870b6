"""Task input that is not what agentctl reads: bytes on stdin that are not UTF-8, YAML front
matter. Both are one line and exit 2, before anything is sent."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.agent.task import parse_task, read_task
from agentctl.cli.main import app
from agentctl.errors import ConfigError, UsageError

BINARY = bytes(range(128, 256)) * 4


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_binary_stdin_is_the_same_usage_error_as_a_binary_file(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(BINARY)
    from_file = CliRunner().invoke(app, ["run", "bin.md", "--offline"])
    from_stdin = CliRunner().invoke(app, ["run", "-", "--offline"], input=BINARY)
    assert (from_file.exit_code, from_stdin.exit_code) == (2, 2)
    reason = "cannot read it as UTF-8 text: 'utf-8' codec can't decode byte 0x80 in position 0"
    assert from_file.stderr.startswith(f"agentctl: task bin.md: {reason}")
    assert from_stdin.stderr.startswith(f"agentctl: task <stdin>: {reason}")
    assert not (tmp_path / "memory").exists()


def test_a_lenient_text_stream_is_checked_too() -> None:
    lenient = io.StringIO(BINARY.decode("utf-8", "surrogateescape"))
    with pytest.raises(UsageError, match=r"^task <stdin>: cannot read it as UTF-8 text"):
        read_task("-", lenient)
    assert read_task("-", io.StringIO("Summarise ./notes\n")).prompt == "Summarise ./notes"


@pytest.mark.slow
def test_binary_stdin_of_a_real_process_exits_2_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTCTL_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "agentctl", "run", "-", "--offline"],
        input=BINARY, capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.decode().startswith("agentctl: task <stdin>: cannot read it as UTF-8 text")


def test_yaml_front_matter_is_refused_naming_toml() -> None:
    text = "---\nmodel: claude-opus-5-5\ntools:\n  - memory\n---\nDo it.\n"
    with pytest.raises(ConfigError) as caught:
        parse_task(text, "t.md", Path.cwd())
    assert str(caught.value) == (
        "task t.md: starts with YAML front matter (---); agentctl reads TOML front matter "
        "between +++ lines (e.g. +++ / max_turns = 20 / +++)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "---\n\nA thematic break, then prose.\n\n---\nmore\n",
        "---\nno closing rule: model: x\n",
        "Title\n---\nmodel: x\n---\n",
    ],
)
def test_markdown_rules_are_still_prompt_text(text: str) -> None:
    assert parse_task(text, "t.md", Path.cwd()).prompt == text.strip()
