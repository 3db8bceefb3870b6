"""Replay recorded requests against a running emulator over real HTTP (stdlib only), in an
order that honours each recording's `replay_after`, and compare with `fidelity`."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from agentctl.emulator.fidelity import Exchange, compare, parse_sse, skip_reason

Json = dict[str, Any]
TIMEOUT_S = 120.0


def replay_order(names: Sequence[str], recordings: Sequence[Json]) -> list[int]:
    """Indexes in the order given, except that a recording naming another of the files in
    `replay_after` (by file stem) comes after it."""
    stems = [n.rsplit("/", 1)[-1].removesuffix(".json") for n in names]
    done: list[int] = []

    def place(i: int, seen: frozenset[int]) -> None:
        if i in done or i in seen:
            return
        after = recordings[i].get("replay_after")
        if isinstance(after, str) and after in stems:
            place(stems.index(after), seen | {i})
        done.append(i)

    for i in range(len(names)):
        place(i, frozenset())
    return done


def send(base_url: str, recording: Json) -> tuple[int, Any, list[tuple[str, Json]] | None]:
    """POST the recorded request as sent (its betas in `anthropic-beta`): status, JSON body
    (None for a stream), and a stream's events."""
    headers = {
        "content-type": "application/json",
        "x-api-key": "replay",
        "anthropic-version": "2023-06-01",
    }
    betas = recording.get("betas") or []
    if betas:
        headers["anthropic-beta"] = ",".join(str(b) for b in betas)
    data = json.dumps(recording["request"]).encode()
    url = base_url.rstrip("/") + str(recording["endpoint"])
    call = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(call, timeout=TIMEOUT_S) as answer:
            status, text = answer.status, answer.read().decode()
            streamed = answer.headers.get_content_type() == "text/event-stream"
    except urllib.error.HTTPError as err:
        status, text, streamed = err.code, err.read().decode(), False
    if streamed:
        return status, None, parse_sse(text)
    return status, json.loads(text), None


def check_all(base_url: str, names: Sequence[str], recordings: Sequence[Json]) -> list[Exchange]:
    """Replay every complete recording against one emulator; one Exchange per file, in the
    order given."""
    results = {i: Exchange(names[i]) for i in range(len(names))}
    for i in replay_order(names, recordings):
        reason = skip_reason(recordings[i])
        if reason:
            results[i].skipped = reason
            continue
        status, body, events = send(base_url, recordings[i])
        results[i].findings = compare(recordings[i], status, body, events)
    return [results[i] for i in range(len(names))]
