"""`agentctl batch` throughput: N offline tasks at --parallel 1, 4 and 16, as tasks/second,
the ratio to --parallel 1, and the peak resident memory of the process; then the cost and wall
time of `--via batches` against `--via messages` (expect 0.5x the cost).

Run: .venv/bin/python bench/batch.py [--tasks 40] [--parallel 1 4 16] [--cost-parallel 16]
Each setting runs in a fresh child process (its own peak memory, a cold import like a real
`agentctl batch`); every task is a 7-turn run of the emulator's default model over a small
workspace, with isolated memory and a transcript, as the CLI does it. The cost comparison
runs each way against ONE emulator started in the child (as the real API is one server), not
--offline: offline, every task of --via messages gets an emulator and so a prompt cache of its
own, while --via batches shares one, and the usage (not only the price) would differ.
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


def one(tasks: Path, parallel: int, out: Path, via: str) -> dict[str, Any]:
    """In the child: run the batch, report seconds, tasks done, cost and peak memory.
    `via` "offline" (--offline --via messages), or messages/batches against one emulator."""
    import os

    from agentctl.batch import BatchSpec, ResultsStore, create, read_source, run_batch
    from agentctl.emulator.server import running

    offline = via == "offline"
    with nullcontext() if offline else running() as emulator:
        os.environ["ANTHROPIC_API_KEY"] = "sk-bench-not-a-key"  # the child's own environment
        sets = (f"api.base_url={emulator.base_url}",) if emulator is not None else ()
        way = "messages" if offline else via
        spec = BatchSpec(str(tasks), sets=sets, offline=offline, via=way, parallel=parallel)
        started = time.perf_counter()
        create(out, spec)
        store = ResultsStore(out)
        run_batch(spec, read_source(spec.source), out, store, lambda _: None)
        seconds = time.perf_counter() - started
    ok = sum(line["status"] == "ok" for line in store.lines)
    cost = sum(line["cost_usd"] or 0.0 for line in store.lines)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"parallel": parallel, "seconds": seconds, "ok": ok, "peak_mb": peak_mb, "cost": cost}


def measure(count: int, parallel: int, via: str = "offline") -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tasks = make_tasks(root, count)
        env_home = {"AGENTCTL_HOME": str(root / "home")}
        args = ["--child", str(tasks), str(parallel), str(root / "out"), via]
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
        tasks, parallel, out, via = sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
        print(json.dumps(one(Path(tasks), parallel, out, via)))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--cost-parallel", type=int, default=16)
    args = parser.parse_args()
    rows = [measure(args.tasks, p) for p in args.parallel]
    base = args.tasks / rows[0]["seconds"]
    print(f"{args.tasks} offline tasks (7 turns each), isolated memory, transcripts on")
    print(f"{'parallel':>8} {'seconds':>8} {'tasks/s':>8} {'vs p1':>6} {'ok':>4} {'peak MB':>8}")
    for row in rows:
        rate = args.tasks / row["seconds"]
        print(
            f"{row['parallel']:>8} {row['seconds']:>8.2f} {rate:>8.2f} {rate / base:>5.2f}x "
            f"{row['ok']:>4} {row['peak_mb']:>8.0f}"
        )
    compare_cost(args.tasks, args.cost_parallel)


def compare_cost(count: int, parallel: int) -> None:
    """--via messages --parallel P against --via batches (every task in each round), each
    against one emulator: total cost, its ratio, wall time."""
    messages = measure(count, parallel, "messages")
    batches = measure(count, count, "batches")
    print(f"\n{count} tasks against one emulator: cost of --via batches vs --parallel {parallel}")
    print(f"{'via':>18} {'seconds':>8} {'ok':>4} {'cost $':>9} {'vs messages':>11}")
    for name, row in ((f"messages (p{parallel})", messages), ("batches", batches)):
        ratio = row["cost"] / messages["cost"] if messages["cost"] else float("nan")
        print(
            f"{name:>18} {row['seconds']:>8.2f} {row['ok']:>4} {row['cost']:>9.4f} {ratio:>10.2f}x"
        )


if __name__ == "__main__":
    main()
