"""simulate: own settings reproduce an emulator run exactly; other settings as hand-computed."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctl.context.server_model import (
    DEFAULT_CLEARED_RESULT_PLACEHOLDER,
    PRESETS,
    TRIGGER_BASES,
    TriggerBasis,
)
from agentctl.context.tokens import (
    estimate_block_tokens,
    estimate_request_tokens,
    estimate_text_tokens,
)
from agentctl.errors import ConfigError
from agentctl.profile.settings import ClearThinking, ClearToolUses, ContextEditing, Profile
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings, replay_request
from agentctl.sessions.simulate import calibrate, recorded_run, sent_tokens, simulate
from agentctl.sessions.transcript import Transcript, read_transcript


def _with_editing(profile: Profile, **tool_uses: Any) -> Profile:
    tu = dataclasses.replace(profile.context_editing.tool_uses, **tool_uses)
    return dataclasses.replace(profile, context_editing=ContextEditing(tu, ClearThinking()))


@pytest.mark.parametrize(
    ("name", "edit_turns"), [("research", 3), ("batched", 3), ("thinking", 3), ("resumed", 0)]
)
@pytest.mark.dates
def test_own_settings_reproduce_every_recorded_turn_exactly(
    name: str, edit_turns: int, request: pytest.FixtureRequest
) -> None:
    session: Transcript = request.getfixturevalue(name)
    profile = session_profile(session)
    sim = simulate(session, ReplaySettings.from_profile(profile), profile)
    rec = recorded_run(session, profile)
    assert len(sim.turns) == len(session.turns) >= 7
    for recorded, simulated in zip(rec.turns, sim.turns, strict=True):
        assert simulated.usage == recorded.usage, recorded.turn
        assert simulated.applied_edits == recorded.applied_edits, recorded.turn
    edited = sum(1 for t in rec.turns if t.applied_edits)
    assert edited >= edit_turns if edit_turns else edited == 0
    assert sim.cost_usd == rec.cost_usd


@pytest.mark.parametrize("basis", TRIGGER_BASES)
@pytest.mark.dates
def test_batched_settings_replay_as_batches(research: Transcript, basis: TriggerBasis) -> None:
    """The server-strategy run replayed under batched clearing: few moves, and between them
    every turn reads the whole earlier prompt from the cache."""
    tu = ClearToolUses(strategy="batched", trigger=30_000, low_water=15_000, keep=4)
    profile = session_profile(research)
    marker = {"type": "ephemeral", "ttl": "5m"}
    settings = ReplaySettings(ContextEditing(tu, ClearThinking()), marker, PRESETS[basis])
    sim = simulate(research, settings, profile)
    counts = [sum(e.cleared_tool_uses for e in t.applied_edits) for t in sim.turns]
    moves = [i for i in range(1, len(counts)) if counts[i] != counts[i - 1]]
    assert 2 <= len(moves) < sum(c > 0 for c in counts) and counts == sorted(counts)
    for i in range(1, len(sim.turns)):
        if i not in moves:
            assert (
                sim.turns[i].usage.cache_read_input_tokens == sim.turns[i - 1].usage.prompt_tokens
            )
    assert sim.cost_usd is not None and sim.cost_usd < recorded_run(research, profile).cost_usd


@pytest.mark.dates
def test_a_resumed_offline_run_restarts_with_a_cold_cache(resumed: Transcript) -> None:
    assert [t.segment for t in resumed.turns] == [0, 0, 0, 0, 1, 1, 1]
    assert resumed.status == "end_turn"
    reads = [t.usage.cache_read_input_tokens for t in resumed.turns]
    assert reads[3] > 0 and reads[4] == 0 and reads[5] > 0  # turn 5 ran on a new emulator
    sim = simulate(
        resumed, ReplaySettings.from_profile(session_profile(resumed)), session_profile(resumed)
    )
    assert [t.usage.cache_read_input_tokens for t in sim.turns] == reads


@pytest.mark.dates
def test_calibration_factor_is_exactly_one_for_emulator_runs(research: Transcript) -> None:
    cal = calibrate(research, ReplaySettings.from_profile(session_profile(research)))
    assert (cal.factor, cal.max_error, cal.turns) == (1.0, 0.0, len(research.turns))


@pytest.mark.dates
def test_recorded_cost_matches_the_runs_own_total(research: Transcript) -> None:
    rec = recorded_run(research, session_profile(research))
    assert research.result is not None
    assert rec.cost_usd == pytest.approx(research.result["totals"]["cost_usd"], abs=1e-6)


@pytest.mark.dates
def test_no_editing_sends_everything_and_each_turn_reads_the_last(research: Transcript) -> None:
    """Hand-computed: without edits the model sees what was sent, and the cache reads the
    previous turn's whole prompt and writes the difference."""
    own = session_profile(research)
    off = _with_editing(own, enabled=False)
    sim = simulate(research, ReplaySettings.from_profile(off), own)
    rec = recorded_run(research, own)
    sent = [sent_tokens(t) for t in rec.turns]
    assert [t.usage.prompt_tokens for t in sim.turns] == sent
    assert all(t.cleared_input_tokens == 0 and not t.applied_edits for t in sim.turns)
    reads = [t.usage.cache_read_input_tokens for t in sim.turns]
    writes = [t.usage.cache_creation_input_tokens for t in sim.turns]
    assert reads == [0, *sent[:-1]]
    assert writes == [sent[0]] + [b - a for a, b in itertools.pairwise(sent)]


def _hand_clearing(session: Transcript, settings: ReplaySettings, keep: int) -> list[int | None]:
    """Per turn, the tool uses the rules clear (None: no clearing), computed from the messages:
    trigger 60,000 exceeded, non-memory pairs beyond `keep` oldest first, >= 10,000 freed."""
    out: list[int | None] = []
    for turn in session.turns:
        sent = estimate_request_tokens(replay_request(turn, settings))
        results = {
            b["tool_use_id"]: b
            for m in turn.messages
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        }
        uses = [
            b
            for m in turn.messages
            if m["role"] == "assistant"
            for b in m["content"]
            if b.get("type") == "tool_use" and b["name"] != "memory"
        ]
        victims = [results[u["id"]] for u in uses[: max(len(uses) - keep, 0)] if u["id"] in results]
        placeholder = DEFAULT_CLEARED_RESULT_PLACEHOLDER
        freed = sum(
            estimate_block_tokens(r) - estimate_block_tokens({**r, "content": placeholder})
            for r in victims
        )
        out.append(len(victims) if sent > 60_000 and victims and freed >= 10_000 else None)
    return out


@pytest.mark.dates
def test_a_larger_keep_clears_fewer_uses_as_hand_computed(research: Transcript) -> None:
    own = session_profile(research)
    other = _with_editing(own, keep=7)
    settings = ReplaySettings.from_profile(other, PRESETS["unedited"])  # the hand rule
    sim = simulate(research, settings, own)
    got = [t.applied_edits[0].cleared_tool_uses if t.applied_edits else None for t in sim.turns]
    expected = _hand_clearing(research, settings, keep=7)
    assert got == expected
    recorded = [t.applied_edits[0].cleared_tool_uses if t.applied_edits else None
                for t in recorded_run(research, own).turns]  # fmt: skip
    assert got != recorded and sum(1 for g in got if g) >= 3


@pytest.mark.dates
def test_a_trigger_above_the_largest_prompt_never_clears(research: Transcript) -> None:
    own = session_profile(research)
    high = _with_editing(own, trigger=1_000_000)
    off = _with_editing(own, enabled=False)
    a = simulate(research, ReplaySettings.from_profile(high), own)
    b = simulate(research, ReplaySettings.from_profile(off), own)
    assert a.cleared_input_tokens == 0
    assert [t.usage for t in a.turns] == [t.usage for t in b.turns]


@pytest.mark.dates
def test_clear_thinking_on_a_run_without_thinking_is_refused(research: Transcript) -> None:
    own = session_profile(research)
    editing = ContextEditing(ClearToolUses(), ClearThinking(enabled=True, keep=1))
    with pytest.raises(ConfigError, match="requires `thinking`"):
        simulate(
            research,
            ReplaySettings.from_profile(dataclasses.replace(own, context_editing=editing)),
            own,
        )


@pytest.mark.dates
def test_thinking_keep_all_keeps_every_thinking_turn(thinking: Transcript) -> None:
    own = session_profile(thinking)
    keep_all = dataclasses.replace(
        own,
        context_editing=dataclasses.replace(
            own.context_editing, thinking=ClearThinking(True, "all")
        ),
    )
    sim = simulate(thinking, ReplaySettings.from_profile(keep_all), own)
    kinds = {e.type for t in sim.turns for e in t.applied_edits}
    assert kinds == {"clear_tool_uses_20250919"}
    rec = recorded_run(thinking, own)
    assert any(e.type == "clear_thinking_20251015" for t in rec.turns for e in t.applied_edits)


def _scaled_records(path: Path, factor: float) -> list[dict[str, Any]]:
    """The transcript as if a real server had counted `factor` tokens per estimated token
    (and the profile's thresholds had been set in those tokens, so it cleared the same turns)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        if record["type"] == "session":
            record["offline"] = False
            tool_uses = record["profile"]["context_editing"]["tool_uses"]
            for key in ("trigger", "clear_at_least"):
                tool_uses[key] = round(tool_uses[key] * factor)
        usage_holders = []
        if record["type"] == "response":
            usage_holders.append(record["message"]["usage"])
            edits = (record["message"].get("context_management") or {}).get("applied_edits") or []
        elif record["type"] == "event" and record["event"]["event"] == "turn":
            usage_holders.append(record["event"]["usage"])
            edits = record["event"]["applied_edits"]
        else:
            continue
        for usage in usage_holders:
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                usage[key] = round(usage[key] * factor)
        for edit in edits:
            edit["cleared_input_tokens"] = round(edit["cleared_input_tokens"] * factor)
    return records


@pytest.mark.dates
def test_calibration_recovers_a_tokenizer_that_counts_more(
    research: Transcript, transcripts: dict[str, Path]
) -> None:
    path = transcripts["research"]
    scaled = path.with_name("scaled.jsonl")
    scaled.write_text("".join(json.dumps(r) + "\n" for r in _scaled_records(path, 1.25)))
    session = read_transcript(scaled)
    own = session_profile(session)
    cal = calibrate(session, ReplaySettings.from_profile(own))
    assert cal.factor == pytest.approx(1.25, rel=1e-3)
    assert cal.max_error < 0.01
    sim = simulate(session, ReplaySettings.from_profile(own), own, factor=cal.factor)
    rec = recorded_run(session, own)
    for a, b in zip(rec.turns, sim.turns, strict=True):
        assert b.usage.prompt_tokens == pytest.approx(a.usage.prompt_tokens, rel=0.01)
        assert bool(a.applied_edits) == bool(b.applied_edits)


def test_thresholds_enter_the_engine_in_estimator_units() -> None:
    tu = ClearToolUses(trigger=50_000, keep=3, clear_at_least=10_000, low_water=20_000)
    settings = ReplaySettings(ContextEditing(dataclasses.replace(tu, strategy="batched")), None)
    scaled = settings.scaled(1.25).editing.tool_uses
    assert (scaled.trigger, scaled.clear_at_least, scaled.low_water) == (40_000, 8_000, 16_000)
    assert scaled.keep == 3
    by_uses = ReplaySettings(
        ContextEditing(ClearToolUses(trigger_kind="tool_uses", trigger=5)), None
    )
    assert by_uses.scaled(2.0).editing.tool_uses.trigger == 5


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    trigger=st.integers(500, 20_000),
    keep=st.integers(1, 6),
    at_least=st.integers(0, 3_000),
    think=st.sampled_from([1, 2, 3, "all"]),
)
@pytest.mark.dates
def test_any_settings_conserve_the_prompt(
    thinking: Transcript, trigger: int, keep: int, at_least: int, think: int | str
) -> None:
    """Whatever the settings: seen + cleared = what was sent, up to the framing of cleared
    thinking blocks (the server reports a thinking block's text alone); output tokens stay
    as recorded."""
    own = session_profile(thinking)
    tu = dataclasses.replace(
        own.context_editing.tool_uses, trigger=trigger, keep=keep, clear_at_least=at_least
    )
    th = ClearThinking(True, "all" if think == "all" else int(think))
    other = dataclasses.replace(own, context_editing=ContextEditing(tu, th))
    sim = simulate(thinking, ReplaySettings.from_profile(other), own)
    for record, rec, turn in zip(
        thinking.turns, recorded_run(thinking, own).turns, sim.turns, strict=True
    ):
        framing = sum(
            estimate_block_tokens(b) - estimate_text_tokens(b["thinking"])
            for m in record.messages
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "thinking"
        )
        assert abs(sent_tokens(turn) - sent_tokens(rec)) <= framing
        assert turn.usage.output_tokens == rec.usage.output_tokens
        assert sum(e.cleared_input_tokens for e in turn.applied_edits) == turn.cleared_input_tokens


@pytest.mark.parametrize("name", ["research", "thinking", "resumed"])
@pytest.mark.dates
def test_replayed_requests_keep_the_recorded_breakpoints(
    name: str, request: pytest.FixtureRequest
) -> None:
    """Under the run's own profile a replayed body carries the cache markers the recorded
    request carried (test_cli_run checks replays against what the emulator received)."""
    session: Transcript = request.getfixturevalue(name)
    settings = ReplaySettings.from_profile(session_profile(session))
    for turn in session.turns:
        body = replay_request(turn, settings)
        for key in ("tools", "system"):
            assert body.get(key) == turn.body.get(key)
        assert json.dumps(body["messages"]).count('"cache_control"') == 1
    assert session.history == read_transcript(session.path).history
    assert "cache_control" not in json.dumps(session.history)  # markers went on copies
