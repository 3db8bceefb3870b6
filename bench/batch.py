"""`agentctl batch` throughput: N offline tasks at --parallel 1, 4 and 16, as tasks/second,
the ratio to --parallel 1, and the peak resident memory of the process; then the cost and wall
time of `--via batches` against `--via messages` (expect 0.5x the cost).

Run: .venv/bin/python bench/batch.py [--tasks 40] [--parallel 1 4 16] [--executor local ray]
     [--cost-parallel 16]
Each setting runs in a fresh child process (its own peak memory, a cold import like a real
`agentctl batch`); every task is a 7-turn run of the emulator's default model over a small
workspace, with isolated memory and a transcript, as the CLI does it.

With `--executor ray` each setting starts its own local Ray instance (default CPUs, no
dashboard): `start s` is that start, left out of `seconds`; `peak MB` is the batch's own
process, and `ray MB` the largest Ray process it started (RUSAGE_CHILDREN: one process's
peak, not a sum).

The cost comparison (local executor: --via batches does not run on Ray) runs each way against
ONE emulator started in the child (as the real API is one server), not --offline: offline,
every task of --via messages gets an emulator and so a prompt cache of its own, while --via
batches shares one, and the usage (not only the price) would differ.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
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


def one(tasks: Path, parallel: int, out: Path, executor: str, via: str) -> dict[str, Any]:
    """In the child: run the batch, report seconds, tasks done, cost and peak memory.
    `via` "offline" (--offline --via messages), or messages/batches against one emulator."""
    import os

    from agentctl.batch import BatchSpec, ResultsStore, create, read_source, run_tasks
    from agentctl.batch.executor import open_executor
    from agentctl.emulator import running

    offline = via == "offline"
    with nullcontext() if offline else running() as emulator:
        os.environ["ANTHROPIC_API_KEY"] = "sk-bench-not-a-key"  # the child's own environment
        sets = (f"api.base_url={emulator.base_url}",) if emulator is not None else ()
        way = "messages" if offline else via
        spec = BatchSpec(
            str(tasks), sets=sets, offline=offline, via=way, parallel=parallel, executor=executor
        )
        opening = time.perf_counter()
        with open_executor(spec) as runner:
            started = time.perf_counter()
            create(out, spec)
            store = ResultsStore(out)
            run_tasks(spec, read_source(spec.source), out, store, lambda _: None, executor=runner)
            seconds = time.perf_counter() - started  # before a Ray instance is stopped
    ok = sum(line["status"] == "ok" for line in store.lines)
    cost = sum(line["cost_usd"] or 0.0 for line in store.lines)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ray_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "parallel": parallel,
        "seconds": seconds,
        "start": started - opening,
        "ok": ok,
        "peak_mb": peak_mb,
        "ray_mb": ray_mb,
        "cost": cost,
    }


def measure(count: int, parallel: int, executor: str, via: str = "offline") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks = make_tasks(root, count)
        env_home = {"AGENTCTL_HOME": str(root / "home")}
        args = ["--child", str(tasks), str(parallel), str(root / "out"), executor, via]
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
        tasks, parallel, out = Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
        print(json.dumps(one(tasks, parallel, out, executor=sys.argv[5], via=sys.argv[6])))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--executor", nargs="+", default=["local"], choices=["local", "ray"])
    parser.add_argument("--cost-parallel", type=int, default=16)
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
    compare_cost(args.tasks, args.cost_parallel)


def compare_cost(count: int, parallel: int) -> None:
    """--via messages --parallel P against --via batches (every task in each round), each
    against one emulator: total cost, its ratio, wall time."""
    messages = measure(count, parallel, "local", "messages")
    batches = measure(count, count, "local", "batches")
    print(f"\n{count} tasks against one emulator: cost of --via batches vs --parallel {parallel}")
    print(f"{'via':>18} {'seconds':>8} {'ok':>4} {'cost $':>9} {'vs messages':>11}")
    for name, row in ((f"messages (p{parallel})", messages), ("batches", batches)):
        ratio = row["cost"] / messages["cost"] if messages["cost"] else float("nan")
        print(
            f"{name:>18} {row['seconds']:>8.2f} {row['ok']:>4} {row['cost']:>9.4f} {ratio:>10.2f}x"
        )


if __name__ == "__main__":
    main()
