"""The memory store against the SDK's BetaLocalFilesystemMemoryTool on the same work.

Usage: python bench/memory_store.py [-n RUNS]

Three workloads, each run on a fresh root for each store: `view` of a root holding 10,000 files
(100 folders x 100, written straight to disk), `str_replace` in a 1 MB file, and 1,000
`create`s. Times are the median of RUNS; memory is the tracemalloc peak of one more run
(Python allocations, not RSS). Both stores fsync what they write; ours also takes the root's
lock, appends to its journal and checks the size limits (max_files, max_total_bytes) against
totals it keeps between writes: "ours, no limits" shows the store with those two set to 0.
agentctl's view limit (memory.max_view_chars) is raised so both list all 10,000 files.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

M = "/memories"
Run = Callable[[dict[str, Any]], object]


@dataclass(frozen=True)
class Measure:
    """One workload on one store: median ms and tracemalloc peak in KiB."""

    ms: float
    peak_kib: float


@dataclass(frozen=True)
class Row:
    workload: str
    ours: Measure
    sdk: Measure
    unlimited: Measure

    @property
    def ratio(self) -> float:
        """Our time over the SDK's: below 1 means faster."""
        return self.ours.ms / self.sdk.ms


WIDE = 10**9  # no practical view limit


def ours(base: Path) -> tuple[Run, Path]:
    settings = MemorySettings(max_view_chars=WIDE)
    store = MemoryStore(base / "ours", settings, session="bench")
    return store.execute, store.root


def ours_unlimited(base: Path) -> tuple[Run, Path]:
    settings = MemorySettings(max_view_chars=WIDE, max_files=0, max_total_bytes=0)
    store = MemoryStore(base / "ours", settings, session="bench")
    return store.execute, store.root


def sdk(base: Path) -> tuple[Run, Path]:
    tool = BetaLocalFilesystemMemoryTool(str(base / "sdk"))
    (base / "sdk" / "memories").mkdir(parents=True, exist_ok=True)
    return tool.call, base / "sdk" / "memories"


def fill_10k(root: Path, run: Run) -> None:
    for d in range(100):
        folder = root / f"d{d:02}"
        folder.mkdir()
        for f in range(100):
            (folder / f"f{f:02}.md").write_text("x\n")


BIG = "".join(
    f"line {i:06d} of a one-megabyte memory file, padded to length\n" for i in range(16_600)
)


def setup_big(root: Path, run: Run) -> None:
    run({"command": "create", "path": f"{M}/big.md", "file_text": BIG})


def view_root(run: Run, i: int) -> None:
    out = run({"command": "view", "path": M})
    assert str(out).count("\n") >= 10_000


def replace_middle(run: Run, i: int) -> None:
    old, new = ("line 008500", "LINE 008500") if i % 2 == 0 else ("LINE 008500", "line 008500")
    run({"command": "str_replace", "path": f"{M}/big.md", "old_str": old, "new_str": new})


def create_1000(run: Run, i: int) -> None:
    for n in range(1000):
        run({"command": "create", "path": f"{M}/r{i}/n{n:04}.md", "file_text": f"note {n}\n"})


Setup = Callable[[Path, Run], None]
Make = Callable[[Path], tuple[Run, Path]]
WORKLOADS: list[tuple[str, Setup | None, Callable[[Run, int], None]]] = [
    ("view, 10,000 files", fill_10k, view_root),
    ("str_replace in a 1 MB file", setup_big, replace_middle),
    ("1,000 creates", None, create_1000),
]


def measure(
    make: Make, setup: Setup | None, work: Callable[[Run, int], None], runs: int
) -> Measure:
    """Median ms of `runs` timed runs after a warm-up, then the tracemalloc peak of one more.

    Creates get a fresh root for every run (the tree would grow otherwise); the other
    workloads reuse one (str_replace toggles the same line back and forth).
    """
    times, peak = [], 0
    each = work is create_1000
    with fresh(make, setup) as shared:
        for i in range(runs + 2):
            with fresh(make, setup) if each else nullcontext(shared) as run:
                if i == runs + 1:
                    tracemalloc.start()
                    work(run, i)
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    continue
                start = time.perf_counter()
                work(run, i)
                if i:  # run 0 warms up
                    times.append((time.perf_counter() - start) * 1000)
    return Measure(statistics.median(times), peak / 1024)


@contextmanager
def fresh(make: Make, setup: Setup | None) -> Iterator[Run]:
    """A new root for one store, set up for the workload; removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="agentctl-bench-mem-"))
    try:
        run, root = make(base)
        if setup:
            setup(root, run)
        yield run
    finally:
        shutil.rmtree(base)


def bench(runs: int = 5) -> list[Row]:
    return [
        Row(
            name,
            measure(ours, setup, work, runs),
            measure(sdk, setup, work, runs),
            measure(ours_unlimited, setup, work, runs),
        )
        for name, setup, work in WORKLOADS
    ]


HEAD = (
    f"{'workload':<27} {'ours ms':>8} {'SDK ms':>8} {'ratio':>6} {'no-limits ms':>12} "
    f"{'ours KiB':>9} {'SDK KiB':>8}"
)


def render(rows: list[Row]) -> list[str]:
    out = [HEAD]
    for r in rows:
        out.append(
            f"{r.workload:<27} {r.ours.ms:8.1f} {r.sdk.ms:8.1f} {r.ratio:6.2f} "
            f"{r.unlimited.ms:12.1f} {r.ours.peak_kib:9.0f} {r.sdk.peak_kib:8.0f}"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5)
    args = parser.parse_args()
    print("\n".join(render(bench(args.runs))))


if __name__ == "__main__":
    main()
