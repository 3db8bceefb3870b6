"""Token economy: a ~100-turn offline research run under each shipped profile and server model.

Usage: python bench/token_economy.py [--files N] [--workload files|web] [--try SETTINGS]
                                     [--best] [--tune] [--json]

Generates a deterministic workspace (N files of service-log prose, default 48, each read in two
chunks because the run sets tools.max_result_chars=8000), runs the emulator's default policy
over it (`agentctl run --offline --json`) once per profile (the built-in default, api-
defaults.toml, balanced.toml, balanced.toml with the server strategy, no-editing.toml) and per
server model (`context_editing.server_model`: the default, and each open rule's other answer:
the unedited trigger basis, the small-result line at the placeholder's size), with the same
task and --max-turns 150, and compares the total input tokens (input + cache writes + cache
reads), the estimated cost and the cache hit ratio against no-editing.toml's. Anthropic reports
an 84% cut in token use from context editing on a 100-turn web-search evaluation. `--json`
prints one JSON object with a `runs` list. The answer of each run must hold every file's
FINDING (they survive clearing through memory).

`--try "trigger=30000 keep=2"` (repeatable) runs, instead of the shipped profiles, the
built-in profile with those settings beside it and no-editing.toml, under the default server
model only: how to check a setting before shipping it. `--best` adds the workload's best
settings found (`BEST`, the ones docs/bench.md names and bench/scale.py runs) as the first.

`--tune` runs the built-in profile and no-editing.toml, then `agentctl tune --json
--tokens-within 0.4` (0.6 for web: the issue's cost targets) on the built-in run's transcript
(its default search, the fewest tokens within that cost), then a live run with the settings tune
recommends: the replay's figures and the run's side by side (they agree when the replay
reproduces the run), with the facts the run's answer kept.

`--workload web` runs the same comparison on a web-research task instead (the shape of
Anthropic's evaluation): N generated pages in the task's `web/` folder (the emulator's offline
web), a task of N `search:` lines, and web_search + web_fetch turned on; the default policy
searches each query, fetches the first result and notes its FINDING in memory, one turn per
query (N = 98 gives a 100-turn run). Its JSON runs carry `"workload": "web"`.
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
from typing import Any

from agentctl.context.server_model import PRESETS
from agentctl.context.server_model import SERVER_MODELS as SERVER_VARIANTS

REPO = Path(__file__).resolve().parent.parent

BUILTIN = "<built-in>"


@dataclass(frozen=True)
class Variant:
    """One profile as the bench runs it: its label, role and extra --set overrides."""

    label: str
    profile: str  # a path under the repo, or BUILTIN (no profile file at all)
    role: str  # "default" (what a user gets without choosing), "no-editing", or other
    sets: tuple[str, ...] = ()


VARIANTS = [
    Variant("built-in", BUILTIN, "default"),
    Variant("api-defaults.toml", "configs/api-defaults.toml", "api-defaults"),
    Variant("balanced.toml", "configs/balanced.toml", "balanced"),
    Variant("balanced, server", "configs/balanced.toml", "balanced-server",
            ("context_editing.tool_uses.strategy=server", "context_editing.tool_uses.low_water=0")),
    Variant("no-editing.toml", "configs/no-editing.toml", "no-editing"),
]  # fmt: skip
# The open server rules (docs/context.md, "Server rules"): every profile runs under the
# default server model and each open rule's other answer (server_model.SERVER_MODELS).
SERVER_MODELS = tuple(m.name for m in SERVER_VARIANTS)
ANTHROPIC_REPORTED_CUT = 0.84
# The targets of issue 26 on each workload: at least this share fewer input tokens than no
# editing, at most this cost (x no editing), every fact kept. `--tune` asks tune for the
# fewest tokens within the cost; bench/scale.py marks its rows met or not against both.
TARGETS = {"files": (0.90, 0.4), "web": (0.84, 0.6)}
# The best settings measured on each workload (docs/bench.md, "Toward the targets"; one home:
# bench/scale.py runs these): `--try` specs, every fact kept. Web: with the memory calls'
# inputs cleared too, the emulator's policy goes on from the notes it still sees and views
# them to check before answering (docs/emulator.md).
BEST = {
    "files": 'trigger=6000 keep=1 clear_at_least=0 clear_tool_inputs=["read_file"]',
    "web": "trigger=6000 keep=1 clear_at_least=0 clear_tool_inputs=true",
}
# No editing peaks at 223k tokens, past the 200k window the emulator enforces: every run
# gets a 1M window (as the 1M-context variants have) so that the baseline can finish.
WINDOW = 1_000_000
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
    variant: Variant
    server_model: str
    turns: int
    input_tokens: int
    cache_write: int
    cache_read: int
    cost: float
    cleared: int
    peak_prompt: int
    facts_found: int
    facts_total: int
    workload: str = "files"
    web_searches: int = 0

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_write + self.cache_read

    @property
    def hit_ratio(self) -> float:
        return self.cache_read / self.total_input if self.total_input else 0.0

    def to_json(self) -> dict[str, object]:
        return {
            "profile": self.variant.label, "role": self.variant.role,
            "server_model": self.server_model, "total_input_tokens": self.total_input,
            "cost_usd": round(self.cost, 6), "cache_hit_ratio": round(self.hit_ratio, 6),
            "facts_found": self.facts_found, "facts_total": self.facts_total,
            "turns": self.turns, "cache_write_tokens": self.cache_write,
            "cache_read_tokens": self.cache_read, "peak_prompt": self.peak_prompt,
            "workload": self.workload, "web_searches": self.web_searches,
        }  # fmt: skip


WEB_SETS = (
    "server_tools.web_search.enabled=true",
    "server_tools.web_fetch.enabled=true",
    "tools.workspace=false",
)


def web_query(i: int) -> str:
    return f"heron finding f{i:03d}"


def web_finding(i: int) -> str:
    return f"FINDING f{i:03d}: Heron incident item {i * 37 % 101} confirmed by node {i % 7}."


def generate_web(folder: Path, pages: int) -> list[str]:
    """The offline web: one page per query (20 log lines around its FINDING); the FINDINGs."""
    draw = random.Random(SEED)
    for i in range(pages):
        lines = [log_line(draw, n) + "." for n in range(20)]
        lines.insert(draw.randint(3, 17), web_finding(i))
        page = folder / "logs.example.com" / f"incident-{i:03d}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# Incident log {i:03d}\n" + "\n".join(lines) + "\n")
    return [web_finding(i) for i in range(pages)]


def web_task(pages: int) -> str:
    queries = "".join(f"search: {web_query(i)}\n" for i in range(pages))
    return "# Heron research\n\nFind the FINDING behind each query.\n\n" + queries


def run_offline(
    work: Path, workspace: Path, args: list[str], label: str
) -> list[dict[str, object]]:
    """`agentctl run task.md --offline --json` in `work` (its own AGENTCTL_HOME, no ambient
    profile, a window no unedited run outgrows) with `args` on top; the NDJSON events."""
    env = {**os.environ, "AGENTCTL_HOME": str(work / "home"), "NO_COLOR": "1"}
    env.pop("AGENTCTL_PROFILE", None)
    env["AGENTCTL_EMULATOR_CONTEXT_WINDOW"] = str(WINDOW)  # no editing needs more than 200k
    cmd = [sys.executable, "-m", "agentctl", "run", "task.md", "--offline", "--json", "--quiet",
           "--workspace", str(workspace), "--max-turns", "150",
           "--set", "tools.max_result_chars=8000", *args]  # fmt: skip
    done = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{label}: exit {done.returncode}: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def run_profile(
    base: Path, variant: Variant, model: str, facts: list[str], workload: str = "files"
) -> Outcome:
    """One offline run in its own folder (fresh memory); the totals of its result event."""
    work = base / f"{variant.role}-{model}"
    work.mkdir()
    (work / "task.md").write_text(TASK if workload == "files" else web_task(len(facts)))
    if workload == "web":
        shutil.copytree(base / "web", work / "web")
    args = ["--set", f"context_editing.server_model={model}"]
    if variant.profile != BUILTIN:
        args += ["--profile", str(REPO / variant.profile)]
    for setting in (*variant.sets, *(WEB_SETS if workload == "web" else ())):
        args += ["--set", setting]
    events = run_offline(work, base / "workspace", args, variant.label)
    return outcome(variant, model, events, facts, workload)


def tune_run(base: Path, recorded: Outcome) -> tuple[Variant, dict[str, Any]]:
    """`agentctl tune ID --json --tokens-within R` (the default search, ranked by tokens
    within the workload's cost target) on the transcript of the `recorded` run; the
    recommended settings as a --try variant, and tune's JSON."""
    home = base / f"{recorded.variant.role}-{recorded.server_model}" / "home"
    env = {**os.environ, "AGENTCTL_HOME": str(home), "NO_COLOR": "1"}
    env.pop("AGENTCTL_PROFILE", None)
    within = str(TARGETS[recorded.workload][1])
    cmd = [sys.executable, "-m", "agentctl", "tune", "last", "--json", "--tokens-within", within]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"tune: exit {done.returncode}: {done.stderr.strip()}")
    data: dict[str, Any] = json.loads(done.stdout)
    return tuned_variant(data["winner"]["settings"]), data


def tuned_variant(settings: dict[str, Any]) -> Variant:
    """The built-in profile with the settings of a `tune --json` candidate."""
    if not settings["clear_tool_uses"]:
        sets = ["context_editing.tool_uses.enabled=false"]
    else:
        keys = ("trigger", "keep", "clear_at_least", "strategy", "low_water")
        sets = [f"{k}={settings[k]}" for k in keys if k in settings]
        if settings.get("clear_tool_inputs"):  # true or tool names: a TOML value, no spaces
            inputs = json.dumps(settings["clear_tool_inputs"], separators=(",", ":"))
            sets.append(f"clear_tool_inputs={inputs}")
    sets.append(f"cache.ttl={settings['ttl']}")
    return Variant("tune's pick", BUILTIN, "tuned", trial(" ".join(sets), 0).sets)


def outcome(
    variant: Variant,
    model: str,
    events: list[dict[str, object]],
    facts: list[str],
    workload: str = "files",
) -> Outcome:
    result = events[-1]
    totals: dict[str, int | float] = result["totals"]  # type: ignore[assignment]
    turns = [e for e in events if e["event"] == "turn"]
    prompts = [_prompt(e["usage"]) for e in turns]  # type: ignore[arg-type]
    text = str(result["text"])
    return Outcome(
        variant, model, int(result["turns"]),  # type: ignore[call-overload]
        int(totals["input_tokens"]), int(totals["cache_creation_input_tokens"]),
        int(totals["cache_read_input_tokens"]), float(totals["cost_usd"] or 0.0),
        int(totals["cleared_input_tokens"]), max(prompts),
        sum(fact in text for fact in facts), len(facts),
        workload, _server_requests(totals),
    )  # fmt: skip


def _server_requests(totals: dict[str, object]) -> int:
    counts = totals.get("server_tool_use")
    return int(counts.get("web_search_requests", 0)) if isinstance(counts, dict) else 0


def _prompt(usage: dict[str, int]) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def trial(spec: str, index: int) -> Variant:
    """The built-in profile with `spec`'s `key=value` settings (space-separated; keys under
    context_editing.tool_uses unless they name a section, e.g. cache.ttl=1h)."""
    sets = tuple(
        item if "." in item.partition("=")[0] else f"context_editing.tool_uses.{item}"
        for item in spec.split()
    )
    return Variant(spec, BUILTIN, f"trial-{index}", sets)


def bench(
    files: int = 48,
    workload: str = "files",
    trials: tuple[str, ...] = (),
    tune: bool = False,
) -> tuple[list[Outcome], int, dict[str, Any] | None]:
    """Every variant under every server model, in order; the workspace (or web) size in
    bytes; and with `tune`, tune's JSON. `trials`: instead, the built-in profile with each of
    these settings (`trial`) and no-editing.toml, under the default server model only;
    `tune`: also the settings tune recommends on the built-in run, run live after the trials
    (the built-in run, the trials, tune's pick, no-editing)."""
    base = Path(tempfile.mkdtemp(prefix="agentctl-bench-tokens-"))
    try:
        folder = base / ("workspace" if workload == "files" else "web")
        folder.mkdir()
        facts = (generate if workload == "files" else generate_web)(folder, files)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        model = SERVER_MODELS[0]
        if not (trials or tune):
            runs = [
                run_profile(base, v, m, facts, workload) for m in SERVER_MODELS for v in VARIANTS
            ]
            return runs, size, None
        recorded = run_profile(base, VARIANTS[0], model, facts, workload)
        variants = [trial(t, i) for i, t in enumerate(trials)]
        data = None
        if tune:
            tuned, data = tune_run(base, recorded)
            variants.append(tuned)
        runs = [run_profile(base, v, model, facts, workload) for v in (*variants, VARIANTS[-1])]
        return [recorded, *runs], size, data
    finally:
        shutil.rmtree(base)


def tune_lines(data: dict[str, Any], live: Outcome) -> list[str]:
    """What tune replayed and recommended, against the live run of its recommendation."""
    winner = data["winner"]
    cost, tokens = float(winner["cost_usd"]), int(winner["prompt_tokens"])
    return [
        f"tune: {data['candidates']} settings replayed; recommends {settings_shown(live.variant)}",
        f"  replay: ${cost:.4f}, {tokens:,} input tokens; live run: ${live.cost:.4f},"
        f" {live.total_input:,} input tokens ({live.total_input - tokens:+,}),"
        f" {live.facts_found}/{live.facts_total} facts",
    ]


def settings_shown(variant: Variant) -> str:
    """A variant's --set settings as a --try spec shows them (tool_uses keys unprefixed)."""
    return " ".join(s.partition("tool_uses.")[2] or s for s in variant.sets)


def baseline(runs: list[Outcome], model: str) -> Outcome:
    """The no-editing run under `model`."""
    return next(o for o in runs if o.server_model == model and o.variant.role == "no-editing")


def render(runs: list[Outcome], files: int, size: int) -> list[str]:
    kind = "files" if not runs or runs[0].workload == "files" else "web pages + search queries"
    rows = [f"workload: {files} generated {kind} ({size / 1024:.0f} KB), emulator default policy"]
    for model in SERVER_MODELS:
        if any(o.server_model == model for o in runs):  # --try runs the default model only
            rows += ["", *render_model([o for o in runs if o.server_model == model], model)]
    return rows


def render_model(runs: list[Outcome], model: str) -> list[str]:
    plain = baseline(runs, model)
    rule = PRESETS[model].describe().split("; placeholder")[0]
    rows = [f"server model {rule}",
            f"{'':<22}" + "".join(f"{o.variant.label:>18}" for o in runs)]  # fmt: skip
    cells: list[tuple[str, Callable[[Outcome], str]]] = [
        ("turns", lambda o: f"{o.turns:,}"),
        ("input (uncached)", lambda o: f"{o.input_tokens:,}"),
        ("cache writes", lambda o: f"{o.cache_write:,}"),
        ("cache reads", lambda o: f"{o.cache_read:,}"),
        ("total input tokens", lambda o: f"{o.total_input:,}"),
        ("vs no-editing", lambda o: f"{o.total_input / plain.total_input - 1:+.1%}"),
        ("peak prompt", lambda o: f"{o.peak_prompt:,}"),
        ("cache hit ratio", lambda o: f"{o.hit_ratio:.1%}"),
        ("estimated cost", lambda o: f"${o.cost:.2f}"),
        ("cost vs no-editing", lambda o: f"{o.cost / plain.cost:.2f}x" if plain.cost else "-"),
        ("facts in the answer", lambda o: f"{o.facts_found}/{o.facts_total}"),
    ]
    if any(o.web_searches for o in runs):
        cells.insert(-2, ("web searches", lambda o: f"{o.web_searches:,}"))
    for name, fn in cells:
        rows.append(f"{name:<22}" + "".join(f"{fn(o):>18}" for o in runs))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=48)
    parser.add_argument("--json", action="store_true", help="one JSON object with a runs list")
    parser.add_argument(
        "--workload", choices=("files", "web"), default="files",
        help="files: read a workspace; web: search + fetch an offline web (--files = queries)",
    )  # fmt: skip
    parser.add_argument(
        "--try", dest="trials", action="append", default=[], metavar="SETTINGS",
        help='the built-in profile with these settings, e.g. "trigger=30000 keep=2" (repeatable;'
        " default server model only)",
    )  # fmt: skip
    parser.add_argument(
        "--best", action="store_true",
        help="the workload's best settings (BEST, docs/bench.md) as a --try, before any other",
    )  # fmt: skip
    parser.add_argument(
        "--tune", action="store_true",
        help="tune the built-in run's transcript and run tune's recommendation live",
    )  # fmt: skip
    args = parser.parse_args()
    trials = (*([BEST[args.workload]] if args.best else []), *args.trials)
    runs, size, tuned = bench(args.files, args.workload, trials, args.tune)
    if args.json:
        print(json.dumps({"files": args.files, "workspace_bytes": size,
                          "anthropic_reported_cut": ANTHROPIC_REPORTED_CUT,
                          "runs": [o.to_json() for o in runs],
                          **({"tune": tuned} if tuned else {})}))  # fmt: skip
    else:
        print("\n".join(render(runs, args.files, size)))
        if tuned:
            live = next(run for run in runs if run.variant.role == "tuned")
            print("\n".join(["", *tune_lines(tuned, live)]))


if __name__ == "__main__":
    main()
