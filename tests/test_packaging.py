"""Packaging: the metadata, the package list, and a wheel that works where no checkout is.

The slow test builds the sdist and, from it, the wheel (so the sdist is complete enough to
build), installs the wheel into a fresh venv in a temporary folder (its dependencies come from
this environment through a .pth file, so nothing is downloaded), and runs a preset and a copied
example from there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_package_list_names_every_package_and_the_two_shipped_folders() -> None:
    setup = PROJECT["tool"]["setuptools"]
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "agentctl").rglob("__init__.py")
    }
    assert set(setup["packages"]) == found | {"agentctl.presets", "agentctl.examples"}
    assert setup["package-dir"] == {"agentctl.presets": "configs", "agentctl.examples": "examples"}


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    project = PROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")
    assert not any(c.startswith("License ::") for c in project["classifiers"])


def test_the_dependency_floors_are_the_measured_ones() -> None:
    """The floors .ci/min-versions proved: with typer 0.26 flag errors read "not a valid
    integer", 0.27.x loses options ("No such option: --model"); with rich below 14.3 the
    sessions table cuts its last column."""
    deps = {d.split(">=")[0]: d for d in PROJECT["project"]["dependencies"]}
    assert deps["typer"].startswith("typer>=0.28,") and deps["rich"] == "rich>=14.3"


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.slow
def test_the_built_wheel_carries_presets_and_examples_and_runs_them(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "-q", "-o", str(dist), str(REPO)], tmp_path)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"LICENSE", "tests/conftest.py", "configs/balanced.toml"} <= names
    assert not any(n.startswith("examples/") and "/memory/" in n for n in names)
    with zipfile.ZipFile(wheel) as whl:
        files = set(whl.namelist())
    assert "agentctl/presets/balanced.toml" in files
    assert "agentctl/examples/research/task.md" in files
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "-q", "--no-deps", "--no-index", str(wheel)], tmp_path)  # fmt: skip
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "AGENTCTL_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    agentctl = str(venv / "bin" / "agentctl")
    shown = run([agentctl, "profile", "show", "balanced"], work, env)
    assert f'source = "{site / "agentctl" / "presets" / "balanced.toml"}"' in shown
    run([agentctl, "example", "copy", "research"], work, env)
    assert (work / "research" / "workspace" / "logs").is_dir()
    args = [agentctl, "run", "research/task.md", "--offline", "--profile", "balanced"]
    done = subprocess.run(
        [*args, "--max-turns", "2"], cwd=work, env=env, capture_output=True, text=True
    )
    assert done.returncode == 3, done.stderr  # stopped by the turn limit: it ran
    assert f"profile={site / 'agentctl' / 'presets' / 'balanced.toml'}" in done.stderr
