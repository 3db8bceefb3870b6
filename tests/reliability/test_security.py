"""The API key never lands on disk or in output; everything agentctl writes is owner-only.

A real, non-offline run: `agentctl emulator serve` in its own process, `agentctl run` in
another with a sentinel key, a failing run (the error path formats messages), a resume; then
every file under AGENTCTL_HOME, the memory root and the working folder is searched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import (
    emulator_process,
    expected_facts,
    invoke,
    make_workspace,
    private_mode_problems,
)

AGENTCTL = [sys.executable, "-m", "agentctl"]
SENTINEL = "sk-ant-api03-SENTINEL-d0-not-leak-7Qz"
TOKEN = "SENTINEL-BEARER-TOKEN-5mX"


@pytest.fixture(autouse=True)
def _permissive_umask() -> Iterator[None]:
    """A common, permissive umask: the modes checked here must not depend on it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[str]:
    """`agentctl emulator serve` as a subprocess; yields its base URL."""
    with emulator_process(tmp_path, "429:0@3-7") as (url, stderr):
        yield url
    assert SENTINEL not in stderr[0] and TOKEN not in stderr[0]


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENTCTL, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def files_containing(top: Path, secret: str) -> list[str]:
    found = []
    for dirpath, _dirs, names in os.walk(top):
        for name in names:
            path = Path(dirpath) / name
            if secret.encode() in path.read_bytes():
                found.append(str(path.relative_to(top)))
    return found


@pytest.mark.slow
def test_the_key_is_never_written_and_files_are_private(tmp_path: Path, serve: str) -> None:
    home = tmp_path / "home" / "agentctl"
    task = make_workspace(tmp_path, 3)
    env = {**os.environ, "AGENTCTL_HOME": str(home), "ANTHROPIC_BASE_URL": serve,
           "ANTHROPIC_API_KEY": SENTINEL}  # fmt: skip
    # Requests 3-7 fail with 429: with no retries the first run stops with an API error...
    failed = run(["run", str(task), "--set", "api.max_retries=0"], tmp_path, env)
    assert failed.returncode == 1 and "429" in failed.stderr, failed.stderr
    # ...the resume rides out the rest of them and finishes.
    resumed = run(
        ["run", "--resume", "last", "--json", "--set", "api.max_retries=6"], tmp_path, env
    )
    assert resumed.returncode == 0, resumed.stderr
    assert all(fact in resumed.stdout for fact in expected_facts(3))
    bearer = {**env, "ANTHROPIC_AUTH_TOKEN": TOKEN}
    del bearer["ANTHROPIC_API_KEY"]
    again = run(["run", str(task), "--quiet"], tmp_path, bearer)
    assert again.returncode == 0, again.stderr
    shown = run(["sessions", "show", "last"], tmp_path, env)
    assert shown.returncode == 0, shown.stderr
    for out in (failed, resumed, again, shown):
        assert SENTINEL not in out.stdout + out.stderr and TOKEN not in out.stdout + out.stderr
    assert len(list((home / "sessions").glob("*.jsonl"))) == 2
    assert files_containing(tmp_path, SENTINEL) == []
    assert files_containing(tmp_path, TOKEN) == []
    assert private_mode_problems(home) == []
    assert private_mode_problems(tmp_path / "mem") == []
    assert oct((tmp_path / "mem").stat().st_mode & 0o777) == "0o700"


@pytest.mark.dates
def test_agentctl_home_made_by_a_run_is_private_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug fixed: mkdir(parents=True) made AGENTCTL_HOME (and ~/.local/share/agentctl) 0755.
    home = tmp_path / "new" / "agentctl"
    monkeypatch.setenv("AGENTCTL_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    result = invoke("run", str(make_workspace(tmp_path, 1)), "--offline", "--quiet")
    assert result.exit_code == 0, result.output
    assert [oct(p.stat().st_mode & 0o777) for p in (tmp_path / "new", home)] == ["0o700"] * 2
    assert private_mode_problems(tmp_path / "new") == []
