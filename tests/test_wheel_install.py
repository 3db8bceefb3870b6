"""The README and docs pages followed from a wheel install, as a `pip install agentctl` user
meets them: no checkout, so no `examples/` or `configs/` until the pages' own instructions
make them (`agentctl example copy --all`, `agentctl profile init --preset NAME FILE`).

Once per module the wheel is built from the checkout's tracked files (a fresh clone) and
installed into a fresh venv in a temporary folder; its dependencies come from this
environment through a .pth file (nothing is downloaded but the build backend, as pip's
isolated build fetches it). Each page then runs, in a new folder outside the checkout with
HOME there too, its first runnable example, its first Python one, its first that names
`examples/` and every one that names `configs/` or `agentctl example` (tests/docs_examples.py
finds them; tests/test_docs_examples.py runs them all from a checkout). Examples marked
`checkout:` need files the wheel does not carry and are left out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs_examples import PAGES, Example, checkout_only, examples
from tests.test_docs_examples import SETUP, TASK, run_example

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Install:
    venv: Path
    site: Path  # the venv's site-packages, where the wheel put agentctl

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def env(self, home: Path) -> dict[str, str]:
        env = dict(os.environ, HOME=str(home), COLUMNS="100")
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env['PATH']}"
        for name in (
            "PYTHONPATH",
            "VIRTUAL_ENV",
            "AGENTCTL_HOME",
            "AGENTCTL_PROFILE",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
        ):
            env.pop(name, None)
        return env


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Install:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout")
    base = tmp_path_factory.mktemp("wheel")
    source = base / "agentctl"
    listed = _run(["git", "ls-files", "-z"], ROOT)
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "-w", str(base / "dist"), str(source)], base)
    (wheel,) = (base / "dist").glob("agentctl-*.whl")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    _run([*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index",
          str(wheel)], base)  # fmt: skip
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return Install(venv, site)


def test_the_installed_command_runs_the_wheel_not_the_checkout(
    installed: Install, tmp_path: Path
) -> None:
    code = (
        "import agentctl, agentctl.profile.preset as p; print(agentctl.__file__, p.presets_dir())"
    )
    printed = _run([installed.python, "-c", code], tmp_path, installed.env(tmp_path)).split()
    assert printed == [
        str(installed.site / "agentctl" / "__init__.py"),
        str(installed.site / "agentctl" / "presets"),
    ]


def test_copy_all_writes_every_example_the_docs_name(installed: Install, tmp_path: Path) -> None:
    env = installed.env(tmp_path)
    agentctl = str(installed.venv / "bin" / "agentctl")
    out = _run([agentctl, "example", "copy", "--all"], tmp_path, env)
    assert out.startswith("copied every example to examples: mcp, memory-carryover,")
    typed = [
        text
        for page in PAGES
        for e in examples(page)
        for text in ([c.line for c in e.commands] if e.kind == "shell" else [e.text])
    ]
    named = {found for text in typed for found in re.findall(r"examples/([\w.-]+)/", text)}
    assert named and {n for n in named if not (tmp_path / "examples" / n).is_dir()} == set()
    assert not list((tmp_path / "examples").glob("*/memory"))


# The profiles of configs/ that a page's commands name, written where the page expects them
# (README, "Documentation").
_CONFIG = re.compile(r"\bconfigs/([\w-]+)\.toml")
# What a checkout has and an install makes first: the examples (copied), the configs/
# profiles (written from the presets) and `agentctl example` itself.
_EXAMPLES = re.compile(r"\bexamples/")
_MADE = re.compile(r"\bconfigs/|agentctl example ")


def _wheel_examples(page: str) -> list[Example]:
    """A page's examples run from the wheel: its first, its first Python one, its first that
    names `examples/`, and every one that names `configs/` or `agentctl example`."""
    runnable = [e for e in examples(page) if e.skip is None and checkout_only(e) is None]
    firsts = {
        id(found[0])
        for found in (
            runnable,
            [e for e in runnable if e.kind == "python"],
            [e for e in runnable if _EXAMPLES.search(e.text)],
        )
        if found
    }
    return [e for e in runnable if id(e) in firsts or _MADE.search(e.text)]


WHEEL_PAGES = [page for page in PAGES if _wheel_examples(page)]


def test_every_page_with_runnable_examples_is_followed_from_the_wheel() -> None:
    runnable = {p for p in PAGES if any(e.skip is None for e in examples(p))}
    assert set(WHEEL_PAGES) == runnable and len(WHEEL_PAGES) > 10


@pytest.mark.parametrize("page", WHEEL_PAGES)
def test_a_page_followed_from_the_wheel_runs_as_shown(
    page: str, installed: Install, tmp_path: Path
) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = installed.env(home)
    chosen = _wheel_examples(page)
    made = ["agentctl example copy --all > /dev/null"]
    made += [
        f"agentctl profile init --preset {name} configs/{name}.toml > /dev/null"
        for name in sorted({n for e in chosen for n in _CONFIG.findall(e.text)})
    ]
    setup = "\n".join(["set -e", *made, TASK, SETUP.get(page, "")])
    subprocess.run(["bash", "-c", setup], cwd=work, env=env, check=True, timeout=600)
    problems: list[str] = []
    for example in chosen:
        problems += run_example(example, work, env, tmp_path / "out", installed.python)
    assert problems == [], "\n".join(problems)
