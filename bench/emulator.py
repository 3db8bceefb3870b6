"""Emulator throughput and scaling: requests/second on small prompts, and a 100-turn session
whose prompt grows past 150k estimated tokens (per-request time vs prompt size).

Run: .venv/bin/python bench/emulator.py [--turns 100] [--small 500]
Clients: plain http.client on one keep-alive connection (measures the server, not the SDK),
plus the anthropic SDK for the small-prompt rate (what agentctl actually pays per request).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentctl.context.tokens import estimate_request_tokens
from agentctl.emulator import Script, ScriptTurn, ToolCall, running

HEADERS = {
    "x-api-key": "bench",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
    "anthropic-beta": "context-management-2025-06-27",
}
MODEL = "claude-sonnet-5"
REPEATS = 3


def post(conn: http.client.HTTPConnection, body: dict[str, Any]) -> dict[str, Any]:
    conn.request("POST", "/v1/messages", json.dumps(body), HEADERS)
    response = conn.getresponse()
    data: dict[str, Any] = json.loads(response.read())
    if response.status != 200:
        raise SystemExit(f"bench: HTTP {response.status}: {data}")
    return data


def connect(base_url: str) -> http.client.HTTPConnection:
    host, port = base_url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=60)


def small_rate(n: int) -> tuple[float, float]:
    """(requests/s over raw HTTP, requests/s through the SDK) for a one-message prompt."""
    import anthropic

    body = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    with running(script=Script()) as emu:
        conn = connect(emu.base_url)
        started = time.perf_counter()
        for _ in range(n):
            post(conn, body)
        raw = n / (time.perf_counter() - started)
        client = anthropic.Anthropic(base_url=emu.base_url, api_key="bench", max_retries=0)
        started = time.perf_counter()
        for _ in range(n):
            client.beta.messages.create(**body)  # type: ignore[call-overload]
        sdk = n / (time.perf_counter() - started)
    return raw, sdk


def parallel_rate(n: int, workers: int = 4) -> float:
    """requests/s over raw HTTP from `workers` threads, one keep-alive connection each."""
    body = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    with running(script=Script()) as emu:

        def work(_: int) -> None:
            conn = connect(emu.base_url)
            for _ in range(n // workers):
                post(conn, body)
            conn.close()

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(work, range(workers)))
        return (n // workers * workers) / (time.perf_counter() - started)


def tool_output(turn: int) -> str:
    """~1,700 estimated tokens of code-like text, different every turn."""
    return "\n".join(f"line {i}: value_{turn} = {i * 7919 % 1000}  # note" for i in range(170))


def timed(conn: http.client.HTTPConnection, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """The reply and the best of 3 timings (this machine is shared: single runs are noisy)."""
    best, reply = float("inf"), {}
    for _ in range(REPEATS):
        started = time.perf_counter()
        reply = post(conn, body)
        best = min(best, time.perf_counter() - started)
    return reply, best


def session(turns: int) -> list[tuple[int, int, float]]:
    """(turn, estimated prompt tokens, seconds) for each request of a growing session."""
    script = Script(
        tuple(
            ScriptTurn(tool_calls=(ToolCall("read_file", {"path": f"f{t}"}),)) for t in range(turns)
        )
    )
    tool = {"name": "read_file", "description": "Read.", "input_schema": {"type": "object"}}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read every file."}]
    edits = {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 10_000_000},
            }
        ]
    }
    rows = []
    # The session grows past the 200k window the emulator enforces: measure with a 1M one.
    with running(script=script, context_window=1_000_000) as emu:
        conn = connect(emu.base_url)
        for turn in range(1, turns + 1):
            body = {
                "model": MODEL,
                "max_tokens": 1000,
                "messages": messages,
                "tools": [tool],
                "context_management": edits,
                "cache_control": {"type": "ephemeral"},
            }
            reply, elapsed = timed(conn, body)
            rows.append((turn, estimate_request_tokens(body), elapsed))
            call = reply["content"][-1]
            messages.append({"role": "assistant", "content": reply["content"]})
            result = {
                "type": "tool_result",
                "tool_use_id": call["id"],
                "content": tool_output(turn),
            }
            messages.append({"role": "user", "content": [result]})
    return rows


def report(rates: tuple[float, float, float], rows: list[tuple[int, int, float]]) -> None:
    raw, sdk, parallel = rates
    print(f"small prompt: {raw:,.0f} req/s over http.client, {sdk:,.0f} req/s through the SDK,")
    print(f"              {parallel:,.0f} req/s from 4 http.client threads")
    print(f"\n{'turn':>5} {'prompt tokens':>14} {'ms':>8} {'us/token':>9}")
    for turn, tokens, seconds in rows:
        if turn in (1, 2, 5) or turn % 10 == 0:
            print(f"{turn:>5} {tokens:>14,} {seconds * 1e3:>8.2f} {seconds * 1e6 / tokens:>9.3f}")
    total = sum(s for _, _, s in rows)
    early, late = rows[10:20], rows[-10:]
    ratio = _per_token(late) / _per_token(early)
    growth = statistics.median(t for _, t, _ in late) / statistics.median(t for _, t, _ in early)
    print(
        f"\nsession: {len(rows)} turns, {total:.2f} s of requests (best of {REPEATS} each), "
        f"final prompt {rows[-1][1]:,} tokens"
    )
    print(
        f"time per token, last 10 turns vs turns 11-20 (medians): {ratio:.2f}x for a "
        f"{growth:.1f}x larger prompt (1x = linear; quadratic would be ~{growth:.0f}x)"
    )


def _per_token(rows: list[tuple[int, int, float]]) -> float:
    return statistics.median(seconds / tokens for _, tokens, seconds in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--small", type=int, default=500)
    args = parser.parse_args()
    raw, sdk = small_rate(args.small)
    report((raw, sdk, parallel_rate(args.small)), session(args.turns))


if __name__ == "__main__":
    main()
