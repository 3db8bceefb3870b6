"""Scale: every figure of issue 26 (long runs that scale) measured in one run, one table.

Usage: python bench/scale.py [--quick | --tiny] [--only PARTS] [--per-turn] [--long N]
                             [--rounds N] [--json | --markdown] [--profile TURNS [--full]]

No flags: every part, in this process and its children, one after another; each row of the
table is the issue's target, the figure measured (a ratio or an exponent) and whether it is
met, with the date, commit and load average under it. The parts (`--only loop,growth,...`):
- loop: per-turn client CPU over turns 10-110 of agentctl (`agentctl.run`, default profile,
  no transcript) and of the SDK's `client.beta.messages.tool_runner` on the same script, with
  message threads (api.threads = true; the SDK's default) and without (the whole history each
  turn; the SDK's `thread=False`); ratios within each round, median of the rounds.
- growth: the exponent k of total client CPU, bytes sent and peak RSS growth ~ turns^k over
  sessions of 100, 300 and 1,000 turns (threads; each session in a fresh process).
- long: one 5,000-turn session under the built-in profile (clearing + compaction), threads:
  completed, its prompt at the end, RSS growth, and per-turn CPU of its last 100 turns over
  its first 100, the client's and the emulator's (its process's CPU-time clock, read after
  each turn: nanoseconds, all its threads; `Server.cpu`).
- limits: a request over the size limit is never sent, and a 413 names the remedy.
- replay: exponents of `stats`, `simulate` and `tune` CPU in turns (bench/scale_replay.py,
  100 / 300 / 1,000 turns) and `tune`'s seconds on 1,000 turns.
- store: `sessions list --json` on 10,000 sessions, `memory log -n 20` on a 100 MB journal,
  the memory store's first create in a 100,000-file tree (bench/scale_store.py).
- startup: the light commands' CPU over `python -c "import typer, rich"` (bench/scale_store.py).
- tokens: the files and web workloads, the built-in default and the best settings docs/bench.md
  names, against no editing (bench/token_economy.py --try).

Every session of loop, growth and long is scripted (the emulator's `[[turn]]` script: one
`read_file` call a turn, each answered with a ~9 kB file, about 2.2k tokens, by agentctl's
workspace `read_file` in both agentctl and the SDK's runner) and served by `agentctl emulator
serve` in its own process, so the CPU measured is the client's alone (`time.process_time`).
`--quick` runs smaller sizes (a smoke test of minutes); `--tiny` the test's (figures mean
nothing). `--profile TURNS` runs one agentctl session under cProfile and prints the top
functions (`--full`: without threads).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import scale_replay  # noqa: E402
import scale_store  # noqa: E402
import token_economy  # noqa: E402

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
        """CPU seconds the emulator process has used so far, all its threads (those ended
        too): its CPU-time clock, in nanoseconds (Linux's clock id for another process's
        CPU clock, what `clock_getcpuclockid(3)` returns); /proc in 10 ms ticks elsewhere."""
        try:
            return time.clock_gettime((~self.proc.pid << 3) | 2)
        except OSError:
            return self.ticks()

    def ticks(self) -> float:
        """The same from /proc/PID/stat: user + system time in clock ticks (10 ms)."""
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


def per_turn_table(turns: int = 111, rounds: int = 3) -> list[list[Session]]:
    """`rounds` rounds of five sessions of `turns` turns each on one server, in the order of
    PER_TURN: the load of a shared machine drifts between sessions a minute apart (one
    session each gave 0.95x and 1.69x for the same code), less within one round, so a ratio
    is taken within its round."""
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
            return [[run() for run in runs] for _ in range(rounds)]
        finally:
            server.close()


PER_TURN = ("sdk", "sdk-full", "sdk-stream", "threads", "full")  # per_turn_table's columns


def child_session(
    turns: int, threads: bool, sets: dict[str, Any] | None = None
) -> dict[str, float]:
    """One agentctl session in a fresh process: CPU, peak RSS growth, bytes written."""
    return in_child("scale", "measured_session", turns, threads, sets or {})  # type: ignore[no-any-return]


def in_child(module: str, function: str, *args: Any) -> Any:
    """`module.function(*args)` of bench/ in a fresh process, JSON in and out: its CPU and
    RSS are its own, and the processes it starts do not count this one's size (a process's
    peak RSS includes the memory of the one it was forked from, up to its exec)."""
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import {module}; "
            f"print(json.dumps({module}.{function}(*json.loads(sys.argv[1]))))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code, json.dumps(args)], capture_output=True,
                         text=True, cwd=REPO, check=False)  # fmt: skip
    if out.returncode:
        raise SystemExit(f"{module}.{function}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def rss_kb() -> int:
    """The resident set size of this process now (/proc/self/status VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


SENT = [0]  # request body bytes, counted by `counting_client`'s request hook
KEPT: list[Any] = []  # ... and the file the requests are written to (JSON lines), if any


def counting_client(url: str) -> Any:
    """agentctl's SDK client, counting the body bytes of the requests it sends."""
    from agentctl.agent.client import AnthropicClient
    from agentctl.agent.retry import RetryPolicy

    class Counting(AnthropicClient):
        def _stamp(self, request: Any) -> None:
            SENT[0] += int(request.headers.get("content-length") or 0)
            for out in KEPT:  # to disk, so that the client's RSS does not count them
                names = ("anthropic-version", "anthropic-beta", "content-type")
                kept = {k: request.headers[k] for k in names if k in request.headers}
                kept["x-api-key"] = "sk-bench"
                path, body = request.url.raw_path.decode(), request.content.decode()
                out.write(json.dumps([path, kept, body]) + "\n")
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
            with (Path(tmp) / "sent.jsonl").open("w") as out:
                KEPT[:] = [out]
                session = run_agentctl(server.url, work, turns, threads, sets, True, server)
                KEPT.clear()
            rss = max(rss_kb() - base, 1)
            wrote = SENT[0]
        finally:
            server.close()
        lines = (Path(tmp) / "sent.jsonl").read_text().splitlines()
        sent = [(p, h, b.encode()) for p, h, b in map(json.loads, lines)]
        first, last = replayed_windows(script, sent, min(100, len(sent) // 2))
    t, e = session.times, session.served
    window = min(100, len(t) - 1)
    return {
        "emulator_session_first_100_ms": (e[window] - e[0]) * 1000 / window,
        "emulator_session_last_100_ms": (e[-1] - e[-1 - window]) * 1000 / window,
        "emulator_first_100_ms": statistics.mean(first) * 1000,
        "emulator_last_100_ms": statistics.mean(last) * 1000,
        "emulator_first_100_median_ms": statistics.median(first) * 1000,
        "emulator_last_100_median_ms": statistics.median(last) * 1000,
        "cpu_s": t[-1] - t[0],
        "rss_kb": rss,
        "bytes": wrote,
        "turns": len(t),
        "first_100_ms": (t[min(100, len(t) - 1)] - t[0]) * 1000 / min(100, len(t) - 1),
        "last_100_ms": (t[-1] - t[max(0, len(t) - 101)]) * 1000 / min(100, len(t) - 1),
        "last_prompt": session.last_prompt,
    }


def replayed_windows(
    script: Path, sent: list[tuple[str, dict[str, str], bytes]], window: int
) -> tuple[list[float], list[float]]:
    """The emulator's CPU for each of the session's first `window` requests and its last
    `window`, the session's requests sent again to two fresh `emulator serve` processes:
    one brought to the last window's start first (unmeasured), then one request of each
    window in turn, so that the load of the box, which drifts over a run, weighs on both
    windows alike. Each request's CPU is its server's CPU-time clock before and after it."""
    early, late = Replay(script), Replay(script)
    try:
        for replay in (early, late):  # its first request builds its services: not a request's
            replay.send(("/v1/messages/count_tokens", sent[0][1], WARM_UP_BODY))
        for request in sent[: len(sent) - window]:
            late.send(request)
        first, last = [], []
        for k in range(window):
            first.append(early.send(sent[k]))
            last.append(late.send(sent[len(sent) - window + k]))
        return first, last
    finally:
        early.close()
        late.close()


WARM_UP_BODY = json.dumps(
    {"model": "claude-sonnet-5", "messages": [{"role": "user", "content": "hi"}]}
).encode()


class Replay(Server):
    """An emulator the requests of a recorded thread session are sent to again, in order:
    each continue names the id of the reply this emulator gave to the request before."""

    def __init__(self, script: Path) -> None:
        import http.client

        super().__init__(script)
        host, port = self.url.removeprefix("http://").split(":")
        self.http = http.client.HTTPConnection(host, int(port), timeout=600)
        self.last_id = ""

    def send(self, request: tuple[str, dict[str, str], bytes]) -> float:
        path, headers, body = request
        data = json.loads(body)
        thread = data.get("thread") if isinstance(data, dict) else None
        if isinstance(thread, dict) and "previous_message_id" in thread:
            thread["previous_message_id"] = self.last_id
            body = json.dumps(data).encode()
        before = self.cpu()
        self.http.request("POST", path, body, {**headers, "content-length": str(len(body))})
        response = self.http.getresponse()
        answer = response.read()
        spent = self.cpu() - before
        if response.status != 200:
            raise SystemExit(f"replay: {path}: {response.status} {answer[:300]!r}")
        found = re.search(rb'"id": ?"(msg_[^"]+)"', answer)
        if found is not None and path.split("?")[0].endswith("/messages"):
            self.last_id = found.group(1).decode()
        return spent

    def close(self) -> None:
        self.http.close()
        super().close()


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


# -- one run: every figure of issue 26 ------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """How large each part of the one run is."""

    per_turn: int = 111  # turns of each per-turn session (measured from turn 10 to the last)
    rounds: int = 3
    growth: tuple[int, ...] = (100, 300, 1000)
    long: int = 5000
    replay: tuple[int, ...] = (100, 300, 1000)
    sessions: int = 10_000
    files: int = 100_000  # the memory store's tree
    journal_mb: int = 100
    store_runs: int = 5
    startup_rounds: int = 10
    economy_files: int = 48
    economy_pages: int = 98


FULL = Sizes()
QUICK = Sizes(41, 1, (30, 60, 120), 300, (20, 40, 80), 1_000, 5_000, 5, 2, 3, 6, 6)
TINY = Sizes(16, 1, (10, 20, 40), 60, (8, 16), 30, 300, 2, 1, 1, 2, 2)  # the test's: seconds


@dataclass(frozen=True)
class Figure:
    """One row of the table: what is measured, the issue's target, the figure, met or not
    (None: a row shown for reference, with no target of its own)."""

    part: str
    name: str
    target: str
    measured: str
    met: bool | None
    value: float
    note: str = ""


def at_most(part: str, name: str, value: float, limit: float, note: str = "") -> Figure:
    """A ratio (x) with its upper bound."""
    return Figure(part, name, f"<= {limit:g}x", f"{value:.2f}x", value <= limit, value, note)


def slope(part: str, name: str, points: list[tuple[int, float]], limit: float = 1.2) -> Figure:
    """The exponent k of y ~ turns^k over `points`, at most `limit` (1.2: linear)."""
    k = scale_replay.exponent(points) or 0.0
    shown = ", ".join(f"{n:,}: {y:,.2f}" for n, y in points)
    return Figure(part, name, f"k <= {limit:g}", f"k = {k:.2f}", k <= limit, k, shown)


def loop_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """Per-turn client CPU against the SDK's tool_runner in both modes."""
    table = per_turn_table(sizes.per_turn, sizes.rounds)
    last = sizes.per_turn - 1
    ms = [dict(zip(PER_TURN, (s.per_turn_ms(10, last) for s in row), strict=True)) for row in table]

    def ratio(ours: str, theirs: str) -> float:
        return statistics.median(r[ours] / r[theirs] for r in ms)

    def med(which: str) -> float:
        return statistics.median(r[which] for r in ms)

    where = f"turns 10-{last}, median of {sizes.rounds} round(s)"
    return [
        at_most("loop", "per-turn client CPU, api.threads = true / SDK tool_runner (its "
                "default: threads)", ratio("threads", "sdk"), 1.5,
                f"{med('threads'):.2f} vs {med('sdk'):.2f} ms; against the SDK streaming "
                f"({med('sdk-stream'):.2f} ms) {ratio('threads', 'sdk-stream'):.2f}x; {where}"),
        at_most("loop", "per-turn client CPU, whole history / SDK tool_runner thread=False",
                ratio("full", "sdk-full"), 1.5,
                f"{med('full'):.2f} vs {med('sdk-full'):.2f} ms; {where}"),
    ]  # fmt: skip


def growth_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """Exponents of a session's CPU, bytes sent and RSS growth in its turns (threads)."""
    runs = [(n, child_session(n, True)) for n in sizes.growth]
    seen["rss_kb"], seen["rss_turns"] = runs[-1][1]["rss_kb"], runs[-1][0]
    span = f"{sizes.growth[0]:,}-{sizes.growth[-1]:,} turns, threads"
    return [
        slope("growth", f"total client CPU (s) ~ turns^k, {span}",
              [(n, r["cpu_s"]) for n, r in runs]),
        slope("growth", f"bytes sent (MB) ~ turns^k, {span}",
              [(n, r["bytes"] / 1e6) for n, r in runs]),
        slope("growth", f"client RSS growth (MB) ~ turns^k, {span}",
              [(n, r["rss_kb"] / 1024) for n, r in runs], 1.0),
    ]  # fmt: skip


def long_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """One long session under the built-in profile (clearing + compaction), threads."""
    n = sizes.long
    r = child_session(n, True)
    turns, prompt = int(r["turns"]), int(r["last_prompt"])
    client = r["last_100_ms"] / r["first_100_ms"]
    served = r["emulator_last_100_ms"] / max(r["emulator_first_100_ms"], 1e-9)
    name = f"{n:,}-turn session, built-in profile, threads"
    rows = [
        Figure("long", f"{name}: completed", f"{n + 1:,} turns", f"{turns:,} turns",
               turns >= n + 1, turns),
        Figure("long", f"{name}: prompt at the end", "bounded: < 200,000 tokens",
               f"{prompt:,} tokens", prompt < 200_000, prompt),
        at_most("long", f"{name}: client CPU a turn, last 100 / first 100", client, 1.5,
                f"{r['first_100_ms']:.2f} / {r['last_100_ms']:.2f} ms"),
        at_most("long", f"{name}: emulator CPU a request, last 100 / first 100", served, 1.5,
                f"{r['emulator_first_100_ms']:.2f} / {r['emulator_last_100_ms']:.2f} ms, "
                f"medians {r['emulator_first_100_median_ms']:.2f} / "
                f"{r['emulator_last_100_median_ms']:.2f} ms (replayed, in turn); in the "
                f"session {r['emulator_session_first_100_ms']:.2f} / "
                f"{r['emulator_session_last_100_ms']:.2f} ms"),
    ]  # fmt: skip
    if "rss_kb" in seen:
        grown = r["rss_kb"] / seen["rss_kb"]
        rows.append(at_most("long", f"{name}: RSS growth / at {seen['rss_turns']:,.0f} turns",
                            grown, 2.0, f"+{r['rss_kb'] / 1024:.0f} MB / "
                            f"+{seen['rss_kb'] / 1024:.0f} MB, {n / seen['rss_turns']:.0f}x "
                            "the turns"))  # fmt: skip
    return rows


def guard_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """A request over the size limit is never sent; a 413 names the remedy, not --resume. The
    limit is lowered (100,000 bytes, for the API's 32 MB) on a whole-history run without
    clearing (tests/agent/test_request_size.py holds the same)."""
    import agentctl
    from agentctl.agent.client import AnthropicClient
    from agentctl.agent.retry import RetryPolicy
    from agentctl.agent.wire import WireLimits
    from agentctl.emulator import Script, ScriptTurn, ToolCall, running
    from agentctl.errors import ApiError, RequestTooLargeError

    limit = 100_000
    call = (ToolCall("read_file", {"path": "f0.txt", "limit": 2000}),)
    script = Script(tuple(ScriptTurn(tool_calls=call) for _ in range(40)))
    caught: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="agentctl-scale-") as tmp:
        work, _ = write_workload(Path(tmp), 1, files=1)
        profile = Path(tmp) / "guard.toml"
        profile.write_text("max_turns = 50\n[context_editing.tool_uses]\nenabled = false\n")
        limits = {"client": (limit, 0), "server": (10 * limit, limit)}
        for kind, (client_limit, server_limit) in limits.items():
            with running(script=script) as emu:
                if server_limit:
                    emu.max_body_bytes = server_limit
                wire = WireLimits(max_request_bytes=client_limit)
                client = AnthropicClient(api_key="sk-bench", base_url=emu.base_url, timeout_s=60,
                                         retry=RetryPolicy(max_retries=0), wire=wire)  # fmt: skip
                try:
                    agentctl.run("Read the file.", profile=profile, workspace=work,
                                 client=client, record=False)  # fmt: skip
                except (RequestTooLargeError, ApiError) as error:
                    caught[kind] = str(error)
                sizes_sent = [r.size for r in emu.requests if r.path == "/v1/messages"]
            seen[f"guard_{kind}"] = max(sizes_sent)
    sent = seen["guard_client"] / limit
    remedy = "api.threads = true"
    return [
        Figure("limits", "a request over the size limit (lowered to 100,000 B) is never sent",
               "never sent; the error names the remedy", f"largest sent {sent:.2f}x the limit",
               sent <= 1 and remedy in caught.get("client", "")
               and "continue with" not in caught["client"], sent,
               "the run stops with exit 3 before sending it"),
        Figure("limits", "a 413 from the server (its limit lowered to 100,000 B)",
               "names the remedy, not a resume", "413: " + ("remedy named" if remedy in
               caught.get("server", "") else "no remedy"),
               remedy in caught.get("server", "") and "continue with" not in caught["server"],
               seen["guard_server"] / limit, "tests/agent/test_request_size.py checks both"),
    ]  # fmt: skip


def replay_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """stats, simulate and tune: time in turns, and tune's time on the longest session."""
    timings = scale_replay.measure(sizes.replay, sizes.replay)
    rows = [
        slope("replay", f"`{name}` CPU (s) ~ turns^k", [(t.turns, t.seconds) for t in timings
                                                      if t.command == name])
        for name in ("stats", "simulate", "tune")
    ]  # fmt: skip
    tune = [t for t in timings if t.command == "tune"][-1]
    per = scale_replay.summary(timings)["tune (per setting)"] or 0.0
    name = f"`tune` (default sweep) on {tune.turns:,} turns"
    note = f"{tune.candidates} settings; per setting k = {per:.2f}"
    seconds = f"{tune.seconds:.1f} s CPU"
    rows.append(Figure("replay", name, "seconds: < 60 s", seconds, tune.seconds < 60,
                       tune.seconds, note))  # fmt: skip
    return rows


def store_measurements(sessions: int, files: int, journal_mb: int, runs: int) -> dict[str, Any]:
    """bench/scale_store.py's listing, journal and first-write figures (run by `in_child`)."""
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-scale-"))
    try:
        listing = scale_store.list_figures(tmp, sessions, runs)
        log, log_ratio = scale_store.log_figures(tmp, journal_mb, runs)
        first = scale_store.first_write_figures(tmp, files, runs)
    finally:
        shutil.rmtree(tmp)
    return {"listing": listing, "log": [log[1], log[journal_mb]], "log_ratio": log_ratio,
            "first": first}  # fmt: skip


def store_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """`sessions list` on many sessions, `memory log` on a large journal, the memory store's
    first create in a large tree."""
    m = in_child("scale", "store_measurements", sizes.sessions, sizes.files, sizes.journal_mb,
                 sizes.store_runs)  # fmt: skip
    listing, first, (small, big) = m["listing"], m["first"], m["log"]
    wall, cpu, rss = listing[scale_store.LISTINGS[0][0]]
    saved = first["saved"] / first["walked"]
    return [
        Figure("listings", f"`sessions list --json`, {sizes.sessions:,} sessions", "< 0.5 s",
               f"{cpu:.3f} s CPU", cpu < 0.5, cpu, f"{wall:.3f} s wall, {rss:.0f} MB; the "
               f"index built in {listing['build'][1]:.2f} s CPU"),
        at_most("memory", f"`memory log -n 20`, {sizes.journal_mb} MB / 1 MB journal (CPU)",
                m["log_ratio"], 1.2, f"{big[1]:.3f} / {small[1]:.3f} s, {big[2]:.0f} MB"),
        at_most("memory", f"first create, {sizes.files:,} files: later process / the walking "
                "first one", saved, 0.1, f"{first['saved']:.1f} / {first['walked']:.1f} ms; "
                f"SDK {first['sdk']:.1f} ms ({first['saved'] / first['sdk']:.1f}x)"),
    ]  # fmt: skip


def startup_measurements(rounds: int) -> dict[str, Any]:
    """bench/scale_store.py's startup figures (run by `in_child`)."""
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-scale-"))
    try:
        base, figures = scale_store.startup_figures(tmp, rounds)
    finally:
        shutil.rmtree(tmp)
    return {"base": base, "figures": [asdict(f) for f in figures]}


def startup_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """Each light command's CPU against `python -c "import typer, rich"`, round by round."""
    m = in_child("scale", "startup_measurements", sizes.startup_rounds)
    return [
        at_most("startup", f"`agentctl {f['name']}` / `import typer, rich` (CPU)", f["ratio"],
                2.0, f"{f['cpu'] * 1000:.0f} vs {m['base'] * 1000:.0f} ms, "
                f"{sizes.startup_rounds} rounds")
        for f in m["figures"]
    ]  # fmt: skip


# The best settings docs/bench.md names ("Toward the targets"), run with token_economy --try.
def token_figures(sizes: Sizes, seen: dict[str, float]) -> list[Figure]:
    """The files and web workloads against no editing (default server model): the best
    settings found (token_economy.BEST) and, on files, the settings `tune --tokens-within`
    recommends on the built-in run, run live; the built-in profile is shown for reference
    (it keeps 4 results for a real model's sake: docs/bench.md, "Toward the targets")."""
    rows = []
    for workload, count in (("files", sizes.economy_files), ("web", sizes.economy_pages)):
        best = (token_economy.BEST[workload],)
        runs, _, tuned = token_economy.bench(count, workload, best, tune=workload == "files")
        plain = token_economy.baseline(runs, token_economy.SERVER_MODELS[0])
        fewer, cost_limit = token_economy.TARGETS[workload]
        for run in runs[:-1]:
            cut = 1 - run.total_input / plain.total_input
            cost = run.cost / plain.cost
            every = run.facts_found == run.facts_total
            role = run.variant.role
            label = {"default": "built-in", "tuned": "tune's pick"}.get(role, run.variant.label)
            note = (f"{run.total_input:,} vs {plain.total_input:,} tokens, ${run.cost:.2f} vs "
                    f"${plain.cost:.2f}")  # fmt: skip
            if role == "tuned" and tuned is not None:
                replayed = tuned["winner"]["prompt_tokens"]
                label += f" ({token_economy.settings_shown(run.variant)})"
                note += f"; the replay said {replayed:,} tokens ({tuned['candidates']} settings)"
            met = None if role == "default" else cut >= fewer and cost <= cost_limit and every
            rows.append(Figure(
                "tokens", f"{workload}, {label}, {run.turns} turns",
                "reference" if met is None else
                f">= {fewer:.0%} fewer, <= {cost_limit}x cost, every fact",
                f"{cut:.1%} fewer, {cost:.2f}x, {run.facts_found}/{run.facts_total}",
                met, cut, note,
            ))  # fmt: skip
    return rows


Part = Callable[[Sizes, dict[str, float]], list[Figure]]  # `seen`: figures a later part uses
PARTS: dict[str, Part] = {
    "loop": loop_figures,
    "growth": growth_figures,
    "long": long_figures,
    "limits": guard_figures,
    "replay": replay_figures,
    "store": store_figures,
    "startup": startup_figures,
    "tokens": token_figures,
}


@dataclass
class Report:
    sizes: Sizes
    figures: list[Figure] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each part
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta, "sizes": asdict(self.sizes), "seconds": self.seconds,
                "figures": [asdict(f) for f in self.figures]}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        sizes = Sizes(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in data["sizes"].items()})  # fmt: skip
        figures = [Figure(**f) for f in data["figures"]]
        return cls(sizes, figures, data["seconds"], data["meta"])


def run_all(
    sizes: Sizes,
    parts: list[str],
    log: Callable[[str], None] = print,
    table: dict[str, Part] = PARTS,
) -> Report:
    """Every part of `parts` (named in `table`) in turn, in this process and its children; a
    part that fails gives one row that says so, and the run goes on."""
    started, load = time.time(), os.getloadavg()[0]
    report, seen = Report(sizes), dict[str, float]()
    for part in parts:
        start = time.perf_counter()
        try:
            report.figures += table[part](sizes, seen)
        except (Exception, SystemExit) as error:
            text = " ".join(str(error).split())[-300:]
            report.figures.append(Figure(part, f"{part}: failed", "", f"failed: {text}", False, 0))
        report.seconds[part] = round(time.perf_counter() - start, 1)
        log(f"{part}: {report.seconds[part]:.0f} s")
    report.meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "python": sys.version.split()[0], "cores": os.cpu_count(),
        "load_average": [round(load, 2), round(os.getloadavg()[0], 2)],
        "wall_s": round(time.time() - started),
    }  # fmt: skip
    return report


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip() or "unknown"


def render(report: Report, markdown: bool = False) -> str:
    head = ("figure", "target", "measured", "met", "note")
    shown = {True: "yes", False: "NO", None: "-"}
    rows = [(f.name, f.target, f.measured, shown[f.met], f.note) for f in report.figures]
    targets = [f for f in report.figures if f.met is not None]
    m = report.meta
    foot = (f"{m['date']}, commit {m.get('commit', 'unknown')}, Python {m['python']}, "
            f"{m['cores']} cores, "
            f"load average {m['load_average'][0]} at the start and {m['load_average'][1]} at "
            f"the end, {m['wall_s']} s in all; "
            f"met {sum(bool(f.met) for f in targets)} of {len(targets)}")  # fmt: skip
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|---|---|---:|---|---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join([*lines, "", foot])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    return "\n".join([*(fmt.format(*r) for r in [head, *rows]), "", foot])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke test")
    parser.add_argument("--tiny", action="store_true", help="the test's sizes (seconds)")
    parser.add_argument("--only", default=",".join(PARTS), help=f"of {','.join(PARTS)}")
    parser.add_argument("--per-turn", action="store_true", help="only the per-turn CPU rows")
    parser.add_argument("--long", type=int, default=0, metavar="N", help="the long run's turns")
    parser.add_argument("--rounds", type=int, default=0, help="rounds of the per-turn sessions")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown")
    parser.add_argument("--from", dest="saved", metavar="FILE", help="render a --json report")
    parser.add_argument("--profile", type=int, default=0, metavar="TURNS")
    parser.add_argument("--full", action="store_true", help="--profile without threads")
    args = parser.parse_args()
    if args.profile:
        profile_session(args.profile, threads=not args.full)
        return
    if args.saved:
        print(render(Report.from_json(json.loads(Path(args.saved).read_text())), args.markdown))
        return
    sizes = TINY if args.tiny else QUICK if args.quick else FULL
    sizes = replace(sizes, long=args.long or sizes.long, rounds=args.rounds or sizes.rounds)
    parts = ["loop"] if args.per_turn else args.only.split(",")
    if unknown := set(parts) - set(PARTS):
        parser.error(f"--only: unknown part(s) {', '.join(sorted(unknown))}")
    parts = [part for part in PARTS if part in parts]  # growth before long: its RSS row
    commit = _commit()  # what is measured: the tree as the run starts
    report = run_all(sizes, parts, lambda line: print(line, file=sys.stderr, flush=True))
    report.meta["commit"] = commit
    print(json.dumps(report.to_json()) if args.json else render(report, args.markdown))


if __name__ == "__main__":
    main()
