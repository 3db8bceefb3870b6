"""Per-turn client work counted in instructions (valgrind), which the machine's load leaves alone.

Usage: python bench/turn_instructions.py [--short 21] [--long 61] [--streamed]

bench/scale.py's per-turn CPU ratios move with the load of a shared machine (the same code
gave 0.93x-1.30x in three runs of one sitting); the number of instructions a turn executes
does not. Each session of bench/scale.py's workload (agentctl with `api.threads = true`, the
SDK's `tool_runner` in its default mode, with --streamed also the runner streaming) runs in a
child process under `valgrind --tool=callgrind` (the emulator's process is not traced), once
with --short and once with --long turns; the difference divided by the extra turns is the
instructions a turn costs, the startup and imports cancelling out. About 3 minutes a session
here (valgrind runs Python some 50x slower). Needs `valgrind` on PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSIONS = {
    "agentctl, threads=True": "agentctl",
    "SDK tool_runner, thread=default": "sdk",
    "SDK tool_runner, thread=default, stream=True": "sdk-stream",
}


def child(which: str, turns: int) -> None:
    """One session of `turns` turns in this process (under valgrind)."""
    sys.path.insert(0, str(HERE))
    import anthropic  # noqa: F401  (imported before either session: the same startup)
    import scale

    import agentctl  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="agentctl-instr-") as tmp:
        work, script = scale.write_workload(Path(tmp), turns)
        server = scale.Server(script)
        try:
            if which == "agentctl":
                scale.run_agentctl(server.url, work, turns, True, {})
            else:
                scale.run_sdk(server.url, work, turns, True, stream=which == "sdk-stream")
        finally:
            server.close()


def instructions(which: str, turns: int) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
           "--callgrind-out-file=/dev/null", sys.executable, __file__, "--child", which,
           str(turns)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or found is None:
        raise SystemExit(f"{which}, {turns} turns: {done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=21)
    parser.add_argument("--long", type=int, default=61)
    parser.add_argument("--streamed", action="store_true", help="also the SDK runner streaming")
    parser.add_argument("--child", nargs=2, metavar=("WHICH", "TURNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench/turn_instructions.py needs valgrind")
    chosen = {k: v for k, v in SESSIONS.items() if args.streamed or v != "sdk-stream"}
    per_turn = {}
    for label, which in chosen.items():
        extra = instructions(which, args.long) - instructions(which, args.short)
        per_turn[label] = extra / (args.long - args.short)
        print(f"{label}: {per_turn[label] / 1e6:.2f} M instructions a turn", flush=True)
    base = per_turn["SDK tool_runner, thread=default"]
    for label, count in per_turn.items():
        print(f"{label}: {count / base:.3f}x the SDK's default runner", flush=True)


if __name__ == "__main__":
    main()
