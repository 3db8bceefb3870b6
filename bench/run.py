"""Run every agentctl benchmark and print one table (ratios are measured in this one run).

Usage: python bench/run.py [--quick] [--markdown]

Sections: startup of light commands (bench/startup.py) against `python -c pass` and
`python -c "import typer, rich"`; the memory store against the SDK's
BetaLocalFilesystemMemoryTool (bench/memory_store.py); the token economy of a ~100-turn
offline run, each profile against no-editing.toml under both server models
(bench/token_economy.py); the emulator's
scaling (bench/emulator.py, its summary line); the loop's time with OpenTelemetry spans recorded
against without (bench/tracing.py, in a child process: it sets the global tracer provider).
bench/tokens_calibration.py needs a tokenizer file that is not a dependency; run it by hand (see
its docstring).
`--quick` takes fewer samples; `--markdown` prints the table as Markdown (for docs/bench.md).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import memory_store  # noqa: E402
import startup  # noqa: E402
import token_economy  # noqa: E402

Row = tuple[str, str, str, str]  # benchmark, measured, compared with, ratio / note
MEMORY_VIEW_TARGET_MS = 150.0


def startup_rows(runs: int) -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-bench-"))
    try:
        root = tmp / "memory"
        (root / "notes").mkdir(parents=True)
        (root / "notes" / "todo.md").write_text("- measure startup\n")
        times = {name: startup.median_ms(cmd, runs) for name, cmd in startup.commands(root)}
    finally:
        shutil.rmtree(tmp)
    bare, light = times.pop("python -c pass"), times.pop('python -c "import typer, rich"')
    rows: list[Row] = [("startup: python -c pass", f"{bare:.0f} ms", "", ""),
                       ('startup: python -c "import typer, rich"', f"{light:.0f} ms",
                        "python -c pass", f"{light / bare:.2f}x")]  # fmt: skip
    for name, ms in times.items():
        note = f"{ms / bare:.2f}x pass, {ms / light:.2f}x typer+rich"
        if "memory view" in name:
            verdict = "met" if ms < MEMORY_VIEW_TARGET_MS else "MISSED"
            note += f"; target < {MEMORY_VIEW_TARGET_MS:.0f} ms {verdict}"
        rows.append((f"startup: {name.replace(' --root TMP', '')}", f"{ms:.0f} ms", "", note))
    return rows


def memory_rows(runs: int) -> list[Row]:
    rows: list[Row] = []
    for r in memory_store.bench(runs):
        note = (f"{r.ratio:.2f}x SDK time (no limits: {r.unlimited.ms:.1f} ms); "
                f"peak {r.ours.peak_kib:,.0f} KiB vs SDK {r.sdk.peak_kib:,.0f} KiB")  # fmt: skip
        rows.append(
            (f"memory: {r.workload}", f"{r.ours.ms:.1f} ms", f"SDK {r.sdk.ms:.1f} ms", note)
        )
    return rows


def token_rows() -> list[Row]:
    runs = token_economy.bench()[0]
    rows: list[Row] = []
    for run in runs:
        if run.variant.role == "no-editing":
            continue
        plain = token_economy.baseline(runs, run.server_model)
        cut = 1 - run.total_input / plain.total_input
        cost = run.cost / plain.cost if plain.cost else float("nan")
        rows.append((
            f"tokens: {run.variant.label}, {run.server_model} model, {run.turns} turns",
            f"{run.total_input:,} / ${run.cost:.2f}",
            f"{plain.total_input:,} / ${plain.cost:.2f}",
            f"{cut:.1%} fewer tokens, {cost:.2f}x cost, cache hits {run.hit_ratio:.0%}, "
            f"facts {run.facts_found}/{run.facts_total}",
        ))  # fmt: skip
    return rows


def emulator_rows() -> list[Row]:
    done = subprocess.run([sys.executable, str(HERE / "emulator.py")], capture_output=True,
                          text=True, check=False)  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith(("session:", "time "))]
    return [("emulator: 100-turn session (bench/emulator.py)", "", "", line) for line in lines]


def tracing_rows(reps: int) -> list[Row]:
    done = subprocess.run([sys.executable, str(HERE / "tracing.py"), "--reps", str(reps)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    rows: list[Row] = []
    for line in done.stdout.splitlines():
        name, turns, off, on, ratio = (line.split() + [""] * 5)[:5]
        if name in ("scripted", "emulator"):
            what = f"tracing: {name} run, {turns} turns, spans recorded"
            rows.append((what, f"{on} ms", f"without {off} ms", ratio))
    return rows


def render(rows: list[Row], markdown: bool) -> str:
    head = ("benchmark", "measured", "compared with", "ratio / note")
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|---|---:|---:|---|"]
        return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    fmt = f"{{:<{widths[0]}}}  {{:>{widths[1]}}}  {{:>{widths[2]}}}  {{}}"
    return "\n".join(fmt.format(*r) for r in [head, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = parser.parse_args()
    start = time.perf_counter()
    rows = startup_rows(5 if args.quick else 15)
    rows += memory_rows(2 if args.quick else 5)
    rows += token_rows() + emulator_rows() + tracing_rows(3 if args.quick else 9)
    print(render(rows, args.markdown))
    print(f"\n{platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {time.perf_counter() - start:.0f} s in all")  # fmt: skip


if __name__ == "__main__":
    main()
