"""Listings and stores at scale: `sessions list` on 10,000 sessions, `sessions show`/`export`
on long sessions, `memory log` on a large journal, the memory store's first write in a large
tree, and the startup of the light commands. Every figure comes from this one run.

Usage: python bench/scale_store.py [--sessions 10000] [--turns 8000] [--journal-mb 100]
                                   [--files 100000] [--runs 7] [--baseline /work/main]

Each command runs as its own process (the console script beside this interpreter), RUNS
times after a warm-up; its CPU time (user + system, which a busy machine does not inflate)
and peak RSS come from wait4(). `--baseline DIR` also runs show/export from another source
tree (PYTHONPATH=DIR, once each), and the startup commands in the same rounds as this tree's.
Sessions are copies of one real scripted run; the long sessions are written record by record
in the transcript format (a tool call and a ~2.2 kB result per turn); the journal holds
ordinary `create` outcome lines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup import agentctl

RESULT = "line of a tool result, as a file's text would be\n" * 45  # ~2.2 kB
Timed = tuple[float, float, float]  # wall s, CPU s, peak RSS MB


def run_once(cmd: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one run of `cmd`, its output thrown away."""
    wall, _, rss = run_timed(cmd, env)
    return wall, rss


def run_timed(cmd: Sequence[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(cmd: Sequence[str], env: dict[str, str], runs: int) -> tuple[float, float, float]:
    """(median wall s, median CPU s, peak RSS MB) over `runs` runs after one warm-up. CPU
    time (user + system) is what a busy machine does not inflate: the ratios use it."""
    run_timed(cmd, env)
    results = [run_timed(cmd, env) for _ in range(runs)]
    wall, cpu = (statistics.median(r[i] for r in results) for i in (0, 1))
    return wall, cpu, max(r[2] for r in results)


def environment(home: Path) -> dict[str, str]:
    """As a user runs it: bytecode caches written and used (an installed package has them)."""
    env = {**os.environ, "AGENTCTL_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# -- sessions ------------------------------------------------------------------------------


def real_transcript(home: Path) -> Path:
    """One scripted run of three tool turns, recorded by agentctl itself."""
    code = (
        "import agentctl\n"
        "from agentctl.testing import reply, tool_use\n"
        "calls = [reply(tool_use('memory', {'command': 'view', 'path': '/memories'},"
        " f'toolu_{i}'), stop='tool_use') for i in range(3)]\n"
        "agentctl.run('Summarise the kestrel outage.',"
        " client=agentctl.ScriptedClient(*calls, 'Done.'), memory_root='mem')\n"
    )
    subprocess.run([sys.executable, "-c", code], env=environment(home), cwd=home, check=True)
    return next((home / "sessions").glob("*.jsonl"))


def many_sessions(home: Path, count: int) -> Path:
    source = real_transcript(home)
    data = source.read_bytes()
    folder = source.parent
    for n in range(count - 1):
        (folder / f"20260101-{n // 1_000_000:06d}-{n % 1_000_000:06x}.jsonl").write_bytes(data)
    return source


def long_session(folder: Path, header: dict[str, Any], turns: int) -> str:
    """A transcript of `turns` tool turns and a final answer, written line by line."""
    name = f"20260102-000000-{turns:06x}"
    lines = [{**header, "session": name}, _message(0, {"role": "user", "content": "Go."})]
    for turn in range(1, turns + 1):
        lines += _turn(turn, last=turn == turns)
    lines.append(_record("event", event={"event": "result", "stop_reason": "end_turn"}))
    with (folder / f"{name}.jsonl").open("w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return name


def _record(kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "type": kind, "ts": 1.0, **fields}


def _message(index: int, message: dict[str, Any]) -> dict[str, Any]:
    return _record("message", index=index, message=message)


def _turn(turn: int, *, last: bool) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"toolu_{turn}", "name": "read_file", "input": {"path": "a"}}
    content = [{"type": "text", "text": "Done."}] if last else [call]
    usage = {"input_tokens": 100 + 550 * turn, "output_tokens": 40}
    stop = "end_turn" if last else "tool_use"
    response = {"role": "assistant", "content": content, "stop_reason": stop, "usage": usage}
    body = {"model": "claude-sonnet-5", "max_tokens": 8192}
    event = {"event": "turn", "turn": turn, "stop_reason": stop, "usage": usage}
    records = [
        _record("request", turn=turn, messages_count=2 * turn - 1, request=body),
        _record("response", turn=turn, request_id=f"req_{turn}", message=response),
        _message(2 * turn - 1, {"role": "assistant", "content": content}),
    ]
    if not last:
        result = {"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": RESULT}
        records += [
            _record("tool_result", turn=turn, tool_use_id=f"toolu_{turn}", name="read_file",
                    input={"path": "a"}, is_error=False, content=RESULT),
            _message(2 * turn, {"role": "user", "content": [result]}),
        ]  # fmt: skip
    records.append(_record("event", event=event))
    return records


LISTINGS = (
    ("--json from the index", ["--json"]),
    ("-n 20", ["-n", "20"]),
    (
        "--json -s kestrel --status end_turn -n 5",
        ["--json", "-s", "kestrel", "--status", "end_turn", "-n", "5"],
    ),
    ("the whole table, piped", []),
)


def list_figures(tmp: Path, count: int, runs: int) -> dict[str, Timed]:
    """`sessions list` on `count` sessions: the index build ("build"), the listing after one
    transcript changed ("stale"), then each of LISTINGS from the index (median of `runs`)."""
    home = tmp / "list"
    home.mkdir()
    many_sessions(home, count)
    env, app = environment(home), agentctl()
    listing = [*app, "sessions", "list", "--json"]
    figures = {"build": run_timed(listing, env)}  # no index yet: every transcript read once
    os.utime(next((home / "sessions").glob("*.jsonl")))
    figures["stale"] = run_timed(listing, env)
    for name, args in LISTINGS:
        figures[name] = measure([*app, "sessions", "list", *args], env, runs)
    return figures


def bench_list(tmp: Path, count: int, runs: int) -> list[str]:
    figures = list_figures(tmp, count, runs)
    rows = [
        f"sessions list, {count:,} sessions: CPU s (wall s), peak RSS",
        _row("building the index (reads every file)", figures["build"]),
        _row("--json, one transcript changed", figures["stale"]),
    ]
    rows += [_row(name, figures[name]) for name, _ in LISTINGS]
    build, warm = figures["build"][1], figures[LISTINGS[0][0]][1]
    rows.append(f"  index build / --json from the index (CPU)  x{build / warm:.1f}")
    return rows


def _row(name: str, figures: Timed) -> str:
    wall, cpu, rss = figures
    return f"  {name:<42} {cpu:7.3f} ({wall:7.3f})  {rss:5.0f} MB"


def bench_show(tmp: Path, turns: int, runs: int, baseline: str) -> list[str]:
    home = tmp / "show"
    home.mkdir()
    header = json.loads(real_transcript(home).read_text().splitlines()[0])
    folder, env, app = home / "sessions", environment(home), agentctl()
    rows = [f"sessions show / export (a {len(RESULT):,} B result a turn): CPU s (wall s), RSS"]
    figures = {}
    trees = [("", env)] + ([(baseline, {**env, "PYTHONPATH": baseline})] if baseline else [])
    for n in (turns // 4, turns):
        name = long_session(folder, header, n)
        size = (folder / f"{name}.jsonl").stat().st_size / 1e6
        for tree, tree_env in trees:
            for what in ("show", "export"):
                cmd = [*app, "sessions", what, name]
                got = measure(cmd, tree_env, max(1, runs // 3) if not tree else 1)
                figures[tree, what, n] = got
                label = f"{what} {n:,} turns ({size:.0f} MB){' ' + tree if tree else ''}"
                rows.append(_row(label, got))
    for tree, _ in trees:
        for what in ("show", "export"):
            (_, c1, r1), (_, c2, r2) = figures[tree, what, turns // 4], figures[tree, what, turns]
            rows.append(
                f"  {what}{' ' + tree if tree else ''}: 4x the turns -> CPU x{c2 / c1:.2f}, "
                f"peak RSS x{r2 / r1:.2f}"
            )
    if baseline:
        for what in ("show", "export"):
            (_, c, r), (_, bc, br) = figures["", what, turns], figures[baseline, what, turns]
            rows.append(
                f"  {what} at {turns:,} turns vs {baseline}: CPU x{c / bc:.3f}, RSS x{r / br:.2f}"
            )
    return rows


# -- memory --------------------------------------------------------------------------------


def journal(root: Path, megabytes: int) -> None:
    root.mkdir(parents=True)
    line = {"time": "2026-12-01T10:00:00.000Z", "command": "create", "path": "/memories/a.md"}
    with (root / ".agentctl-journal.jsonl").open("w") as f:
        n = 0
        while f.tell() < megabytes * 1_000_000:
            entry = {**line, "bytes": n, "session": f"s{n // 100}", "v": 1}
            f.write(json.dumps(entry, separators=(",", ":")) + "\n")
            n += 1


def log_figures(tmp: Path, megabytes: int, runs: int) -> tuple[dict[int, Timed], float]:
    """`memory log -n 20` on a 1 MB and a `megabytes` MB journal, in `runs` rounds of one run
    each (after a warm-up): each one's medians, and the median of the rounds' CPU ratios of
    the large one to the small one (taken within a round, as the machine's load drifts)."""
    env, app = environment(tmp / "home"), agentctl()
    cmds = {}
    for size in (1, megabytes):
        journal(tmp / f"journal{size}", size)
        cmds[size] = [*app, "memory", "log", "-n", "20", "--root", str(tmp / f"journal{size}")]
    for cmd in cmds.values():
        run_timed(cmd, env)
    rounds = [{size: run_timed(cmd, env) for size, cmd in cmds.items()} for _ in range(runs)]
    figures = {
        size: (statistics.median(r[size][0] for r in rounds),
               statistics.median(r[size][1] for r in rounds), max(r[size][2] for r in rounds))
        for size in cmds
    }  # fmt: skip
    return figures, statistics.median(r[megabytes][1] / r[1][1] for r in rounds)


def bench_log(tmp: Path, megabytes: int, runs: int) -> list[str]:
    figures, ratio = log_figures(tmp, megabytes, runs)
    rows = ["memory log -n 20: CPU s (wall s), peak RSS"]
    rows += [_row(f"{size} MB journal", got) for size, got in figures.items()]
    return [*rows, f"  {megabytes} MB / 1 MB journal (CPU, median of the rounds)  x{ratio:.2f}"]


FIRST_WRITE = """\
import sys, time
from pathlib import Path
root, name = sys.argv[1], sys.argv[2]
if sys.argv[3] == "sdk":
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
    tool = BetaLocalFilesystemMemoryTool(str(Path(root).parent))
    def write(path): tool.call({"command": "create", "path": path, "file_text": "x"})
else:
    from agentctl.memory.store import MemoryStore
    from agentctl.profile.settings import MemorySettings
    settings = MemorySettings(max_files=10**7)  # the default limit is below the tree
    store = MemoryStore(root, settings, session="b")
    def write(path): store.execute({"command": "create", "path": path, "file_text": "x"})
times = []
for suffix in ("", "b"):
    t = time.perf_counter()
    write("/memories/new" + name + suffix + ".md")
    times.append(time.perf_counter() - t)
print(*times)
"""


def first_write_figures(tmp: Path, files: int, runs: int) -> dict[str, float]:
    """The first and second `create` of a fresh process in a tree of `files` files: the first
    process on the tree ("walked": no saved tally, it walks), later processes ("saved": the
    tally saved by the one before; "second": their second create), one after a file was added
    by hand ("hand": walks again), and the SDK's memory tool on a copy of the tree ("sdk").
    Wall ms, in process; medians of `runs` processes."""
    root = tmp / "tree" / "memories"
    for n in range(files):
        folder = root / f"d{n // 1000}"
        if n % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{n}.md").write_text("x")
    sdk_root = tmp / "sdk" / "memories"
    shutil.copytree(root, sdk_root)
    counter = iter(range(10**6))

    def first(which: str, where: Path) -> tuple[float, float]:
        cmd = [sys.executable, "-c", FIRST_WRITE, str(where), str(next(counter)), which]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"first write: {out.stderr.strip().splitlines()[-1:]}")
        a, b = map(float, out.stdout.split())
        return a * 1000, b * 1000

    walked = first("ours", root)
    saved = [first("ours", root) for _ in range(runs)]
    by_hand = []
    for n in range(runs):
        (root / f"d{n}" / f"hand{n}.md").write_text("by hand\n")
        by_hand.append(first("ours", root))
    sdk = [first("sdk", sdk_root) for _ in range(runs)]
    figures = {k: statistics.median(r[0] for r in v)
               for k, v in (("saved", saved), ("hand", by_hand), ("sdk", sdk))}  # fmt: skip
    return {**figures, "walked": walked[0], "second": statistics.median(r[1] for r in saved)}


def bench_first_write(tmp: Path, files: int, runs: int) -> list[str]:
    med = first_write_figures(tmp, files, runs)
    return [
        f"memory store, {files:,} files: first create in a process, wall ms",
        f"  first process on the tree (no saved tally: walks)   {med['walked']:8.1f}",
        f"  later processes (the saved tally)                    {med['saved']:8.1f}"
        f"  (second create {med['second']:.1f})",
        f"  after a file was added by hand (walks again)         {med['hand']:8.1f}",
        f"  the SDK's memory tool                                {med['sdk']:8.1f}",
        f"  saved tally / SDK  x{med['saved'] / med['sdk']:.2f};  walk / saved tally"
        f"  x{med['walked'] / med['saved']:.0f}",
    ]


# -- startup -------------------------------------------------------------------------------


STARTUP = (
    ("--help", ["--help"]),
    ("memory view", ["memory", "view", "--root", "{home}/memory"]),
    ("sessions list", ["sessions", "list"]),  # 20 sessions, the index built
    ("profile show", ["profile", "show"]),
    ("doctor --offline", ["doctor", "--offline"]),
)


@dataclass(frozen=True)
class Startup:
    """One light command's medians over the rounds: CPU s, wall s, and its CPU ratio to the
    baseline of the same round."""

    name: str
    cpu: float
    wall: float
    ratio: float
    before: float | None = None  # with a baseline tree: its ratio, from the same rounds


def startup_figures(tmp: Path, runs: int, baseline: str = "") -> tuple[float, list[Startup]]:
    """Each light command's CPU time against `python -c "import typer, rich"`, in rounds: a
    round runs the baseline and then every command once, and a command's ratio is the median
    of its ratios to the baseline of the same round (the machine's speed drifts between
    rounds; within one it is about the same for all). Returns the baseline's median CPU s.

    `baseline`: a source tree (e.g. a main worktree) whose commands run in the same rounds,
    right after this tree's, with PYTHONPATH set to it (and this tree's to this one)."""
    home = tmp / "startup"
    (home / "memory").mkdir(parents=True)
    many_sessions(home, 20)
    env, app, py = environment(home), agentctl(), sys.executable
    trees = [env]
    if baseline:
        here = str(Path(__file__).resolve().parent.parent)
        trees = [{**env, "PYTHONPATH": here}, {**env, "PYTHONPATH": baseline}]
    cmds = [([py, "-c", "import typer, rich"], env)]
    for _, args in STARTUP:
        cmds += [([*app, *(a.format(home=home) for a in args)], tree) for tree in trees]
    for cmd, cmd_env in cmds:  # warm-up: bytecode caches written, the sessions index built
        run_timed(cmd, cmd_env)
    rounds = [[run_timed(cmd, cmd_env) for cmd, cmd_env in cmds] for _ in range(runs)]
    base = statistics.median(r[0][1] for r in rounds)

    def ratio(i: int) -> float:
        return statistics.median(r[i][1] / r[0][1] for r in rounds)

    n = len(trees)
    return base, [
        Startup(name, statistics.median(r[1 + n * k][1] for r in rounds),
                statistics.median(r[1 + n * k][0] for r in rounds),
                ratio(1 + n * k), ratio(2 + n * k) if baseline else None)
        for k, (name, _) in enumerate(STARTUP)
    ]  # fmt: skip


def bench_startup(tmp: Path, runs: int, baseline: str = "") -> list[str]:
    base, figures = startup_figures(tmp, runs, baseline)
    rows = [
        f"startup, {runs} rounds, median CPU ms (wall ms) and the median CPU ratio to "
        f'`python -c "import typer, rich"` ({base * 1000:.0f} ms CPU) in the same round'
        + (f" (and {baseline}'s, in the same rounds):" if baseline else ":")
    ]
    for f in figures:
        row = f"  {f.name:<18} {f.cpu * 1000:6.0f} ({f.wall * 1000:4.0f})  x{f.ratio:.2f}"
        rows.append(row + (f"  (baseline x{f.before:.2f})" if f.before is not None else ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=8_000)
    parser.add_argument("--journal-mb", type=int, default=100)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", default="list,show,log,store,startup")
    parser.add_argument(
        "--baseline",
        default="",
        metavar="DIR",
        help="also run show/export and the startup commands from this source tree "
        "(PYTHONPATH), e.g. a main checkout",
    )
    args = parser.parse_args()
    parts = args.only.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-scale-"))
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
        if "startup" in parts:
            print("\n".join(bench_startup(tmp, args.runs * 2, args.baseline)))
        if "list" in parts:
            print("\n".join(bench_list(tmp, args.sessions, args.runs)))
        if "show" in parts:
            print("\n".join(bench_show(tmp, args.turns, args.runs, args.baseline)))
        if "log" in parts:
            print("\n".join(bench_log(tmp, args.journal_mb, args.runs)))
        if "store" in parts:
            print("\n".join(bench_first_write(tmp, args.files, args.runs)))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
