"""Scale: how a run's client-side cost grows with its length (issue 26's loop figures).

Usage: python bench/scale.py [--quick] [--long N] [--profile TURNS] [--markdown]

Every session is scripted (the emulator's `[[turn]]` script: one `read_file` call a turn,
each answered with a ~9 kB file, about 2.2k tokens) and served by `agentctl emulator serve`
in its own process, so the CPU measured here is the client's alone (`time.process_time` of
this process). Measured in one run:
- per-turn client CPU over turns 10-110 of agentctl (`agentctl.run`, default profile, no
  transcript) and of the SDK's own `client.beta.messages.tool_runner` on the same script,
  each with message threads (api.threads = true; the SDK's default) and without (the whole
  history each turn; the SDK with `thread=False`), as ratios to the SDK's default;
- the exponent k of total client CPU ~ turns^k over sessions of 100, 300 and 1,000 turns
  (least squares on the logs), and the same for the bytes sent (the emulator's count of
  request bytes) and the client's peak RSS growth (`ru_maxrss` of a fresh child process);
- with --long N: one N-turn session (clearing + compaction as the default profile has
  them), its prompt at the end, peak RSS and per-turn CPU of its first and last 100 turns.
`--profile TURNS` runs one agentctl session under cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULT_BYTES = 9_000  # ~2.2k tokens of text per tool result
WORDS = ["shard", "replica", "queue", "worker", "batch", "lease", "token", "window", "budget", "flush", "commit"]


def file_text(seed: int, size: int = RESULT_BYTES) -> str:
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(size // 6)]
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)[:size]


def write_workload(root: Path, turns: int, files: int = 50) -> tuple[Path, Path]:
    """A workspace of `files` files and a script of `turns` read_file turns (+ a final)."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (work / f"f{i}.txt").write_text(file_text(i))
    lines = []
    for t in range(turns):
        lines += ["[[turn]]", f'text = "reading {t}"', "[[turn.tool_use]]", 'name = "read_file"',
                  f'input = {{ path = "f{t % files}.txt", limit = 2000 }}', ""]  # fmt: skip
    lines += ["[[turn]]", 'text = "done"', 'stop_reason = "end_turn"']
    script = root / "script.toml"
    script.write_text("\n".join(lines) + "\n")
    return work, script


class Server:
    """`agentctl emulator serve` in a child process (its CPU is not the client's)."""

    def __init__(self, script: Path) -> None:
        cmd = [sys.executable, "-m", "agentctl", "emulator", "serve", "--script", str(script)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, cwd=REPO)  # fmt: skip
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


@dataclass
class Session:
    label: str
    times: list[float] = field(default_factory=list)  # process CPU after each turn

    def per_turn_ms(self, first: int, last: int) -> float:
        last = min(last, len(self.times) - 1)
        return (self.times[last] - self.times[first]) * 1000 / (last - first)


def run_agentctl(url: str, work: Path, turns: int, threads: bool, sets: dict[str, Any]) -> Session:
    import agentctl
    from agentctl.types import TurnEvent

    os.environ["ANTHROPIC_BASE_URL"] = url
    os.environ["ANTHROPIC_API_KEY"] = "sk-bench"
    profile = work.parent / "bench.toml"
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in sets.items())
    api = "[api]\nthreads = true\n" if threads else ""
    profile.write_text(f"max_turns = {turns + 5}\n{extra}{api}")
    session = Session(f"agentctl, threads={threads}")
    start = time.process_time()

    def on_event(event: object) -> None:
        if isinstance(event, TurnEvent):
            session.times.append(time.process_time() - start)

    agentctl.run("Read the files.", profile=profile, workspace=work, on_event=on_event,
                 record=False)  # fmt: skip
    return session


def run_sdk(url: str, work: Path, turns: int, threads: bool) -> Session:
    import anthropic
    from anthropic import beta_tool

    @beta_tool
    def read_file(path: str, limit: int = 2000) -> str:
        """Read a text file of the workspace."""
        return (work / path).read_text()

    client = anthropic.Anthropic(base_url=url, api_key="sk-bench", max_retries=0)
    session = Session(f"SDK tool_runner, thread={'default' if threads else 'False'}")
    start = time.process_time()
    kwargs: dict[str, Any] = {} if threads else {"thread": False}
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5", max_tokens=4096, tools=[read_file],
        messages=[{"role": "user", "content": "Read the files."}], max_iterations=turns + 5,
        **kwargs,
    )  # fmt: skip
    for _message in runner:
        session.times.append(time.process_time() - start)
    return session


def per_turn_rows(turns: int = 111) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            runs: list[Callable[[], Session]] = [
                lambda: run_sdk(server.url, work, turns, True),
                lambda: run_sdk(server.url, work, turns, False),
                lambda: run_agentctl(server.url, work, turns, True, {}),
                lambda: run_agentctl(server.url, work, turns, False, {}),
            ]
            sessions = [run() for run in runs]
        finally:
            server.close()
    return [(s.label, s.per_turn_ms(10, 110)) for s in sessions]


def child_session(turns: int, threads: bool) -> dict[str, float]:
    """One agentctl session in a fresh process: CPU, peak RSS growth, bytes sent."""
    code = (
        "import sys, json, resource; sys.path.insert(0, %r); import scale; "
        "print(json.dumps(scale.measured_session(%d, %r)))" % (str(REPO / "bench"), turns, threads)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measured_session(turns: int, threads: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            import anthropic  # noqa: F401

            import agentctl  # noqa: F401  (imports before the baseline RSS)

            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            session = run_agentctl(server.url, work, turns, threads, {})
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        finally:
            server.close()
    return {"cpu_s": session.times[-1], "rss_kb": rss, "turns": len(session.times)}


def exponent(xs: list[float], ys: list[float]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


def profile_session(turns: int, threads: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            prof = cProfile.Profile()
            prof.enable()
            session = run_agentctl(server.url, work, turns, threads, {})
            prof.disable()
        finally:
            server.close()
    print(f"{session.label}: {turns} turns, {session.times[-1]:.2f} s CPU", file=sys.stderr)
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats("agentctl/(agent|context|render)", 25)
    stats.sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=int, default=0, metavar="TURNS")
    parser.add_argument("--full", action="store_true", help="--profile without threads")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--long", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.profile:
        profile_session(args.profile, threads=not args.full)
        return
    rows = per_turn_rows()
    sdk = rows[0][1]
    for label, ms in rows:
        print(f"per-turn CPU, turns 10-110: {label}: {ms:.2f} ms ({ms / sdk:.2f}x SDK default)")


if __name__ == "__main__":
    main()
