"""Save-before-clear: facts kept and cost with and without the checkpoint notice, in one run.

Usage: python bench/checkpoint.py [--files N] [--json]

The token-economy workload (bench/token_economy.py: N generated log files, default 48, each
read in two chunks, one FINDING line per file, tools.max_result_chars=8000, --max-turns 150),
run offline through the emulator with two emulated models:
- "when told" (the task carries the line `memory: when told`): it writes notes to memory only
  when the checkpoint notice tells it to; without the notice it never does, so what clearing
  removes is lost;
- the default policy, which notes every file as it goes (the notice changes nothing it does).
Each under the built-in profile (batched clearing from 20,000 tokens) and configs/api-
defaults.toml (the API's own edit: trigger 100,000, keep 3), with the notice off, on (once)
and on with `context_editing.checkpoint.repeat` (before each clearing). Reported per run: the
FINDING lines in the final answer, the turns, total input tokens, the estimated cost, the
memory writes and the turns whose tool results carried the notice. `--json` prints one object
with a `runs` list.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from token_economy import TASK, generate, run_offline

REPO = Path(__file__).resolve().parent.parent
WHEN_TOLD = "\nmemory: when told\n"
PROFILES = {"built-in": None, "api-defaults.toml": "configs/api-defaults.toml"}


@dataclass(frozen=True)
class Outcome:
    model: str  # "when told" or "default"
    profile: str
    checkpoint: str  # "off", "once" or "repeat"
    turns: int
    total_input: int
    output: int
    cost: float
    facts_found: int
    facts_total: int
    notice_turns: tuple[int, ...]  # the turns whose tool results carried the notice
    memory_writes: int
    first_clearing: int | None  # the first turn whose request had tool results cleared

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model, "profile": self.profile, "checkpoint": self.checkpoint,
            "turns": self.turns, "total_input_tokens": self.total_input,
            "output_tokens": self.output, "cost_usd": round(self.cost, 6),
            "facts_found": self.facts_found, "facts_total": self.facts_total,
            "notice_turns": list(self.notice_turns), "memory_writes": self.memory_writes,
            "first_clearing": self.first_clearing,
        }  # fmt: skip


MODES = {
    "off": ("context_editing.checkpoint.enabled=false",),
    "once": ("context_editing.checkpoint.enabled=true",),
    "repeat": ("context_editing.checkpoint.enabled=true", "context_editing.checkpoint.repeat=true"),
}


def run_one(base: Path, model: str, profile: str, mode: str, facts: list[str]) -> Outcome:
    """One offline run in its own folder with a fresh memory root."""
    work = base / f"{model.replace(' ', '-')}-{profile}-{mode}"
    work.mkdir()
    (work / "task.md").write_text(TASK + (WHEN_TOLD if model == "when told" else ""))
    args: list[str] = []
    for setting in MODES[mode]:
        args += ["--set", setting]
    if PROFILES[profile] is not None:
        args += ["--profile", str(REPO / str(PROFILES[profile]))]
    events = run_offline(work, base / "workspace", args, f"{model}/{profile}")
    return outcome(model, profile, mode, events, facts)


def outcome(
    model: str, profile: str, mode: str, events: list[dict[str, object]], facts: list[str]
) -> Outcome:
    result = events[-1]
    totals: dict[str, int | float] = result["totals"]  # type: ignore[assignment]
    turns = [e for e in events if e["event"] == "turn"]
    notice = [int(e["turn"]) for e in turns if e.get("checkpoint")]  # type: ignore[call-overload]
    writes = sum(
        1
        for e in turns
        for op in e["memory_ops"]  # type: ignore[attr-defined]
        if op["command"] in ("create", "str_replace", "insert")
    )
    total = sum(
        int(totals[k])
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    text = str(result["text"])
    clearing = [
        int(e["turn"])  # type: ignore[call-overload]
        for e in turns
        if any(a.get("cleared_tool_uses") for a in e["applied_edits"])  # type: ignore[attr-defined]
    ]
    return Outcome(
        model, profile, mode, int(result["turns"]), total,  # type: ignore[call-overload]
        int(totals["output_tokens"]), float(totals["cost_usd"] or 0.0),
        sum(fact in text for fact in facts), len(facts), tuple(notice), writes,
        clearing[0] if clearing else None,
    )  # fmt: skip


def bench(files: int = 48) -> list[Outcome]:
    base = Path(tempfile.mkdtemp(prefix="agentctl-bench-checkpoint-"))
    try:
        folder = base / "workspace"
        folder.mkdir()
        facts = generate(folder, files)
        return [
            run_one(base, model, profile, mode, facts)
            for model in ("when told", "default")
            for profile in PROFILES
            for mode in MODES
        ]
    finally:
        shutil.rmtree(base)


def render(runs: list[Outcome], files: int) -> list[str]:
    rows = [f"workload: {files} generated files (bench/token_economy.py), emulator offline"]
    head = f"{'model':<10} {'profile':<18} {'notice':<7} {'facts':>6} {'turns':>6}"
    head += f" {'input tok':>10} {'cost':>8} {'writes':>6} {'1st clr':>7}  notice after turns"
    rows.append(head)
    for o in runs:
        at = ", ".join(str(n) for n in o.notice_turns) or "-"
        rows.append(
            f"{o.model:<10} {o.profile:<18} {o.checkpoint:<7}"
            f" {o.facts_found:>3}/{o.facts_total:<2} {o.turns:>6} {o.total_input:>10,}"
            f" ${o.cost:>7.3f} {o.memory_writes:>6} {o.first_clearing or '-':>7}  {at}"
        )
    rows += ["", "against the notice off (same model and profile):"]
    for o in runs:
        off = next(
            x for x in runs if (x.model, x.profile, x.checkpoint) == (o.model, o.profile, "off")
        )
        if o is off:
            continue
        rows.append(
            f"  {o.model:<10} {o.profile:<18} {o.checkpoint:<7} facts {off.facts_found} ->"
            f" {o.facts_found}, input tokens {o.total_input - off.total_input:+,}"
            f" ({o.total_input / off.total_input - 1:+.2%}),"
            f" cost {o.cost - off.cost:+.4f} USD ({o.cost / off.cost - 1:+.2%}),"
            f" turns {o.turns - off.turns:+d}"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=48)
    parser.add_argument("--json", action="store_true", help="one JSON object with a runs list")
    args = parser.parse_args()
    runs = bench(args.files)
    if args.json:
        print(json.dumps({"files": args.files, "runs": [o.to_json() for o in runs]}))
    else:
        print("\n".join(render(runs, args.files)))


if __name__ == "__main__":
    main()
