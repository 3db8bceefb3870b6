"""Token economy: a ~100-turn offline research run under balanced.toml versus no-editing.toml.

Usage: python bench/token_economy.py [--files N]

Generates a deterministic workspace (N files of service-log prose, default 48, each read in
two chunks because the run sets tools.max_result_chars=8000), runs the emulator's default
policy over it (`agentctl run --offline --json`) once per profile, with the same task and
--max-turns 150, and compares the total input tokens (input + cache writes + cache reads),
the estimated cost and the cache hit ratio. Anthropic reports an 84% cut in token use from
context editing on a 100-turn web-search evaluation; the reduction here is printed beside it.
The answer of each run must hold every file's FINDING (they survive clearing through memory).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROFILES = ["configs/balanced.toml", "configs/no-editing.toml"]
ANTHROPIC_REPORTED_CUT = 0.84
SEED = 6
WORDS = [
    *("shard", "replica", "queue", "worker", "batch", "lease", "token", "window", "budget"),
    *("flush", "commit", "rollback", "handshake", "session", "backlog", "cursor", "offset"),
    *("partition", "snapshot", "compaction", "tenant", "quota"),
]
TASK = (
    "# Incident sweep\n\nRead every file in the workspace and collect every FINDING line "
    "about the Heron incident. Answer with the complete list.\n"
)


def log_line(draw: random.Random, n: int) -> str:
    words = " ".join(draw.choice(WORDS) for _ in range(draw.randint(6, 12)))
    return (
        f"2026-04-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z svc-{draw.randint(1, 9)} {words}"
    )


def finding(i: int) -> str:
    return f"FINDING {i:02d}: Heron incident item {i * 37 % 101} confirmed by node {i % 7}"


def generate(folder: Path, files: int) -> list[str]:
    """Write the workspace; returns the FINDING lines a complete answer holds."""
    draw = random.Random(SEED)
    facts = []
    for i in range(files):
        lines = [log_line(draw, n) for n in range(150)]
        lines.insert(30 if i % 2 else 120, finding(i))  # half in the second chunk
        (folder / f"log-{i:02d}.txt").write_text("\n".join(lines) + "\n")
        facts.append(finding(i))
    return facts


@dataclass(frozen=True)
class Outcome:
    profile: str
    turns: int
    input_tokens: int
    cache_write: int
    cache_read: int
    cost: float
    cleared: int
    peak_prompt: int
    facts_found: int

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write + self.cache_read

    @property
    def hit_ratio(self) -> float:
        return self.cache_read / self.total_input if self.total_input else 0.0


def run_profile(base: Path, profile: str, facts: list[str]) -> Outcome:
    """One offline run in its own folder (fresh memory); the totals of its result event."""
    work = base / Path(profile).stem
    work.mkdir()
    (work / "task.md").write_text(TASK)
    env = {**os.environ, "AGENTCTL_HOME": str(work / "home"), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "agentctl", "run", "task.md", "--offline", "--json", "--quiet",
           "--profile", str(REPO / profile), "--workspace", str(base / "workspace"),
           "--max-turns", "150", "--set", "tools.max_result_chars=8000"]  # fmt: skip
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{profile}: exit {done.returncode}: {done.stderr.strip()}")
    events = [json.loads(line) for line in done.stdout.splitlines()]
    return outcome(profile, events, facts)


def outcome(profile: str, events: list[dict[str, object]], facts: list[str]) -> Outcome:
    result = events[-1]
    totals: dict[str, int | float] = result["totals"]  # type: ignore[assignment]
    turns = [e for e in events if e["event"] == "turn"]
    prompts = [_prompt(e["usage"]) for e in turns]  # type: ignore[arg-type]
    text = str(result["text"])
    return Outcome(
        profile, int(result["turns"]),  # type: ignore[call-overload]
        int(totals["input_tokens"]), int(totals["cache_creation_input_tokens"]),
        int(totals["cache_read_input_tokens"]), float(totals["cost_usd"] or 0.0),
        int(totals["cleared_input_tokens"]), max(prompts),
        sum(fact in text for fact in facts),
    )  # fmt: skip


def _prompt(usage: dict[str, int]) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def bench(files: int = 48) -> tuple[Outcome, Outcome, int]:
    base = Path(tempfile.mkdtemp(prefix="agentctl-bench-tokens-"))
    try:
        (base / "workspace").mkdir()
        facts = generate(base / "workspace", files)
        size = sum(p.stat().st_size for p in (base / "workspace").iterdir())
        default, plain = (run_profile(base, p, facts) for p in PROFILES)
        return default, plain, size
    finally:
        shutil.rmtree(base)


def render(default: Outcome, plain: Outcome, files: int, size: int) -> list[str]:
    cut = 1 - default.total_input / plain.total_input
    saved = 1 - default.cost / plain.cost if plain.cost else 0.0
    rows = [
        f"workload: {files} generated files ({size / 1024:.0f} KB), emulator default policy",
        f"{'':<24} {'balanced.toml':>14} {'no-editing.toml':>16}",
    ]
    cells: list[tuple[str, Callable[[Outcome], str]]] = [
        ("turns", lambda o: f"{o.turns:,}"),
        ("input (uncached)", lambda o: f"{o.input_tokens:,}"),
        ("cache writes", lambda o: f"{o.cache_write:,}"),
        ("cache reads", lambda o: f"{o.cache_read:,}"),
        ("total input tokens", lambda o: f"{o.total_input:,}"),
        ("peak prompt", lambda o: f"{o.peak_prompt:,}"),
        ("cache hit ratio", lambda o: f"{o.hit_ratio:.1%}"),
        ("estimated cost", lambda o: f"${o.cost:.2f}"),
        ("facts in the answer", lambda o: f"{o.facts_found}/{files}"),
    ]
    for name, fn in cells:
        rows.append(f"{name:<24} {fn(default):>14} {fn(plain):>16}")
    rows.append(
        f"token reduction {cut:.1%} (Anthropic reports {ANTHROPIC_REPORTED_CUT:.0%} on a 100-turn "
        f"web-search eval); cost reduction {saved:.1%}"
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=48)
    args = parser.parse_args()
    default, plain, size = bench(args.files)
    print("\n".join(render(default, plain, args.files, size)))


if __name__ == "__main__":
    main()
