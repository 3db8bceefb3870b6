"""Incremental replay (`context.memo`) gives exactly the figures of a replay from scratch.

Every turn of each recorded session (clearing on the server, batched clearing, thinking with
both edits, a resumed run) is replayed under every setting `tune` would try, once with the
replay memo (what `simulate` and `tune` use) and once computing everything afresh; the
per-turn usage, applied edits and costs must be identical.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentctl.context.engine import apply_context_edits
from agentctl.context.memo import active, remembered, replay_memo
from agentctl.profile.settings import Profile
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import Simulation, _simulate, simulate
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import (
    candidates,
    default_grid,
    descent_grid,
    recorded_setting,
    with_setting,
)


def _settings(session: Transcript) -> list[tuple[Profile, ReplaySettings]]:
    profile = session_profile(session)
    recorded = profile.context_editing
    thinking = recorded.thinking.enabled
    grid = {
        **default_grid(session, recorded, thinking),
        **descent_grid(session, recorded, thinking),
    }
    if not thinking:
        grid.pop("thinking_keep", None)
    grid["keep"] = (1, 3)  # the full cross product of every key is large: two keeps suffice
    out = []
    for setting in candidates(recorded_setting(profile), grid)[::3]:
        other = with_setting(profile, setting)
        out.append((other, ReplaySettings.from_profile(other)))
    return out


def _figures(sim: Simulation) -> list[Any]:
    return [(t.usage, t.applied_edits, t.cleared_input_tokens) for t in sim.turns] + [sim.costs]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["research", "batched", "thinking", "resumed"])
def test_memo_replays_match_fresh_replays(name: str, request: pytest.FixtureRequest) -> None:
    session: Transcript = request.getfixturevalue(name)
    settings = _settings(session)
    assert len(settings) > 5
    with replay_memo():  # one memo across every candidate, as tune shares it
        remembered_runs = [_figures(simulate(session, s, p)) for p, s in settings]
    assert not active()
    fresh_runs = [_figures(_simulate(session, s, p, 1.0, "simulated")) for p, s in settings]
    assert remembered_runs == fresh_runs
    # the sweep is not trivial: some settings clear and they differ from each other
    assert len({repr(r) for r in fresh_runs}) > 2


def test_memo_is_off_outside_a_replay_and_keyed_by_identity() -> None:
    calls: list[int] = []

    def count() -> int:
        calls.append(1)
        return 1

    block = {"type": "text", "text": "x"}
    twin = dict(block)
    assert remembered("t", block, count) == 1
    assert remembered("t", block, count) == 1
    assert len(calls) == 2  # outside a scope nothing is remembered
    with replay_memo():
        assert active()
        remembered("t", block, count)
        remembered("t", block, count)
        remembered("t", twin, count)  # an equal object is another key
    assert len(calls) == 4


def test_edits_never_modify_the_request_they_are_given() -> None:
    big = "word " * 400
    messages: list[dict[str, Any]] = []
    for i in range(4):
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, use],
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": big}
        messages.append({"role": "user", "content": [result]})
    request = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": messages}
    before = repr(request)
    edits: list[dict[str, Any]] = [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100},
         "keep": {"type": "tool_uses", "value": 1}, "clear_tool_inputs": True},
    ]  # fmt: skip
    fresh = apply_context_edits(request, edits)
    with replay_memo():
        first = apply_context_edits(request, edits)
        again = apply_context_edits(request, edits)
    assert repr(request) == before
    assert first.request == fresh.request and first.applied_edits == fresh.applied_edits
    assert [c["cleared_tool_uses"] for c in first.applied_edits[1:]] == [3]
    # in a replay the same edit of the same history gives the same objects (computed once)
    assert all(
        a is b for a, b in zip(first.request["messages"], again.request["messages"], strict=True)
    )
