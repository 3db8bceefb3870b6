"""Startup wall time of light agentctl commands against bare Python baselines.

Usage: python bench/startup.py [-n RUNS]

Runs each command RUNS times (default 15) after one warm-up, and prints the median wall time
in ms and its ratio to `python -c pass`. The light commands must never import anthropic; the
target for `agentctl memory view` is < 150 ms on a 2-core box.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def agentctl() -> list[str]:
    """The console script next to this interpreter, else `python -m agentctl`."""
    script = Path(sys.executable).parent / "agentctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentctl"]


def has_command(cmd: list[str]) -> bool:
    """True when `cmd --help` exits 0 (e.g. `profile show` may not exist yet)."""
    done = subprocess.run([*cmd, "--help"], capture_output=True, check=False)
    return done.returncode == 0


def median_ms(cmd: list[str], runs: int) -> float:
    """Median wall time of `cmd` over `runs` runs, after one warm-up run."""
    subprocess.run(cmd, capture_output=True, check=False)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def commands(root: Path) -> list[tuple[str, list[str]]]:
    py, app = sys.executable, agentctl()
    rows = [
        ("python -c pass", [py, "-c", "pass"]),
        ('python -c "import typer, rich"', [py, "-c", "import typer, rich"]),
        ("agentctl --help", [*app, "--help"]),
        ("agentctl memory view --root TMP", [*app, "memory", "view", "--root", str(root)]),
    ]
    if has_command([*app, "profile", "show"]):
        rows.append(("agentctl profile show", [*app, "profile", "show"]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=15)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-bench-"))
    try:
        root = tmp / "memory"
        (root / "notes").mkdir(parents=True)
        (root / "notes" / "todo.md").write_text("- measure startup\n")
        rows = [(name, median_ms(cmd, args.runs)) for name, cmd in commands(root)]
    finally:
        shutil.rmtree(tmp)
    base = rows[0][1]
    print(f"median of {args.runs} runs, {sys.version.split()[0]}")
    print(f"{'command':<36} {'ms':>8} {'x pass':>8}")
    for name, ms in rows:
        print(f"{name:<36} {ms:8.1f} {ms / base:8.2f}")


if __name__ == "__main__":
    main()
