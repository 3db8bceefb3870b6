"""Each usage count is defined once, in `agentctl.types.Usage` (a field and where the API puts
it); everything else that names the counts derives from that definition. These tests run over
`fields(Usage)`, so a count added there is checked by each of them without another edit, and
the last one fails if a hand-written list of counts comes back."""

from __future__ import annotations

import ast
import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.agent.wire import ResponseRejected, check_usage
from agentctl.batch.summary import summarize
from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import EventRecord, MalformedRecord, TranscriptWriter
from agentctl.types import (
    CACHE_CREATION,
    OURS,
    TOP,
    USAGE_OBJECTS,
    USAGE_TOKENS,
    Totals,
    Turn,
    Usage,
    usage_fields,
)

COUNTS = [f.name for f in fields(Usage)]
API_COUNTS = [f.name for f in fields(Usage) if f.metadata["in"] != OURS]


def _where(name: str) -> str:
    return str(next(f.metadata["in"] for f in fields(Usage) if f.name == name))


def _distinct() -> Usage:
    """A different value in every count (the cache writes add up to their TTL split)."""
    usage = Usage(**{name: 10 * (i + 1) for i, name in enumerate(COUNTS)})
    split = sum(getattr(usage, name) for name in usage_fields(CACHE_CREATION))
    return replace(usage, cache_creation_input_tokens=split)


def _at(data: dict[str, Any], name: str) -> Any:
    where = _where(name)
    return data[name] if where in (TOP, OURS) else data[where][name]


def _set(data: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    where = _where(name)
    if where in (TOP, OURS):
        return {**data, name: value}
    return {**data, where: {**data[where], name: value}}


def test_every_count_is_in_exactly_one_derived_list() -> None:
    derived = list(USAGE_TOKENS) + [n for obj in USAGE_OBJECTS for n in usage_fields(obj)]
    assert sorted(derived + list(usage_fields(OURS))) == sorted(COUNTS)
    assert set(USAGE_OBJECTS) == {_where(n) for n in API_COUNTS} - {TOP}


@pytest.mark.parametrize("name", COUNTS)
def test_to_json_puts_each_count_where_the_api_does_and_from_json_reads_it_back(name: str) -> None:
    usage = _distinct()
    data = usage.to_json()
    assert _at(data, name) == getattr(usage, name)
    assert Usage.from_json(data) == usage
    # The NDJSON result line and the transcript's turn event carry it too.
    totals = Totals(usage=usage)
    assert Totals.from_json(totals.to_json()).usage == usage
    turn = Turn(1, "end_turn", usage)
    assert Turn.from_json(turn.to_json()).usage == usage


@pytest.mark.parametrize("name", COUNTS)
def test_sum_adds_each_count(name: str) -> None:
    usage = _distinct()
    assert getattr(usage + usage, name) == 2 * getattr(usage, name)


@pytest.mark.parametrize("name", API_COUNTS)
def test_a_response_check_covers_each_count(name: str) -> None:
    check_usage(_distinct().to_json())  # the valid shape passes
    with pytest.raises(ResponseRejected, match=name):
        check_usage(_set(_distinct().to_json(), name, -1))


@pytest.mark.parametrize("name", API_COUNTS)
def test_a_transcript_check_covers_each_count(name: str) -> None:
    event = {"event": "turn", "turn": 1, "stop_reason": "end_turn"}
    EventRecord.from_fields({"event": {**event, "usage": _distinct().to_json()}})
    usage = _set(_distinct().to_json(), name, "many")
    with pytest.raises(MalformedRecord, match=_where(name) or "usage"):
        EventRecord.from_fields({"event": {**event, "usage": usage}})


@pytest.mark.dates
def test_a_server_tool_count_that_is_not_a_number_is_one_line_not_a_traceback() -> None:
    # The transcript check once covered `cache_creation` only: this one reached int() and
    # `sessions show` ended in a ValueError traceback (exit 1).
    path = sessions_dir() / "20260101-000000-aaaaaa.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write("session", session=path.stem, task="t", model="m")
    usage = _set(_distinct().to_json(), "web_search_requests", "many")
    turn = {"event": "turn", "turn": 1, "stop_reason": "end_turn", "usage": usage}
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"v": 1, "type": "event", "event": turn}) + "\n")
    result = CliRunner().invoke(app, ["sessions", "show", path.stem])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"agentctl: session {path}: line 2: "
        "`event.usage.server_tool_use.web_search_requests` must be an integer"
    ]


def test_the_batch_end_line_sums_each_token_count() -> None:
    usage = _distinct()
    line = {"id": "t", "status": "ok", "turns": 1, "totals": Totals(usage=usage).to_json()}
    summary = summarize([line, line]).to_json()
    assert {name: summary[name] for name in USAGE_TOKENS} == {
        name: 2 * getattr(usage, name) for name in USAGE_TOKENS
    }
    assert summary["cache_hit_ratio"] == (usage + usage).cache_hit_ratio


def _hand_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Tuple, list and set literals in `path` naming more than two usage counts."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            names = [name for name in names if name in COUNTS]
            if len(names) > 2:
                found.append((node.lineno, names))
    return found


def test_no_module_spells_the_counts_out_by_hand() -> None:
    """The client derives its lists from `Usage`; the emulator (the server side, which states
    the API's behaviour on its own) is left out."""
    package = Path(__file__).resolve().parents[1] / "agentctl"
    modules = [p for p in package.rglob("*.py") if "emulator" not in p.relative_to(package).parts]
    found = {str(p.relative_to(package)): _hand_lists(p) for p in modules}
    assert {path: lists for path, lists in found.items() if lists} == {}


def test_the_scan_finds_a_hand_written_list(tmp_path: Path) -> None:
    module = tmp_path / "old.py"
    keys = ["input_tokens", "output_tokens", "cache_read_input_tokens"]
    module.write_text(f"KEYS = {tuple(keys)!r}\n")
    assert _hand_lists(module) == [(1, keys)]
