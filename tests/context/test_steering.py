"""Batched clearing's kept walk (`Steering`): each request of a live run walks only what was
added, and every request's edit is the one a walk from the first message gives."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.context.batching import Marks, Steering, batched_edit
from agentctl.context.server_model import DEFAULT_SERVER_MODEL
from agentctl.profile.settings import ClearToolUses

EDIT = ClearToolUses(strategy="batched", trigger=5_500, low_water=3_100, keep=1).edit()
MARKS = Marks(5_500, 3_100, 1, 0, view=True)


def grow(rng: random.Random, turns: int) -> list[list[dict[str, Any]]]:
    """The successive requests' histories of one run (each extends the one before)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    out = [list(messages)]
    for i in range(turns):
        uses = [
            {"type": "tool_use", "id": f"t{i}.{j}", "name": rng.choice(["read", "grep"]),
             "input": {"path": "x" * rng.randrange(1, 400)}}
            for j in range(rng.randrange(1, 3))
        ]  # fmt: skip
        blocks: list[dict[str, Any]] = [*uses]
        if rng.random() < 0.05:
            blocks.insert(0, {"type": "compaction", "content": "summary " * 50})
        messages.append({"role": "assistant", "content": blocks})
        if rng.random() < 0.3:  # a request that ends on the tool uses (a paused turn)
            out.append(list(messages))
        results = [
            {
                "type": "tool_result",
                "tool_use_id": u["id"],
                "content": "word " * rng.randrange(5, 900),
            }
            for u in uses
        ]
        messages.append({"role": "user", "content": results})
        out.append(list(messages))
    return out


def measured_for(rng: random.Random, history: list[dict[str, Any]], into: dict[int, int]) -> None:
    """A reported prompt size for the request just sent, sometimes (as responses give)."""
    if rng.random() < 0.7:
        into[len(history)] = rng.randrange(1_000, 9_000)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), unedited=st.booleans())
def test_the_kept_walk_gives_the_fresh_walks_edit_at_every_request(
    seed: int, unedited: bool
) -> None:
    rng = random.Random(seed)
    steering = Steering()
    measured: dict[int, int] = {}
    for history in grow(rng, 40):
        body = {"model": "claude-sonnet-5", "max_tokens": 100, "messages": history}
        kept = batched_edit(EDIT, MARKS, body, DEFAULT_SERVER_MODEL, measured, unedited, steering)
        fresh = batched_edit(EDIT, MARKS, body, DEFAULT_SERVER_MODEL, measured, unedited)
        assert kept == fresh
        measured_for(rng, history, measured)


def test_the_boundary_moves_with_the_kept_walk_as_without() -> None:
    """Not vacuous: the kept walk's edits move the boundary several times."""
    rng = random.Random(3)
    steering = Steering()
    triggers = set()
    for history in grow(rng, 60):
        body = {"model": "claude-sonnet-5", "max_tokens": 100, "messages": history}
        edit = batched_edit(EDIT, MARKS, body, DEFAULT_SERVER_MODEL, None, False, steering)
        assert edit == batched_edit(EDIT, MARKS, body)
        triggers.add(edit["trigger"]["value"] if edit["trigger"]["type"] == "tool_uses" else 0)
    assert len(triggers) > 3


def test_a_request_walks_only_the_messages_added_since_the_last() -> None:
    """The per-request cost does not grow with the history: each request walks the two
    messages a turn adds; a fresh Steering walks them all."""
    steering = Steering()
    stepped = []
    for history in grow(random.Random(5), 80):
        body = {"model": "claude-sonnet-5", "max_tokens": 100, "messages": history}
        batched_edit(EDIT, MARKS, body, DEFAULT_SERVER_MODEL, None, False, steering)
        stepped.append(steering.stepped)
    assert stepped[0] == 1 and max(stepped[1:]) == 2
    fresh = Steering()
    batched_edit(EDIT, MARKS, body, DEFAULT_SERVER_MODEL, None, False, fresh)
    assert fresh.stepped == len(history) == 161


def test_another_history_starts_the_walk_again() -> None:
    steering = Steering()
    histories = grow(random.Random(9), 30)
    other = grow(random.Random(10), 30)
    for history in (histories[-1], other[-1], histories[-1][:11]):
        body = {"model": "claude-sonnet-5", "max_tokens": 100, "messages": history}
        assert batched_edit(
            EDIT, MARKS, body, DEFAULT_SERVER_MODEL, None, False, steering
        ) == batched_edit(EDIT, MARKS, body)
