"""Documented examples run where their page says to run them: from the repository root.

The root is a copy of the checkout's tracked files (a fresh clone, not this working tree with
its virtualenv and earlier runs' memory), so the offline model sees the whole repository as
its workspace, as a newcomer's first run does.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def blocks(page: str, language: str) -> list[str]:
    text = (ROOT / page).read_text()
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def pipeline_lines() -> list[str]:
    """The README's "In pipelines" commands."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## In pipelines", 1)[1]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)[:1]
    return [line for line in block.splitlines() if line.strip()]


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository root as a fresh clone has it (tracked files only), as the cwd."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode()
    root = tmp_path / "agentctl"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / name)
    monkeypatch.chdir(root)
    return root


@pytest.mark.slow
def test_the_readme_first_pipeline_example_answers_from_the_root(checkout: Path) -> None:
    line = pipeline_lines()[0]
    assert line.endswith("> answer.md"), line  # the example this test is about
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-c", line], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = (checkout / "answer.md").read_text()
    assert answer.startswith("From my notes"), answer[:500]
    assert "stop=end_turn" in done.stderr


@pytest.mark.slow
def test_the_python_first_example_answers_from_the_root(checkout: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks("docs/python.md", "python")[0], "docs/python.md", "exec"), {})
    printed = out.getvalue()
    assert "ResultEvent(" in printed
    assert " end_turn " in printed, printed[-2000:]
    assert (checkout / "memory").is_dir()
