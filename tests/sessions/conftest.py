"""Transcripts from real offline runs, made once per test session and copied into each test's home.

`research`: the shipped research example under balanced.toml's settings as they were before
batched clearing (server strategy, trigger 60k, keep 4, memory excluded: 23 turns, clears on
turns 14-21, one more result each turn), played by the emulator under the unedited trigger
basis (a setting of the default server model; under the default the server's own clearing
comes in batches). `batched`: the same example under
configs/balanced.toml as shipped (batched clearing). `thinking`: a scripted run with extended
thinking, clear_thinking and a low clear_tool_uses trigger, so both edits apply. `resumed`:
the same script without thinking or clearing, stopped by max_turns after 4 turns and
continued with `run --resume` (a new emulator, so a cold cache).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.sessions.transcript import Transcript, load_session

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PROFILE = REPO / "configs" / "balanced.toml"

SERVER_PROFILE = """\
model = "claude-sonnet-5"
max_tokens = 8192
max_turns = 50
[context_editing]
server_model = "unedited-basis"
[context_editing.tool_uses]
strategy = "server"
trigger = 60_000
keep = 4
clear_at_least = 10_000
exclude_tools = ["memory"]
[cache]
ttl = "5m"
[tools]
memory = true
workspace = true
"""

THINKING_PROFILE = """\
model = "claude-sonnet-5"
max_tokens = 8192
[thinking]
enabled = true
budget_tokens = 2048
[context_editing.tool_uses]
strategy = "server"
trigger = 2500
keep = 2
clear_at_least = 0
[context_editing.thinking]
enabled = true
keep = 2
[tools]
memory = false
"""

PLAIN_PROFILE = """\
model = "claude-sonnet-5"
[context_editing.tool_uses]
trigger = 100_000
[tools]
memory = false
"""

THINKING_SCRIPT = (
    "\n".join(
        f'[[turn]]\nthinking = "Step {i}: read note-{i}.txt and compare it with the others."\n'
        f'[[turn.tool_use]]\nname = "read_file"\ninput = {{ path = "note-{i}.txt" }}\n'
        for i in range(1, 7)
    )
    + 'final_text = "All six notes are read."\n'
)


def _run(
    home: Path,
    task: Path,
    profile: Path,
    *extra: str,
    code: int = 0,
    env: dict[str, str] | None = None,
) -> Path:
    """One offline run with AGENTCTL_HOME=home; the path of its transcript.

    `profile` is the ambient profile ($AGENTCTL_PROFILE), so the task's front matter sits
    above it (as these recordings were made); a --profile would override the front matter.
    `env` adds to (or overrides) the environment.
    """
    run_env = {"AGENTCTL_HOME": str(home), "NO_COLOR": "1", "ANTHROPIC_API_KEY": ""}
    run_env["AGENTCTL_PROFILE"] = str(profile)
    run_env.update(env or {})
    args = ["run", str(task), "--offline", "--json", *extra]
    result = CliRunner().invoke(app, args, env=run_env)
    assert result.exit_code == code, result.output
    (path,) = (home / "sessions").glob("*.jsonl")
    return path


def _resumed(home: Path, task: Path, profile: Path) -> Path:
    """The task stopped by max_turns after 4 turns, then resumed to the end."""
    path = _run(home, task, profile, "--max-turns", "4", code=3)
    env = {"AGENTCTL_HOME": str(home), "NO_COLOR": "1"}
    result = CliRunner().invoke(app, ["run", "--resume", path.stem, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return path


def scripted_task(root: Path, files: dict[str, str], script: str, prompt: str) -> Path:
    """A task folder: `files` (paths under workspace/), the emulator script, the task file."""
    for name, text in files.items():
        path = root / "workspace" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "script.toml").write_text(script)
    task = root / "task.md"
    task.write_text(f'+++\nemulator_script = "script.toml"\n+++\n{prompt}\n')
    return task


def _thinking_task(root: Path) -> Path:
    line = "note {i}: the figure for region {i} is {n} units, checked twice.\n"
    files = {f"note-{i}.txt": line.format(i=i, n=i * 37) * 30 for i in range(1, 7)}
    return scripted_task(root, files, THINKING_SCRIPT, "Read every note.")


@pytest.fixture(scope="session")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> transcript file, from real offline runs (made once)."""
    base = tmp_path_factory.mktemp("transcripts")
    shutil.copytree(
        REPO / "examples" / "research", base / "research", ignore=shutil.ignore_patterns("memory")
    )
    (base / "server.toml").write_text(SERVER_PROFILE)
    shutil.copytree(base / "research", base / "batched")
    # The example's front matter picks the server strategy; balanced.toml's batches here.
    task = base / "batched" / "task.md"
    task.write_text(task.read_text().replace('strategy = "server"\nlow_water = 0\n', ""))
    saved = os.getcwd()
    try:
        os.chdir(base / "research")  # memory and workspace resolve from the task folder
        research = _run(base / "home-research", base / "research" / "task.md", base / "server.toml")
        os.chdir(base / "batched")
        batched = _run(base / "home-batched", base / "batched" / "task.md", DEFAULT_PROFILE)
    finally:
        os.chdir(saved)
    profile = base / "thinking.toml"
    profile.write_text(THINKING_PROFILE)
    task = _thinking_task(base / "thinking")
    thinking = _run(base / "home-thinking", task, profile)
    plain = base / "plain.toml"
    plain.write_text(PLAIN_PROFILE)
    resumed = _resumed(base / "home-resumed", task, plain)
    return {"research": research, "batched": batched, "thinking": thinking, "resumed": resumed}


def install(home: Path, transcript: Path) -> str:
    """Copy a transcript into this test's AGENTCTL_HOME; its session id."""
    folder = home / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(transcript, folder / transcript.name)
    return transcript.stem


@pytest.fixture
def research(_isolated_env: Path, transcripts: dict[str, Path]) -> Iterator[Transcript]:
    install(_isolated_env, transcripts["research"])
    yield load_session(transcripts["research"].stem)


@pytest.fixture
def batched(_isolated_env: Path, transcripts: dict[str, Path]) -> Iterator[Transcript]:
    install(_isolated_env, transcripts["batched"])
    yield load_session(transcripts["batched"].stem)


@pytest.fixture
def thinking(_isolated_env: Path, transcripts: dict[str, Path]) -> Iterator[Transcript]:
    install(_isolated_env, transcripts["thinking"])
    yield load_session(transcripts["thinking"].stem)


@pytest.fixture
def resumed(_isolated_env: Path, transcripts: dict[str, Path]) -> Iterator[Transcript]:
    install(_isolated_env, transcripts["resumed"])
    yield load_session(transcripts["resumed"].stem)
