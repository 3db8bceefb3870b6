"""A task file may tune a run but not widen it: the front matter rules and --trust-task.

The end-to-end cases run `agentctl run` in-process against a real local server standing in for
"elsewhere": a refused task file must not send it a single request.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.agent.task import read_task
from agentctl.cli.main import app
from agentctl.errors import ConfigError
from agentctl.profile.settings import Profile
from agentctl.runner import plan_new

KEY = "sk-ant-api03-TRUST-test-key-0123456789"
PROMPT = "Summarise the notes.\n"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def task_file(folder: Path, front: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "task.md"
    path.write_text(f"+++\n{front}\n+++\n{PROMPT}")
    return path


def resolve(path: Path, *, profile: Path | None = None, trust: bool = False) -> Profile:
    task = read_task(str(path), io.StringIO())
    return plan_new(task, profile, trust_task=trust).profile


def refusal(path: Path, profile: Path | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        resolve(path, profile=profile)
    message = str(caught.value)
    assert "\n" not in message and f"task {path}: " in message
    assert message.endswith("(pass --trust-task to allow it)")
    return message


@pytest.mark.parametrize(
    ("front", "key"),
    [
        ('[api]\nbase_url = "http://elsewhere.example"', "api.base_url"),
        ("[api]\nmax_retries = 100", "api.max_retries"),
        ("[api]\ndeadline_s = 1e9", "api.deadline_s"),
        ('[prices."claude-sonnet-5"]\ninput = 0\noutput = 0\ncache_write_5m = 0\n'
         "cache_write_1h = 0\ncache_read = 0", "prices.claude-sonnet-5.input"),
        ("[tools]\nweb_fetch = true", "tools.web_fetch"),
        ("[tools]\nweb_search = true", "tools.web_search"),
        ('[memory]\nroot = "../elsewhere"', "memory.root"),
        ('[memory]\nroot = "/"', "memory.root"),
        ('[tools]\nworkspace_root = "../.."', "tools.workspace_root"),
        ("[memory]\nmax_total_bytes = 0", "memory.max_total_bytes"),
        ("max_turns = 1000", "max_turns"),
        ('workspace = "~"', "workspace"),
        ('emulator_script = "../script.toml"', "emulator_script"),
    ],
)  # fmt: skip
def test_widening_keys_are_refused_naming_file_and_key(
    tmp_path: Path, front: str, key: str
) -> None:
    message = refusal(task_file(tmp_path / "task", front))
    assert f": {key}: " in message


@pytest.mark.dates
def test_a_task_may_lower_limits_but_not_lift_the_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "limits.toml"
    profile.write_text("[limits]\nmax_usd = 5.0\nmax_input_tokens = 1000000\n")
    lower = task_file(tmp_path / "a", "[limits]\nmax_usd = 1.0\nmax_input_tokens = 500")
    # Above the ambient profile the front matter lowers the limit; below --profile it cannot.
    assert resolve(lower, profile=profile).limits.max_usd == 5.0
    with monkeypatch.context() as env:
        env.setenv("AGENTCTL_PROFILE", str(profile))
        assert resolve(lower).limits.max_usd == 1.0
    for front in ("[limits]\nmax_usd = 0.0", "[limits]\nmax_usd = 50.0"):
        message = refusal(task_file(tmp_path / "b", front), profile)
        assert "limits.max_usd: " in message and "would lift the profile's limit of 5.0" in message
    unlimited = task_file(tmp_path / "c", "[limits]\nmax_usd = 2.0")  # the profile has no limit
    assert resolve(unlimited).limits.max_usd == 2.0
    unpriced = task_file(tmp_path / "d", 'model = "claude-unpriced-9"')
    message = refusal(unpriced, profile)
    assert "model: no price is known for 'claude-unpriced-9', so limits.max_usd = 5.0" in message
    assert resolve(unpriced).model == "claude-unpriced-9"  # no budget to keep: only a warning


@pytest.mark.dates
def test_tuning_inside_the_folder_and_equal_values_are_allowed(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    (folder / "workspace").mkdir(parents=True)
    front = (
        'model = "claude-opus-5-5"\nmax_turns = 30\nsystem = "Be brief."\n'
        '[memory]\nroot = "memory"\n[tools]\nworkspace_root = "workspace"\nweb_fetch = false\n'
        '[api]\nmax_retries = 4\n[context_editing.tool_uses]\nkeep = 6\n[cache]\nttl = "1h"'
    )
    profile = resolve(task_file(folder, front))
    assert profile.model == "claude-opus-5-5" and profile.max_turns == 30
    assert profile.memory.root == folder / "memory"
    assert profile.tools.workspace_root == folder / "workspace"


@pytest.mark.dates
def test_trust_task_allows_every_key(tmp_path: Path) -> None:
    front = '[api]\nbase_url = "http://elsewhere.example"\n[memory]\nroot = "/tmp/x"'
    profile = resolve(task_file(tmp_path / "t", front), trust=True)
    assert profile.api.base_url == "http://elsewhere.example"
    assert profile.memory.root == Path("/tmp/x").resolve()


@pytest.mark.dates
def test_symlinks_that_lead_out_of_the_folder_are_outside(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    (tmp_path / "secret").mkdir()
    (folder / "memory").symlink_to(tmp_path / "secret")
    message = refusal(task_file(folder, '[memory]\nroot = "memory"'))
    assert f"{tmp_path / 'secret'} is outside the task's folder {folder}" in message
    (folder / "memory").unlink()
    (folder / "workspace").symlink_to(tmp_path / "secret")  # the default workspace/
    task = read_task(str(task_file(folder, 'model = "claude-opus-5-5"')), io.StringIO())
    with pytest.raises(ConfigError, match=r": workspace: .* is outside the task's folder"):
        plan_new(task)
    plan_new(task, workspace=folder)  # --workspace wins


def test_stdin_tasks_are_held_to_the_current_folder(tmp_path: Path) -> None:
    task = read_task("-", io.StringIO('+++\n[memory]\nroot = "/"\n+++\ngo'))
    with pytest.raises(ConfigError, match=r"task <stdin>: front matter: memory.root: / is outside"):
        plan_new(task)


# -- end to end: the key never reaches "elsewhere" --------------------------------------------


@contextmanager
def elsewhere() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server that records the headers of every request it gets (and answers 500)."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(dict(self.headers.items()))
            self.send_response(500)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.dates
def test_a_task_file_cannot_send_the_key_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with elsewhere() as (url, seen):
        task = task_file(tmp_path / "t", f'[api]\nbase_url = "{url}"\nmax_retries = 0')
        result = CliRunner().invoke(app, ["run", str(task)])
        assert seen == []
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [
            f"agentctl: task {task}: front matter: api.base_url: a task file may not change "
            "where requests and the API key go, or how long they run "
            "(pass --trust-task to allow it)"
        ]
        trusted = CliRunner().invoke(app, ["run", str(task), "--trust-task"])
        assert trusted.exit_code == 1 and len(seen) == 1  # the user said yes: it went there
    assert os.environ["ANTHROPIC_API_KEY"] == KEY


def test_help_lists_the_trust_flag() -> None:
    result = CliRunner().invoke(app, ["run", "--help"])
    assert "--trust-task" in result.output
