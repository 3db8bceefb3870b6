"""Scale: how a run's client-side cost grows with its length (issue 26's loop figures).

Usage: python bench/scale.py [--quick] [--long N] [--profile TURNS] [--markdown]

Every session is scripted (the emulator's `[[turn]]` script: one `read_file` call a turn,
each answered with a ~9 kB file, about 2.2k tokens, by agentctl's workspace `read_file` in
both agentctl and the SDK's runner) and served by `agentctl emulator serve`
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
  them), its prompt at the end, peak RSS and per-turn CPU of its first and last 100 turns,
  the client's and the emulator's (CPU of its process, read from /proc at each turn).
`--profile TURNS` runs one agentctl session under cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULT_BYTES = 9_000  # ~2.2k tokens of text per tool result
WORDS = ["shard", "replica", "queue", "worker", "batch", "lease", "token", "window"]


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

    def cpu(self) -> float:
        """CPU seconds (user + system) the emulator process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Session:
    label: str
    times: list[float] = field(default_factory=list)  # process CPU after each turn
    served: list[float] = field(default_factory=list)  # the emulator's CPU after each turn
    last_prompt: int = 0  # prompt tokens of the last turn

    def per_turn_ms(self, first: int, last: int) -> float:
        last = min(last, len(self.times) - 1)
        return (self.times[last] - self.times[first]) * 1000 / (last - first)


def run_agentctl(
    url: str,
    work: Path,
    turns: int,
    threads: bool,
    sets: dict[str, Any],
    counting: bool = False,
    server: Server | None = None,
) -> Session:
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
            session.last_prompt = event.usage.prompt_tokens
            if server is not None:
                session.served.append(server.cpu())

    client = counting_client(url) if counting else None
    agentctl.run("Read the files.", profile=profile, workspace=work, on_event=on_event,
                 record=False, client=client)  # fmt: skip
    return session


def run_sdk(url: str, work: Path, turns: int, threads: bool, stream: bool = False) -> Session:
    import anthropic
    from anthropic import beta_tool

    from agentctl.tools.workspace import WorkspaceTools

    files = WorkspaceTools(work, 20_000)  # the same tool, so the same work and results

    @beta_tool
    def read_file(path: str, limit: int = 2000) -> str:
        """Read a text file of the workspace."""
        return files.read_file({"path": path, "limit": limit})

    client = anthropic.Anthropic(base_url=url, api_key="sk-bench", max_retries=0)
    mode = f"thread={'default' if threads else 'False'}" + (", stream=True" if stream else "")
    session = Session(f"SDK tool_runner, {mode}")
    start = time.process_time()
    kwargs: dict[str, Any] = {} if threads else {"thread": False}
    if stream:
        kwargs["stream"] = True
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5", max_tokens=4096, tools=[read_file],
        messages=[{"role": "user", "content": "Read the files."}], max_iterations=turns + 5,
        **kwargs,
    )  # fmt: skip
    for item in runner:
        if stream:  # a streamed turn: read it to the end, as agentctl does
            for _event in item:
                pass
        session.times.append(time.process_time() - start)
    return session


def per_turn_rows(turns: int = 111, rounds: int = 3) -> list[tuple[str, float, float]]:
    """(label, median ms a turn, median ratio to the SDK's default runner in the same round)
    over `rounds` rounds of the five sessions: the load of a shared machine drifts between
    sessions a minute apart (one session each gave 0.95x and 1.69x for the same code), less
    within one round, so each ratio is taken within its round."""
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            runs: list[Callable[[], Session]] = [
                lambda: run_sdk(server.url, work, turns, True),
                lambda: run_sdk(server.url, work, turns, False),
                lambda: run_sdk(server.url, work, turns, True, stream=True),
                lambda: run_agentctl(server.url, work, turns, True, {}),
                lambda: run_agentctl(server.url, work, turns, False, {}),
            ]
            table = [[run() for run in runs] for _ in range(rounds)]
        finally:
            server.close()
    ms = [[s.per_turn_ms(10, 110) for s in row] for row in table]
    return [
        (
            table[0][i].label,
            statistics.median(row[i] for row in ms),
            statistics.median(row[i] / row[0] for row in ms),
        )
        for i in range(len(runs))
    ]


def child_session(
    turns: int, threads: bool, sets: dict[str, Any] | None = None
) -> dict[str, float]:
    """One agentctl session in a fresh process: CPU, peak RSS growth, bytes written."""
    args = json.dumps([turns, threads, sets or {}])
    code = f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import scale; " \
        f"print(json.dumps(scale.measured_session(*json.loads({args!r}))))"  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=False)  # fmt: skip
    if out.returncode:
        raise SystemExit(f"child session failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def rss_kb() -> int:
    """The resident set size of this process now (/proc/self/status VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


SENT = [0]  # request body bytes, counted by `counting_client`'s request hook


def counting_client(url: str) -> Any:
    """agentctl's SDK client, counting the body bytes of the requests it sends."""
    from agentctl.agent.client import AnthropicClient
    from agentctl.agent.retry import RetryPolicy

    class Counting(AnthropicClient):
        def _stamp(self, request: Any) -> None:
            SENT[0] += int(request.headers.get("content-length") or 0)
            super()._stamp(request)

    return Counting(api_key="sk-bench", base_url=url, timeout_s=600, retry=RetryPolicy())


def measured_session(turns: int, threads: bool, sets: dict[str, Any]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            import anthropic  # noqa: F401  (imported before the baseline RSS)

            import agentctl  # noqa: F401

            base = rss_kb()
            session = run_agentctl(server.url, work, turns, threads, sets, True, server)
            rss = max(rss_kb() - base, 1)
            wrote = SENT[0]
        finally:
            server.close()
    t, e = session.times, session.served
    window = min(100, len(t) - 1)
    return {
        "emulator_first_100_ms": (e[window] - e[0]) * 1000 / window,
        "emulator_last_100_ms": (e[-1] - e[-1 - window]) * 1000 / window,
        "cpu_s": t[-1] - t[0],
        "rss_kb": rss,
        "bytes": wrote,
        "turns": len(t),
        "first_100_ms": (t[min(100, len(t) - 1)] - t[0]) * 1000 / min(100, len(t) - 1),
        "last_100_ms": (t[-1] - t[max(0, len(t) - 101)]) * 1000 / min(100, len(t) - 1),
        "last_prompt": session.last_prompt,
    }


def exponent(xs: list[float], ys: list[float]) -> float:
    """k of y ~ x^k, least squares on the logs."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


def growth_rows(lengths: list[int], threads: bool) -> list[str]:
    runs = [child_session(n, threads) for n in lengths]
    mode = "threads" if threads else "whole history"
    xs = [float(n) for n in lengths]
    out = [
        f"  {mode}: {n} turns: CPU {r['cpu_s']:.2f} s, RSS +{r['rss_kb'] / 1024:.0f} MB, "
        f"sent {r['bytes'] / 1e6:.1f} MB"
        for n, r in zip(lengths, runs, strict=True)
    ]
    out.append(
        f"exponents ({mode}, {lengths[0]}-{lengths[-1]} turns): CPU "
        f"{exponent(xs, [r['cpu_s'] for r in runs]):.2f}, bytes sent "
        f"{exponent(xs, [r['bytes'] for r in runs]):.2f}, RSS growth "
        f"{exponent(xs, [max(r['rss_kb'], 1) for r in runs]):.2f}"
    )
    return out


LONG_SETS = {
    "context_editing.compaction.enabled": True,
    "context_editing.compaction.trigger": 100_000,
}


def long_rows(turns: int) -> list[str]:
    r = child_session(turns, True, LONG_SETS)
    return [
        f"long run ({turns} turns asked, threads, clearing + compaction at "
        f"{LONG_SETS['context_editing.compaction.trigger']:,} tokens): "
        f"{r['turns']:.0f} turns, prompt at the end {r['last_prompt']:.0f} tokens, "
        f"RSS +{r['rss_kb'] / 1024:.0f} MB, CPU per turn: first 100 {r['first_100_ms']:.2f} ms, "
        f"last 100 {r['last_100_ms']:.2f} ms (ratio {r['last_100_ms'] / r['first_100_ms']:.2f}); "
        f"emulator CPU per request: first 100 {r['emulator_first_100_ms']:.2f} ms, last 100 "
        f"{r['emulator_last_100_ms']:.2f} ms (ratio "
        f"{r['emulator_last_100_ms'] / max(r['emulator_first_100_ms'], 1e-9):.2f})"
    ]


def profile_session(turns: int, threads: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, script = write_workload(Path(tmp), turns)
        server = Server(script)
        try:
            prof = cProfile.Profile(time.process_time)
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
    parser.add_argument("--per-turn", action="store_true", help="only the per-turn CPU rows")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the per-turn sessions")
    args = parser.parse_args()
    if args.profile:
        profile_session(args.profile, threads=not args.full)
        return
    rows = per_turn_rows(rounds=args.rounds)
    sdk_full = rows[1][1]
    for label, ms, ratio in rows:
        print(f"per-turn CPU, turns 10-110, median of {args.rounds} rounds: {label}: {ms:.2f} ms "
              f"({ratio:.2f}x SDK default in its round, {ms / sdk_full:.2f}x SDK thread=False)",
              flush=True)  # fmt: skip
    if args.per_turn:
        return
    short = [50, 100, 200] if args.quick else [100, 300, 1000]
    for line in growth_rows(short, threads=True):
        print(line, flush=True)
    for line in growth_rows([50, 100, 200] if args.quick else [100, 200, 400], threads=False):
        print(line, flush=True)
    if args.long:
        for line in long_rows(args.long):
            print(line, flush=True)


def long_only(turns: int) -> None:
    for line in long_rows(turns):
        print(line, flush=True)


if __name__ == "__main__":
    main()
