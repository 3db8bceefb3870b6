"""The 5-minute / 1-hour split of cache writes, end to end: the API's `usage.cache_creation`
reaches the NDJSON turn events, the transcript, the run's summary and `stats`, and a
transcript written before the split was kept still loads, priced by its TTL as before."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.report import stats_of
from agentctl.sessions.transcript import load_session
from agentctl.types import Usage

from .conftest import PLAIN_PROFILE, _thinking_task

pytestmark = pytest.mark.slow  # whole offline runs

ONE_HOUR = PLAIN_PROFILE + '[cache]\nttl = "1h"\n'


def _run(tmp_path: Path, home: Path) -> tuple[str, list[dict[str, Any]], str]:
    """An offline run whose cache writes have the 1-hour TTL: its session id, its NDJSON
    turn events, and the plain summary it printed."""
    profile = tmp_path / "hour.toml"
    profile.write_text(ONE_HOUR)
    task = _thinking_task(tmp_path / "task")
    env = {"AGENTCTL_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "100"}
    args = ["run", str(task), "--profile", str(profile), "--offline", "--json"]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in events if e["event"] == "turn"]
    (path,) = (home / "sessions").glob("*.jsonl")
    return path.stem, turns, result.stderr


def test_one_hour_writes_reach_ndjson_transcript_summary_and_stats(
    tmp_path: Path, _isolated_env: Path
) -> None:
    session_id, turns, summary = _run(tmp_path, _isolated_env)
    splits = [t["usage"]["cache_creation"] for t in turns]
    writes = [t["usage"]["cache_creation_input_tokens"] for t in turns]
    assert sum(writes) > 0
    assert [s["ephemeral_1h_input_tokens"] for s in splits] == writes  # every write is 1 h
    assert all(s["ephemeral_5m_input_tokens"] == 0 for s in splits)
    session = load_session(session_id)
    assert [t.usage.ephemeral_1h_input_tokens for t in session.turns] == writes
    hour = f"{sum(writes):,}"
    assert f"cache_write_5m=0 cache_write_1h={hour} " in summary
    data = json.loads(CliRunner().invoke(app, ["stats", session_id, "--json"]).stdout)
    assert data["totals"]["cache_creation"] == {
        "ephemeral_5m_input_tokens": 0,
        "ephemeral_1h_input_tokens": sum(writes),
    }
    shown = CliRunner().invoke(app, ["stats", session_id], env={"COLUMNS": "100"}).stdout
    assert f"cache write by TTL   5m 0, 1h {hour}" in shown


def test_a_transcript_without_the_split_loads_and_is_priced_by_its_ttl(
    tmp_path: Path, _isolated_env: Path
) -> None:
    session_id, _, _ = _run(tmp_path, _isolated_env)
    with_split = stats_of(load_session(session_id)).recorded
    path = _isolated_env / "sessions" / f"{session_id}.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    # Turn events without the split take it from their responses (the API's own object).
    _write(path, [_without_split(r, "event") for r in records])
    assert stats_of(load_session(session_id)).recorded == with_split
    _write(path, [_without_split(_without_split(r, "event"), "message") for r in records])
    session = load_session(session_id)
    written = [t.usage for t in session.turns if t.usage.cache_creation_input_tokens]
    assert written and not any(u.cache_split_known for u in written)
    assert session_profile(session).cache.ttl == "1h"
    # Without the split the profile's TTL decides: every write at the 1-hour rate, as the
    # split said; at the 5-minute rate the writes would cost less.
    without = stats_of(session).recorded
    assert without.cost_usd == pytest.approx(with_split.cost_usd)
    pricing = session_profile(session).pricing(session.model)
    five = dataclasses.replace(pricing, cache_ttl="5m")
    assert sum(five.cost(u) for u in written) < sum(pricing.cost(u) for u in written)


def _without_split(record: dict[str, Any], key: str) -> dict[str, Any]:
    """The record without `cache_creation` in the usage under `key`: "event" as an agentctl
    before the split wrote its turn events, "message" as a server that does not report it."""
    usage = (record.get(key) or {}).get("usage")
    if isinstance(usage, dict):
        usage = {k: v for k, v in usage.items() if k != "cache_creation"}
        return {**record, key: {**record[key], "usage": usage}}
    return record


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def test_usage_round_trips_the_split_and_ignores_one_that_does_not_add_up() -> None:
    usage = Usage(10, 5, 300, 40, ephemeral_5m_input_tokens=100, ephemeral_1h_input_tokens=200)
    assert Usage.from_json(usage.to_json()) == usage
    assert usage.cache_split_known and (usage + usage).ephemeral_1h_input_tokens == 400
    # In a stream with compaction the top level keeps the summarising call's split.
    raw = {"cache_creation_input_tokens": 0, "cache_creation": {"ephemeral_5m_input_tokens": 7}}
    assert Usage.from_json(raw) == Usage()
    assert not Usage(cache_creation_input_tokens=9).cache_split_known
