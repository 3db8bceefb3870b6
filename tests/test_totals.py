"""`Totals` is the sum of turns: `+` adds every field, `Totals.of` sums turns as the loop
does, and the figures shown elsewhere (a `sessions list` row, `stats`, `sessions show`, a
batch's summary) are that same sum, read back, never re-added by hand."""

from __future__ import annotations

import functools
import math
from dataclasses import fields, replace
from pathlib import Path

import pytest

import agentctl
from agentctl.batch.summary import summarize as summarize_batch
from agentctl.home import sessions_dir
from agentctl.render.table import summary_rows
from agentctl.sessions.catalog import summarize
from agentctl.sessions.index import index_path, listing
from agentctl.sessions.report import recorded_result, stats_of
from agentctl.sessions.transcript import load_session
from agentctl.testing import ScriptedClient, reply, tool_use
from agentctl.types import AppliedEdit, ToolCall, Totals, Turn, Usage

SUMS = [f.name for f in fields(Totals) if f.name != "usage"]


def _distinct(start: int) -> Totals:
    """A different value in every field (and every usage count)."""
    usage = Usage(*(start + i for i, _ in enumerate(fields(Usage))))
    return Totals(usage, *(start + 100 + i for i, _ in enumerate(SUMS)))


@pytest.mark.parametrize("name", SUMS)
def test_a_sum_adds_each_field(name: str) -> None:
    a, b = _distinct(1), _distinct(1000)
    assert getattr(a + b, name) == getattr(a, name) + getattr(b, name)
    assert (a + b).usage == a.usage + b.usage


def _edit(tokens: int, uses: int, thinking: int = 0) -> AppliedEdit:
    return AppliedEdit("clear_tool_uses_20250919", tokens, uses, thinking)


TURNS = (
    Turn(1, "tool_use", Usage(100, 10, 50, 0), tool_calls=(ToolCall("a", "x", {}, True, 0, True),)),
    Turn(2, "tool_use", Usage(80, 20, 0, 150), (_edit(700, 2), _edit(30, 0, 1))),
    Turn(3, "end_turn", Usage(90, 5, 10, 140), (_edit(900, 3),)),
)


def test_totals_of_turns_is_the_loops_running_sum() -> None:
    costs = (0.25, 0.5, 0.125)
    running = functools.reduce(
        lambda totals, pair: totals.add_turn(*pair), zip(TURNS, costs, strict=True), Totals()
    )
    summed = Totals.of(TURNS, costs)
    assert summed == running
    assert (summed.cleared_input_tokens, summed.cleared_tool_uses) == (1630, 5)
    assert (summed.cleared_thinking_turns, summed.tool_denials, summed.cost_usd) == (1, 1, 0.875)
    assert summed.usage == TURNS[0].usage + TURNS[1].usage + TURNS[2].usage


def test_a_turn_without_a_price_makes_the_cost_unknown() -> None:
    totals = Totals.of(TURNS, (0.25, None, 0.125))
    assert math.isnan(totals.cost_usd) and totals.cost_json is None
    assert totals.to_json()["cost_usd"] is None
    assert Totals.of((), ()).cost_json == 0.0


def _script() -> ScriptedClient:
    """Three turns with tool calls, cache use and clearings."""
    view = tool_use("memory", {"command": "view", "path": "/memories"})
    edit = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2,
            "cleared_input_tokens": 4_000}  # fmt: skip
    return ScriptedClient(
        reply(view, stop="tool_use", usage=Usage(3_000, 40, 2_000, 0)),
        reply(view, stop="tool_use", usage=Usage(500, 60, 300, 5_000), edits=(edit,)),
        reply(usage=Usage(200, 90, 100, 5_300), edits=(edit,)),
    )


def _run(tmp_path: Path, model: str) -> agentctl.RunResult:
    profile = tmp_path / "p.toml"
    profile.write_text(f'model = "{model}"\n[memory]\nroot = "{tmp_path / "mem"}"\n')
    return agentctl.run("Look at memory.", profile=profile, client=_script())


def test_every_recorded_figure_is_the_runs_own_sum(tmp_path: Path) -> None:
    result = _run(tmp_path, "claude-sonnet-5")
    totals = result.totals
    assert replace(totals, cost_usd=0.0) == Totals.of(result.turns, [0.0] * 3)
    assert totals.cleared_input_tokens == 8_000 and totals.cost_usd > 0
    path = sessions_dir() / f"{result.session_id}.jsonl"
    assert listing()[0].totals == totals  # the row the writer put in the index
    index_path().unlink()
    assert listing()[0].totals == totals == summarize(path).totals  # ... and the file's
    session = load_session(result.session_id)
    shown, _ = recorded_result(session)
    assert shown.totals == totals
    stats = stats_of(session).to_json()["totals"]
    assert {k: stats[k] for k in ("input_tokens", "cache_read_input_tokens")} == {
        "input_tokens": totals.usage.input_tokens,
        "cache_read_input_tokens": totals.usage.cache_read_input_tokens,
    }
    assert (stats["cleared_input_tokens"], stats["cost_usd"]) == (8_000, totals.cost_json)
    rows = dict(summary_rows(shown, list(result.turns)))
    assert rows["spared by editing"] == (
        "8,000 prompt tokens, summed over 2 turns (at most 4,000 in one)"
    )
    assert rows["cleared"] == "2 distinct tool results"


def test_an_unpriced_sessions_row_reads_the_same_from_the_index_and_the_file(
    tmp_path: Path,
) -> None:
    result = _run(tmp_path, "claude-unpriced-9")
    assert math.isnan(result.totals.cost_usd)
    path = sessions_dir() / f"{result.session_id}.jsonl"
    written = listing()
    index_path().unlink()
    assert written == listing() == [summarize(path)]
    row = written[0]
    assert row.cost_usd is None and row.to_json()["cost_usd"] is None
    assert row.totals.usage == result.totals.usage


def test_a_batch_costs_what_its_priced_tasks_cost() -> None:
    priced = Totals(Usage(10, 1), cost_usd=0.5)
    lines = [
        {"id": "a", "status": "ok", "turns": 2, "totals": priced.to_json(), "cost_usd": 0.5},
        {"id": "b", "status": "ok", "turns": 1, "totals": Totals(cost_usd=math.nan).to_json(),
         "cost_usd": None},
    ]  # fmt: skip
    summary = summarize_batch(lines)
    assert summary.cost_usd == 0.5 and math.isnan(summary.totals.cost_usd)
    assert summary.to_json()["cost_usd"] == 0.5 and summary.totals.usage == priced.usage
