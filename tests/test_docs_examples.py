"""Documented examples run where their page says to run them: from the repository root.

The root is a copy of the checkout's tracked files (a fresh clone, not this working tree with
its virtualenv and earlier runs' memory), so the offline model sees the whole repository as
its workspace, as a newcomer's first run does.

Every example of README.md and docs/*.md (tests/docs_examples.py finds them) runs here, page by
page in document order in one such copy, with HOME and AGENTCTL_HOME in the test's folder and
no API key; unless its page marks it not runnable here, with the reason. A command passes when
it exits as the page shows (`exit=N`; an `agentctl: ...` error line: non-zero; else 0) and
prints every `agentctl: ...` line and every figure (`$0.1234`, `12,345`, `85.9%`) the page
shows for it. `pip install ...` is taken as done (the suite runs in an install of this
checkout); `.venv/bin/python` is this interpreter.
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

from tests.docs_examples import (
    FIGURE,
    PAGES,
    Command,
    Example,
    examples,
    line_pattern,
    skipped_commands,
    stray_markers,
)

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


def test_every_documented_example_is_run_or_marked_with_a_reason() -> None:
    found = [example for page in PAGES for example in examples(page)]
    assert len(found) > 40  # the finder still sees the pages' examples
    unexplained = [e.where for e in found if e.skip is not None and not e.skip]
    assert unexplained == [], "a skip marker needs a reason"
    assert [m for page in PAGES for m in stray_markers(page)] == []
    for example in found:
        for n in skipped_commands(example):
            assert 1 <= n <= len(example.commands), f"{example.where}: skip {n}: no such command"


# What a page's examples need that the page names without making it: `task.md`, a task of the
# reader's own; per page, the files its prose says to make first.
TASK = "printf 'Summarise the notes in this folder.\\n' > task.md"
SETUP: dict[str, str] = {
    "docs/memory.md": """
        mkdir -p lim && seq -f 'l%02g' 1 15 > lim/long.md
        printf '[memory]\\nroot = "lim"\\nmax_file_bytes = 64\\nmax_view_chars = 200\\n' > lim.toml
    """,
    "docs/profile.md": """
        printf 'betas = ["context-1m"]\\n' > bad-beta.toml
        printf 'model = "claude-sonnet-4-5"\\n[context_editing.tool_uses]\\n' > work.toml
        printf 'trigger = 3000\\nclear_at_least = 5000\\n' >> work.toml
    """,
    "docs/batch.md": """
        for id in a b c; do
          printf '{"id": "%s", "task": "Part %s.", "set": {"max_turns": 2}}\\n' $id $id \\
            >> tasks.jsonl
        done
        agentctl batch tasks.jsonl --offline --out ~/runs/b1 --set tools.workspace=false -q || true
    """,
    "docs/sessions.md": """
        agentctl run task.md --offline -q --set tools.workspace=false > /dev/null
        agentctl run task.md --offline -q --set tools.workspace=false > /dev/null
    """,
    "docs/python.md": """
        for id in renewal notice; do
          set='"set": {"tools.workspace": false}'
          line='{"id": "%s", "task": "Summarise the %s terms.", %s}\\n'
          printf "$line" $id $id "$set" >> tasks.jsonl
        done
    """,
}

RUNNABLE = [page for page in PAGES if any(e.skip is None for e in examples(page))]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE)
def test_the_examples_of_a_page_run_as_shown(page: str, checkout: Path, tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path / "home"), COLUMNS="100")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    (tmp_path / "home").mkdir()
    setup = f"{TASK}\n{SETUP.get(page, '')}"
    subprocess.run(["bash", "-c", setup], cwd=checkout, env=env, check=True)
    problems: list[str] = []
    for example in examples(page):
        if example.skip is None:
            problems += run_example(example, checkout, env, tmp_path / "out")
    assert problems == [], "\n".join(problems)


def run_example(
    example: Example, cwd: Path, env: dict[str, str], out: Path, python: str = sys.executable
) -> list[str]:
    """The problems of one example run in `cwd` (none: it ran as its page shows); `python` is
    the interpreter of the install under test (this one, or a wheel's venv)."""
    if example.kind == "python":
        done = subprocess.run(
            [python, "-c", example.text], cwd=cwd, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            return [f"{example.where}: exit {done.returncode}: {done.stderr[-1500:]}"]
        return []
    skipped = skipped_commands(example)
    todo = [(n, c) for n, c in enumerate(example.commands, 1) if n not in skipped]
    for _, command in todo:  # `$ cat FILE` shows the file: the reader has made it
        name = command.line.removeprefix("cat ")
        if name != command.line and command.shown and not (cwd / name).exists():
            (cwd / name).write_text("\n".join(command.shown) + "\n")
    results = _run_block([c.line for _, c in todo], cwd, env, out, python)
    return [
        problem
        for (n, command), (code, printed) in zip(todo, results, strict=True)
        for problem in _check(example, n, command, code, printed)
    ]


def _run_block(
    lines: list[str], cwd: Path, env: dict[str, str], out: Path, python: str
) -> list[tuple[int, str]]:
    """Run the commands in one shell (a `cd` carries over), each one's exit code and output."""
    out.mkdir(exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    script = []
    for n, line in enumerate(lines):
        line = re.sub(r"^pip install .*?(&&|$)", "", line).strip() or "true"
        line = line.replace(".venv/bin/python ", f"{python} ")
        script.append(f"{{ {line}\n}} > {out}/{n}.out 2>&1 < /dev/null; echo $? > {out}/{n}.rc")
    subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, timeout=600)
    return [
        (int((out / f"{n}.rc").read_text() or 1), (out / f"{n}.out").read_text())
        for n in range(len(lines))
    ]


def _check(example: Example, n: int, command: Command, code: int, printed: str) -> list[str]:
    where = f"{example.where} command {n} ({command.line[:60]})"
    flat = " ".join(printed.split())
    shown_exit = next((m for m in map(_exit_shown, command.shown) if m is not None), None)
    errors = [s for s in command.shown if s.startswith("agentctl: ") and "warning:" not in s]
    problems = []
    if shown_exit is not None and f"exit={shown_exit}" not in flat.replace("exit ", "exit="):
        problems.append(f"{where}: the page shows exit {shown_exit}: {printed[-1500:]}")
    elif shown_exit is None and (code != 0) != bool(errors):
        problems.append(f"{where}: exit {code}: {printed[-1500:]}")
    for shown in command.shown:
        if shown.startswith("agentctl") and not line_pattern(shown).search(flat):
            problems.append(f"{where}: not printed: {shown}")
    missing = [f for s in command.shown for f in FIGURE.findall(s) if f not in printed]
    if missing:
        problems.append(f"{where}: figures not printed: {' '.join(missing)}")
    return problems


def _exit_shown(line: str) -> int | None:
    found = re.fullmatch(r"exit[= ](\d+)", line.strip())
    return int(found[1]) if found else None
