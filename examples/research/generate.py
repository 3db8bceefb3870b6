# ruff: noqa: E501  (the FINDINGS table is data; one finding per line reads best)
"""Regenerate examples/research/workspace/ deterministically (the files are committed too).

Run from anywhere: `python examples/research/generate.py`. The same seed gives byte-identical
files. Each file is an ordinary-looking service log or team page of 10-15 KB; a few lines in
each carry a FINDING about the Kestrel outage (the facts the task asks for). The filler never
uses the task's words, so those lines are what a careful reader, or the offline emulator's
default policy, picks out.
"""

from __future__ import annotations

import random
from pathlib import Path

SEED = 20260314
ROOT = Path(__file__).resolve().parent / "workspace"
SERVICES = ["cart-api", "payments-gw", "ledger", "inventory", "edge-proxy", "search", "auth"]
ROUTES = [
    "/v2/cart/items",
    "/v2/cart/checkout",
    "/v1/pay/authorize",
    "/v1/pay/capture",
    "/v3/stock/reserve",
    "/v1/session/refresh",
    "/v2/search/query",
]
LEVELS = ["INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN"]
TEAMS = ["payments", "storefront", "platform", "data", "sre"]
PEOPLE = ["Ana Ortiz", "Bo Chen", "Chidi Okafor", "Dana Levi", "Eli Park", "Femi Adeyemi"]
TOPICS = [
    "migrating ledger shards to the new storage class",
    "rolling the edge-proxy TLS certificates before they expire",
    "tuning the connection pool of the payments gateway",
    "cleaning up feature flags left from the spring sale",
    "moving the search indexer to spot capacity",
    "adding per-tenant rate limits to the auth service",
    "raising the JVM heap of the inventory workers",
    "rewriting the cart merge path for guest sessions",
]

FINDINGS = [
    "FINDING: Kestrel outage began 2026-03-14 09:12 UTC when payments-gw exhausted its DB pool (max 64).",
    "FINDING: Kestrel outage root cause: retry storm from cart-api (3 retries x 4 pods) after a 2s timeout.",
    "FINDING: Kestrel outage blast radius: 38% of checkout attempts failed for 47 minutes.",
    "FINDING: Kestrel outage detection lag: first page fired 11 minutes after error rate crossed 5%.",
    "FINDING: Kestrel outage trigger: ledger shard rebalance doubled p99 write latency to 1.8s.",
    "FINDING: Kestrel outage mitigation: pool raised to 128 and cart-api retries cut to 1 at 09:59 UTC.",
    "FINDING: Kestrel outage data impact: 212 orders double-charged, all refunded by 2026-03-16.",
    "FINDING: Kestrel outage follow-up: add jittered backoff to every client of payments-gw (owner: Bo Chen).",
    "FINDING: Kestrel outage follow-up: alert on pool saturation above 80% for 2 minutes (owner: Dana Levi).",
    "FINDING: Kestrel outage follow-up: freeze ledger rebalances during peak hours (owner: Chidi Okafor).",
    "FINDING: Kestrel outage cost estimate: USD 184,000 in lost orders and 9 engineer-days.",
    "FINDING: Kestrel outage status page was updated 26 minutes late; comms runbook had a stale contact.",
]


def log_line(rng: random.Random, minute: int) -> str:
    svc = rng.choice(SERVICES)
    pod = f"{svc}-{rng.randrange(16**6):06x}-{rng.randrange(36**5):05d}"
    status = rng.choices([200, 201, 204, 404, 499, 503], [70, 8, 6, 6, 4, 6])[0]
    return (
        f"2026-03-14T{9 + minute // 60:02d}:{minute % 60:02d}:{rng.randrange(60):02d}."
        f"{rng.randrange(1000):03d}Z {rng.choice(LEVELS):5} svc={svc} pod={pod} "
        f"trace={rng.randrange(16**16):016x} route={rng.choice(ROUTES)} status={status} "
        f"dur_ms={int(rng.lognormvariate(3.5, 0.9))} bytes={rng.randrange(200, 9000)}"
    )


def log_file(rng: random.Random, findings: list[str], lines: int) -> str:
    body = [log_line(rng, rng.randrange(180)) for _ in range(lines)]
    for finding in findings:
        body.insert(rng.randrange(len(body)), f"2026-03-15T10:00:00.000Z NOTE  {finding}")
    return "\n".join(body) + "\n"


def page_file(rng: random.Random, title: str, findings: list[str], sections: int) -> str:
    out = [f"# {title}", ""]
    for day in range(sections):
        out += [f"## Standup 2026-03-{3 + day:02d} ({rng.choice(TEAMS)})", ""]
        for _ in range(rng.randrange(5, 9)):
            out.append(
                f"- {rng.choice(PEOPLE)}: {rng.choice(TOPICS)}; ticket PLAT-{rng.randrange(9999)}, "
                f"eta {rng.randrange(1, 9)}d, risk {rng.choice(['low', 'medium', 'high'])}"
            )
        out += ["", "| metric | value | target |", "|---|---|---|"]
        for _ in range(rng.randrange(6, 10)):
            out.append(f"| {rng.choice(SERVICES)} p99 ms | {rng.randrange(20, 900)} | 300 |")
        out.append("")
    for finding in findings:
        out.insert(rng.randrange(2, len(out)), f"> {finding}")
    return "\n".join(out) + "\n"


def build(root: Path = ROOT) -> list[Path]:
    rng = random.Random(SEED)
    root.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for i in range(18):
        findings = [FINDINGS[(i + k) % len(FINDINGS)] for k in range(1 + i % 2)]
        if i % 3 == 2:
            path = root / "pages" / f"team-page-{i:02d}.md"
            text = page_file(rng, f"Platform weekly {i:02d}", findings, 8)
        else:
            path = root / "logs" / f"{SERVICES[i % len(SERVICES)]}-{i:02d}.log"
            text = log_file(rng, findings, 80)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    files = build()
    total = sum(p.stat().st_size for p in files)
    print(f"wrote {len(files)} files, {total:,} bytes under {ROOT}")
