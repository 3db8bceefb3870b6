"""`agentctl batch` throughput: N offline tasks at --parallel 1, 4 and 16, as tasks/second,
the ratio to --parallel 1, and the peak resident memory of the process.

Run: .venv/bin/python bench/batch.py [--tasks 40] [--parallel 1 4 16] [--executor local ray]
Each setting runs in a fresh child process (its own peak memory, a cold import like a real
`agentctl batch`); every task is a 7-turn run of the emulator's default model over a small
workspace, with isolated memory and a transcript, as the CLI does it.

With `--executor ray` each setting starts its own local Ray instance (default CPUs, no
dashboard): `start s` is that start, left out of `seconds`; `peak MB` is the batch's own
process, and `ray MB` the largest Ray process it started (RUSAGE_CHILDREN: one process's
peak, not a sum).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def make_tasks(folder: Path, count: int) -> Path:
    tasks = folder / "tasks"
    (tasks / "ws").mkdir(parents=True)
    for name, text in (("a.txt", "alpha: RENEWAL 2027\n"), ("b.txt", "beta: NOTICE 30 days\n")):
        (tasks / "ws" / name).write_text(text)
    for n in range(count):
        (tasks / f"t{n:03}.md").write_text(f'+++\nworkspace = "ws"\n+++\nSummarise part {n}.\n')
    return tasks


def one(tasks: Path, parallel: int, out: Path, executor: str) -> dict[str, Any]:
    """In the child: run the batch, report seconds, tasks done and peak memory."""
    from agentctl.batch import BatchSpec, ResultsStore, create, read_source, run_tasks
    from agentctl.batch.executor import open_executor

    spec = BatchSpec(source=str(tasks), offline=True, parallel=parallel, executor=executor)
    opening = time.perf_counter()
    with open_executor(spec) as runner:
        started = time.perf_counter()
        create(out, spec)
        store = ResultsStore(out)
        run_tasks(spec, read_source(spec.source), out, store, lambda _: None, executor=runner)
        seconds = time.perf_counter() - started
    ok = sum(line["status"] == "ok" for line in store.lines)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ray_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "parallel": parallel,
        "seconds": seconds,
        "start": started - opening,
        "ok": ok,
        "peak_mb": peak_mb,
        "ray_mb": ray_mb,
    }


def measure(count: int, parallel: int, executor: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks = make_tasks(root, count)
        env_home = {"AGENTCTL_HOME": str(root / "home")}
        args = ["--child", str(tasks), str(parallel), str(root / "out"), executor]
        child = subprocess.run(
            [sys.executable, __file__, *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**_env(), **env_home},
        )
    data: dict[str, Any] = json.loads(child.stdout)
    return data


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        tasks, parallel, out, executor = (
            sys.argv[2],
            int(sys.argv[3]),
            Path(sys.argv[4]),
            sys.argv[5],
        )
        print(json.dumps(one(Path(tasks), parallel, out, executor)))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--executor", nargs="+", default=["local"], choices=["local", "ray"])
    args = parser.parse_args()
    print(f"{args.tasks} offline tasks (7 turns each), isolated memory, transcripts on")
    head = f"{'executor':>8} {'parallel':>8} {'seconds':>8} {'tasks/s':>8} {'vs p1':>6} {'ok':>4}"
    print(f"{head} {'peak MB':>8} {'start s':>8} {'ray MB':>7}")
    for executor in args.executor:
        rows = [measure(args.tasks, p, executor) for p in args.parallel]
        base = args.tasks / rows[0]["seconds"]
        for row in rows:
            rate = args.tasks / row["seconds"]
            print(
                f"{executor:>8} {row['parallel']:>8} {row['seconds']:>8.2f} {rate:>8.2f} "
                f"{rate / base:>5.2f}x {row['ok']:>4} {row['peak_mb']:>8.0f} "
                f"{row['start']:>8.2f} {row['ray_mb']:>7.0f}"
            )


if __name__ == "__main__":
    main()
