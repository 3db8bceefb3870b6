"""What OpenTelemetry spans cost a run: the loop's time with spans recorded against without.

Run: .venv/bin/python bench/tracing.py [--turns 200] [--reps 9]
Two workloads, each run alternately without a tracer provider and with the SDK's
TracerProvider recording every span into memory (SimpleSpanProcessor + InMemorySpanExporter:
each span exported as it ends), so drift in the machine's load falls on both alike:
- scripted: `--turns` turns of a memory `view` call through `agentctl.ScriptedClient` (no
  HTTP): the loop alone, so the spans' share is as large as it gets;
- emulator: the offline sweep of six files with clearing (11 turns, 16 tool calls) through
  the real SDK and the built-in emulator, as `agentctl run --offline` does it.
Medians of `--reps` runs of each after one warm-up, in CPU time of this process (the
emulator's threads included; on a shared machine wall time mostly measures the other jobs);
the ratio is with / without.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import agentctl
from agentctl.testing import reply, tool_use

SWEEP = "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"
CLEARING = """
model = "claude-sonnet-5"
max_turns = 40
[context_editing.tool_uses]
trigger = 5000
keep = 1
clear_at_least = 0
[tools]
memory = true
workspace = true
"""


def scripted(turns: int, root: Path) -> Callable[[], int]:
    profile = agentctl.load_profile(overrides={"max_turns": turns + 1})

    def once() -> int:
        view = reply(tool_use("memory", {"command": "view", "path": "/memories"}), stop="tool_use")
        client = agentctl.ScriptedClient(*([view] * turns), "done")
        result = agentctl.run(
            "Go.", profile=profile, client=client, memory_root=root / "mem", record=False
        )
        return len(result.turns)

    return once


def emulated(root: Path) -> Callable[[], int]:
    workspace = root / "ws"
    workspace.mkdir()
    for i in range(6):
        lines = [f"entry {n}: shard replica queue {i}" for n in range(150)]
        (workspace / f"log-{i}.txt").write_text("\n".join(lines) + f"\nFINDING {i}\n")
    profile = root / "clearing.toml"
    profile.write_text(CLEARING)

    runs = itertools.count()

    def once() -> int:
        # A fresh memory root each time: notes left by an earlier run would shorten the next.
        result = agentctl.run(
            SWEEP, profile=profile, offline=True, workspace=workspace,
            memory_root=root / f"mem-emu-{next(runs)}", record=False,
        )  # fmt: skip
        return len(result.turns)

    return once


def timed(work: Callable[[], int]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def provider(on: object | None) -> None:
    """Set (or, None, remove) the global tracer provider. A provider can be set once per
    process; this puts the global back as OpenTelemetry's own test utilities do."""
    from opentelemetry import trace
    from opentelemetry.util._once import Once

    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    if on is not None:
        trace.set_tracer_provider(on)  # type: ignore[arg-type]


def compare(work: Callable[[], int], reps: int, recording: object) -> tuple[float, float, int]:
    """(median CPU s without spans, median CPU s with, turns), the two alternating."""
    turns = work()  # warm-up
    off, on = [], []
    for _ in range(reps):
        provider(None)
        off.append(timed(work))
        provider(recording)
        on.append(timed(work))
    provider(None)
    return statistics.median(off), statistics.median(on), turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        recording = TracerProvider()
        recording.add_span_processor(SimpleSpanProcessor(exporter))
        works = {"scripted": scripted(args.turns, root), "emulator": emulated(root)}
        head = f"{'workload':<10} {'turns':>5} {'without ms':>11} {'with ms':>9} {'ratio':>6}"
        print(f"{head} {'spans/run':>9}")
        for name, work in works.items():
            exporter.clear()
            off, on, turns = compare(work, args.reps, recording)
            spans = len(exporter.get_finished_spans()) / args.reps
            row = f"{name:<10} {turns:>5} {off * 1000:>11.1f} {on * 1000:>9.1f} {on / off:>5.2f}x"
            print(f"{row} {spans:>9.0f}")


if __name__ == "__main__":
    main()
