"""Transcript bytes against a baseline version: the research example and a scripted session.

Usage: python bench/transcript_size.py [--baseline REF] [--turns 200] [--json]

Runs, with this checkout and with agentctl at `--baseline` (a git ref, default `main`; its
source exported to a temporary folder), the same two offline sessions: the shipped research
example (`examples/research/task.md`) and a scripted session of `--turns` turns, each reading
a new ~7.5 kB file (bench/scale_replay.py's `make_session`). It reports the transcript's bytes
under each version, by record type, and their ratio; then checks that this checkout reads the
baseline's transcripts as the baseline does (`sessions export`, byte-identical JSON).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_replay import export, make_session

REPO = Path(__file__).resolve().parent.parent


def research(folder: Path, env: dict[str, str]) -> Path:
    """The research example run offline in `folder`; its AGENTCTL_HOME."""
    shutil.copytree(REPO / "examples" / "research", folder / "research")
    home = folder / "home"
    env = {**env, "AGENTCTL_HOME": str(home), "NO_COLOR": "1"}
    env.pop("AGENTCTL_PROFILE", None)
    cmd = [sys.executable, "-m", "agentctl", "run", "research/task.md", "--offline", "--quiet"]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"research: exit {done.returncode}: {done.stderr}")
    return home


def transcript(home: Path) -> Path:
    return next((home / "sessions").glob("*.jsonl"))


def by_type(path: Path) -> dict[str, int]:
    sizes: collections.Counter[str] = collections.Counter()
    for line in path.read_bytes().splitlines(keepends=True):
        sizes[json.loads(line)["type"]] += len(line)
    return dict(sizes)


def exported(home: Path, env: dict[str, str]) -> str:
    env = {**env, "AGENTCTL_HOME": str(home)}
    cmd = [sys.executable, "-m", "agentctl", "sessions", "export", transcript(home).stem]
    done = subprocess.run(
        cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True
    )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="transcript-size-"))
    (work / "baseline-src").mkdir()
    old_src = export(args.baseline, work / "baseline-src")
    versions = {
        "baseline": {**os.environ, "PYTHONPATH": str(old_src)},
        "this": {**os.environ, "PYTHONPATH": str(REPO)},
    }
    rows, same = [], {}
    try:
        homes: dict[tuple[str, str], Path] = {}
        for version, env in versions.items():
            os.environ["PYTHONPATH"] = env["PYTHONPATH"]  # make_session runs with os.environ
            homes["research", version] = research(work / f"research-{version}", env)
            homes["scripted", version] = make_session(work / f"scripted-{version}", args.turns)
        for name in ("research", "scripted"):
            before = transcript(homes[name, "baseline"])
            after = transcript(homes[name, "this"])
            rows.append({
                "session": name if name == "research" else f"scripted {args.turns} turns",
                "bytes_before": before.stat().st_size,
                "bytes_after": after.stat().st_size,
                "ratio": round(after.stat().st_size / before.stat().st_size, 3),
                "by_type_before": by_type(before),
                "by_type_after": by_type(after),
            })  # fmt: skip
            old_home = homes[name, "baseline"]
            same[name] = exported(old_home, versions["baseline"]) == exported(
                old_home, versions["this"]
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"rows": rows, "baseline_read_the_same": same}, indent=2))
        return
    for row in rows:
        print(
            f"{row['session']}: {row['bytes_before']:,} -> {row['bytes_after']:,} bytes "
            f"(x{row['ratio']}); message records {row['by_type_before'].get('message', 0):,} -> "
            f"{row['by_type_after'].get('message', 0):,}"
        )
    print(f"the baseline's transcripts read the same (sessions export): {same}")


if __name__ == "__main__":
    main()
