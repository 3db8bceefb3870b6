"""Replay time against session length: `stats`, `simulate` and `tune` from 100 to 1,000 turns.

Usage: python bench/scale_replay.py [--turns 100,300,1000] [--tune-turns 100,300]
                                    [--baseline REF] [--baseline-turns 100,300]
                                    [--commands stats,simulate,tune] [--sessions DIR] [--json]

Makes one scripted offline session per length (each turn reads a new ~7.5 kB file: a ~2.2k-
token tool result, under the built-in profile's batched clearing; `--sessions DIR` keeps them
there and reuses them, since the 1,000-turn run itself takes minutes), then times, as CPU
seconds of the child process, `agentctl stats SESSION --json`, `agentctl simulate SESSION
--profile configs/balanced.toml --json` and `agentctl tune SESSION --json` on each. The
exponent is the slope of log(time) over log(turns) (least squares over the lengths given):
1.0 is linear, 2.0 the square of the session length. For `tune` it also reports how many
settings the sweep replayed at each length (`settings`) and the exponent of its time per
setting.

`--baseline REF` (a git ref, e.g. main before incremental replay) runs the same commands with
that version of agentctl (its source exported to a temporary folder) on the lengths of
`--baseline-turns` (it takes minutes past a few hundred turns), reports the speedup, and
checks that both versions print byte-identical JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORDS = [
    *("shard", "replica", "queue", "worker", "batch", "lease"),
    *("token", "window", "budget", "flush", "commit", "rollback"),
]
COMMANDS = {
    "stats": ["stats", "{s}", "--json"],
    "simulate": ["simulate", "{s}", "--profile", str(REPO / "configs/balanced.toml"), "--json"],
    "tune": ["tune", "{s}", "--json"],
}


def make_session(folder: Path, turns: int) -> Path:
    """A scripted offline run of `turns` turns in `folder` (reused when already there);
    returns its AGENTCTL_HOME."""
    home = folder / "home"
    if list((home / "sessions").glob("*.jsonl")):
        return home
    workspace = folder / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    draw = random.Random(7)
    script = ['final_text = "done"']
    for i in range(turns):
        lines = (" ".join(draw.choice(WORDS) for _ in range(10)) + f" {i}-{n}" for n in range(105))
        (workspace / f"f{i:04d}.txt").write_text("\n".join(lines) + "\n")
        script.append(
            f'[[turn]]\ntext = "reading {i}"\n[[turn.tool_use]]\nname = "read_file"\n'
            f'input = {{ path = "f{i:04d}.txt" }}\n'
        )
    (folder / "script.toml").write_text("\n".join(script))
    (folder / "task.md").write_text(
        '+++\nemulator_script = "script.toml"\nworkspace = "workspace"\n+++\nRead the files.\n'
    )
    env = {**os.environ, "AGENTCTL_HOME": str(home), "NO_COLOR": "1"}
    env.pop("AGENTCTL_PROFILE", None)
    env["AGENTCTL_EMULATOR_CONTEXT_WINDOW"] = "10000000"  # never the window's stop
    cmd = [sys.executable, "-m", "agentctl", "run", "task.md", "--offline", "--json", "--quiet",
           "--trust-task", "--max-turns", str(turns + 5)]  # fmt: skip
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"session of {turns} turns: exit {done.returncode}: {done.stderr}")
    return home


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds (user + system) of the child, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # a neutral folder: `python -m` puts the working folder first on sys.path, before
    # PYTHONPATH, so a checkout there would shadow the version under test
    done = subprocess.run(
        cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


@dataclass(frozen=True)
class Timing:
    command: str
    turns: int
    seconds: float
    baseline: float | None = None
    identical: bool | None = None
    candidates: int | None = None  # settings `tune` replayed (the grid and the descent)

    def to_json(self) -> dict[str, object]:
        return {
            "command": self.command, "turns": self.turns, "cpu_s": round(self.seconds, 3),
            "baseline_cpu_s": None if self.baseline is None else round(self.baseline, 3),
            "speedup": None if self.baseline is None else round(self.baseline / self.seconds, 2),
            "identical_output": self.identical, "candidates": self.candidates,
        }  # fmt: skip


def exponent(points: Sequence[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) over log(turns)."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(s, 1e-6)) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den


def export(ref: str, into: Path) -> Path:
    """The source of `ref` in `into` (git archive): what PYTHONPATH points at."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "agentctl"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run(args: argparse.Namespace) -> list[Timing]:
    return measure(
        args.turns, args.tune_turns, args.commands, args.sessions, args.baseline,
        args.baseline_turns,
    )  # fmt: skip


def measure(
    lengths: Sequence[int],
    tune_lengths: Sequence[int],
    commands: Sequence[str] = tuple(COMMANDS),
    sessions_dir: str | None = None,
    baseline: str | None = None,
    baseline_lengths: Sequence[int] = (),
) -> list[Timing]:
    """Each of `commands` on a scripted session of each length (`tune` only on
    `tune_lengths`); with `baseline` (a git ref), also that version on `baseline_lengths`."""
    sessions = Path(sessions_dir) if sessions_dir else Path(tempfile.mkdtemp(prefix="replay-"))
    old_src = export(baseline, Path(tempfile.mkdtemp())) if baseline else None
    timings: list[Timing] = []
    try:
        for turns in lengths:
            home = make_session(sessions / f"turns-{turns}", turns)
            session = next((home / "sessions").glob("*.jsonl")).stem
            env = {**os.environ, "AGENTCTL_HOME": str(home), "NO_COLOR": "1"}
            env.pop("AGENTCTL_PROFILE", None)
            for name, template in COMMANDS.items():
                if (name == "tune" and turns not in tune_lengths) or name not in commands:
                    continue
                cmd = [sys.executable, "-m", "agentctl", *(a.format(s=session) for a in template)]
                seconds, out = timed(cmd, env)
                base, same = None, None
                if old_src is not None and turns in baseline_lengths:
                    old_env = {**env, "PYTHONPATH": str(old_src)}
                    base, old_out = timed(cmd, old_env)
                    same = old_out == out
                count = len(json.loads(out)["ranked"]) if name == "tune" else None
                timings.append(Timing(name, turns, seconds, base, same, count))
    finally:
        if old_src is not None:
            shutil.rmtree(old_src)
        if not sessions_dir:
            shutil.rmtree(sessions)
    return timings


def summary(timings: list[Timing]) -> dict[str, float | None]:
    """The exponent of each command's time in turns, and of `tune`'s time per setting it
    replayed (the sweep's length depends on where its descent goes, not only on turns)."""
    slopes = {
        name: exponent([(t.turns, t.seconds) for t in timings if t.command == name])
        for name in COMMANDS
    }
    slopes["tune (per setting)"] = exponent(
        [(t.turns, t.seconds / t.candidates) for t in timings if t.candidates]
    )
    return slopes


def render(timings: list[Timing]) -> list[str]:
    rows = [f"{'command':<10}{'turns':>7}{'cpu s':>10}{'baseline s':>12}{'speedup':>9}{'same':>6}"
            f"{'settings':>10}"]  # fmt: skip
    for t in timings:
        base = "-" if t.baseline is None else f"{t.baseline:.2f}"
        speed = "-" if t.baseline is None else f"{t.baseline / t.seconds:.1f}x"
        same = "-" if t.identical is None else ("yes" if t.identical else "NO")
        count = "-" if t.candidates is None else str(t.candidates)
        rows.append(
            f"{t.command:<10}{t.turns:>7,}{t.seconds:>10.2f}{base:>12}{speed:>9}{same:>6}{count:>10}"
        )
    for name, slope in summary(timings).items():
        if slope is not None:
            rows.append(f"exponent of {name} time in turns: {slope:.2f}")
    return rows


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=_ints, default=[100, 300, 1000])
    parser.add_argument("--tune-turns", type=_ints, default=[100, 300, 1000])
    parser.add_argument("--baseline", help="a git ref to compare with (e.g. main)")
    parser.add_argument("--baseline-turns", type=_ints, default=[100, 300])
    parser.add_argument(
        "--commands",
        type=lambda t: t.split(","),
        default=list(COMMANDS),
        help="stats,simulate,tune",
    )
    parser.add_argument("--sessions", help="keep (and reuse) the generated sessions here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    timings = run(args)
    if args.json:
        rows = [t.to_json() for t in timings]
        print(json.dumps({"timings": rows, "exponents": summary(timings)}))
    else:
        print("\n".join(render(timings)))


if __name__ == "__main__":
    main()
