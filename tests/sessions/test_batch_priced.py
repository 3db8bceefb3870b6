"""How a transcript says its turns were billed (`pricing` in the header and resume records),
and the one rule that prices a recorded turn by it (`catalog.priced`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.sessions.catalog import session_profile, summarize
from agentctl.sessions.report import stats_of
from agentctl.sessions.simulate import recorded_run
from agentctl.sessions.transcript import Transcript, load_session


def _edit_header(path: Path, **changes: Any) -> None:
    """Rewrite the header record: a value of None drops the key (an older transcript)."""
    first, *rest = path.read_text().splitlines()
    header = json.loads(first)
    for key, value in changes.items():
        header.pop(key) if value is None else header.update({key: value})
    path.write_text("\n".join([json.dumps(header), *rest]) + "\n")


def test_new_transcripts_record_list_pricing(research: Transcript, resumed: Transcript) -> None:
    header = json.loads(research.path.read_text().splitlines()[0])
    assert header["pricing"] == "list" and research.pricing == "list"
    lines = [json.loads(line) for line in resumed.path.read_text().splitlines()]
    (resume,) = [line for line in lines if line["type"] == "resume"]
    assert resume["pricing"] == "list"  # `run --resume` goes through the Messages API


@pytest.mark.dates
def test_a_batch_header_halves_every_figure_exactly(research: Transcript) -> None:
    before = stats_of(research)
    _edit_header(research.path, pricing="batch")
    after = stats_of(load_session(research.id))
    assert after.session.pricing == "batch"
    assert before.recorded.cost_usd and after.recorded.cost_usd == before.recorded.cost_usd / 2
    assert [t.usage for t in after.recorded.turns] == [t.usage for t in before.recorded.turns]
    assert len(before.balances) == len(after.balances) > 0
    for was, now in zip(before.balances, after.balances, strict=True):
        assert (now.premium_usd, now.saving_per_turn_usd) == (
            was.premium_usd / 2, was.saving_per_turn_usd / 2,
        )  # fmt: skip
        assert now.break_even_turn == was.break_even_turn
    row = summarize(research.path)
    assert row is not None and row.pricing == "batch"
    assert row.cost_usd == before.recorded.cost_usd / 2


@pytest.mark.dates
def test_a_header_without_pricing_reads_as_list(research: Transcript) -> None:
    cost = recorded_run(research, session_profile(research)).cost_usd
    _edit_header(research.path, pricing=None)
    old = load_session(research.id)
    assert old.header.pricing == "list" and old.pricing == "list"
    assert recorded_run(old, session_profile(old)).cost_usd == cost


def test_an_unknown_pricing_names_the_file_and_key(research: Transcript) -> None:
    _edit_header(research.path, pricing="half")
    done = CliRunner().invoke(app, ["stats", research.id])
    assert done.exit_code == 2
    assert str(research.path) in done.stderr
    assert '`pricing` must be "list" or "batch"' in done.stderr


@pytest.mark.dates
def test_a_resumed_batch_session_is_batch_then_list(resumed: Transcript) -> None:
    """The first run's turns at the header's batch price; the resume's at its own (list)."""
    listed = recorded_run(resumed, session_profile(resumed))
    _edit_header(resumed.path, pricing="batch")
    mixed = load_session(resumed.id)
    priced = recorded_run(mixed, session_profile(mixed))
    assert mixed.pricing == "mixed"
    first = [t.segment == 0 for t in mixed.turns]
    assert any(first) and not all(first)
    for is_first, was, now in zip(first, listed.costs, priced.costs, strict=True):
        assert was and now == (was / 2 if is_first else was)
    row = summarize(resumed.path)
    assert row is not None and row.pricing == "mixed"
    assert row.cost_usd == pytest.approx(priced.cost_usd, rel=1e-12)
