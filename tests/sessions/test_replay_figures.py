"""Replays steer batched clearing on the recorded prompt sizes (`replay.recorded_sizes`).

An offline run's recorded figures are the estimator's (the emulator counts with it), so
replaying it with them or without them gives the same requests under any settings: the
figures change nothing offline. Where they differ from the estimate, they decide.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import agentctl
from agentctl.profile.settings import ClearToolUses
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings, recorded_sizes, replay_request
from agentctl.sessions.transcript import Transcript, TurnRecord, load_session

PROFILE = """
model = "claude-sonnet-5"
max_turns = 40
[context_editing.tool_uses]
strategy = "batched"
trigger = 4000
low_water = 2000
keep = 1
clear_at_least = 0
exclude_tools = []
[tools]
memory = false
workspace = true
"""
# An offline run of ~20 turns takes seconds: every test here shares it.
pytestmark = pytest.mark.slow
TASK = "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Transcript:
    home = tmp_path_factory.mktemp("figures")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTCTL_HOME", str(home / "home"))
        folder = home / "ws"
        folder.mkdir()
        for i in range(8):
            lines = [f"entry {n}: shard replica queue worker {i}" for n in range(60)]
            lines.insert(30, f"FINDING {i}: item {i * 7}")
            (folder / f"log-{i}.txt").write_text("\n".join(lines) + "\n")
        (home / "p.toml").write_text(PROFILE)
        result = agentctl.run(TASK, profile=home / "p.toml", offline=True, workspace=folder)
        return load_session(result.session_id)


def settings_of(session: Transcript, **tool_uses: int) -> ReplaySettings:
    own = ReplaySettings.from_profile(session_profile(session))
    tu: ClearToolUses = dataclasses.replace(own.editing.tool_uses, **tool_uses)
    return dataclasses.replace(own, editing=dataclasses.replace(own.editing, tool_uses=tu))


def edits(turns: tuple[TurnRecord, ...], settings: ReplaySettings, figures: bool) -> list[object]:
    return [
        replay_request(t, settings, recorded_sizes(turns[:i]) if figures else None).get(
            "context_management"
        )
        for i, t in enumerate(turns)
    ]


def moved(context_management: Any) -> bool:
    """The request holds a clearing boundary (batched: a `tool_uses` trigger)."""
    return bool(context_management["edits"][0]["trigger"]["type"] == "tool_uses")


@pytest.mark.parametrize(
    "changes", [{}, {"trigger": 3000, "low_water": 1000}, {"trigger": 6000, "keep": 3}]
)
def test_an_offline_run_replays_the_same_with_or_without_its_figures(
    session: Transcript, changes: dict[str, int]
) -> None:
    settings = settings_of(session, **changes)
    with_figures = edits(session.turns, settings, figures=True)
    assert with_figures == edits(session.turns, settings, figures=False)
    assert any(
        e and moved(e) for e in with_figures
    )  # the settings clear during the replay: the figures had a say
    if not changes:  # the recorded settings: what the run sent
        assert with_figures == [t.body.get("context_management") for t in session.turns]


def test_figures_that_differ_from_the_estimate_decide(session: Transcript) -> None:
    settings = settings_of(session)
    turns = session.turns
    sent = edits(turns, settings, figures=True)
    index = next(i for i, e in enumerate(sent) if e and moved(e))
    before = replay_request(turns[index - 1], settings, recorded_sizes(turns[: index - 1]))
    assert before["context_management"]["edits"][0]["trigger"]["type"] == "input_tokens"
    # A server that had reported twice the size for the turns before: it clears a turn earlier.
    doubled = {n: 2 * v for n, v in recorded_sizes(turns[: index - 1]).items()}
    earlier = replay_request(turns[index - 1], settings, doubled)
    assert earlier["context_management"]["edits"][0]["trigger"]["type"] == "tool_uses"
