"""Batched clearing end to end: a run offline through the emulator, under both server models."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentctl
from agentctl.context.server_model import TRIGGER_BASES, TriggerBasis
from agentctl.types import Event, TurnEvent

PROFILE = """
model = "claude-sonnet-5"
max_turns = 80
[context_editing]
server_model = "{basis}"
[context_editing.tool_uses]
strategy = "{strategy}"
trigger = 14000
low_water = {low}
keep = 2
clear_at_least = 0
exclude_tools = []
[tools]
memory = true
workspace = true
"""
TASK = "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"


def workspace(folder: Path) -> Path:
    folder.mkdir()
    for i in range(14):
        lines = [f"entry {n}: shard replica queue worker batch lease {i}" for n in range(120)]
        lines.insert(60, f"FINDING {i:02d}: item {i * 7} confirmed")
        (folder / f"log-{i:02d}.txt").write_text("\n".join(lines) + "\n")
    return folder


def run(tmp_path: Path, basis: str, strategy: str = "batched") -> list[TurnEvent]:
    low = 6000 if strategy == "batched" else 0
    profile = tmp_path / f"{strategy}-{basis}.toml"
    profile.write_text(PROFILE.format(basis=basis, strategy=strategy, low=low))
    events: list[Event] = []
    result = agentctl.run(
        TASK, profile=profile, offline=True, workspace=workspace(tmp_path / f"ws-{profile.stem}"),
        memory_root=tmp_path / f"mem-{profile.stem}", on_event=events.append, record=False,
    )  # fmt: skip
    assert all(f"FINDING {i:02d}" in result.text for i in range(14))
    return [e for e in events if isinstance(e, TurnEvent)]


def cleared(turn: TurnEvent) -> int:
    return sum(e.cleared_tool_uses for e in turn.applied_edits)


@pytest.mark.slow
@pytest.mark.parametrize("basis", TRIGGER_BASES)
def test_clearings_come_in_batches_and_the_cache_holds_between_them(
    tmp_path: Path, basis: TriggerBasis
) -> None:
    turns = run(tmp_path, basis)
    counts = [cleared(t) for t in turns]
    moves = [i for i in range(1, len(turns)) if counts[i] != counts[i - 1]]
    assert len(moves) >= 3 and counts == sorted(counts)  # several batches, never undone
    assert len(moves) * 3 < sum(c > 0 for c in counts)  # most clearing turns move nothing
    for i in range(1, len(turns)):
        if i not in moves:  # the whole earlier prompt is read from the cache
            assert turns[i].usage.cache_read_input_tokens == turns[i - 1].usage.prompt_tokens, i
    assert max(t.usage.prompt_tokens for t in turns) < 14000 + 3000
    # A batch reads the prompt up to the previous batch's boundary from the cache (the
    # breakpoint on the newest cleared result): more at each batch, never just the prefix
    # before the messages that a batch without it falls back to.
    reads = [turns[i].usage.cache_read_input_tokens for i in moves[1:]]
    assert reads == sorted(set(reads)) and reads[0] > turns[0].usage.prompt_tokens, reads


@pytest.mark.slow
def test_both_server_models_see_the_same_batches(tmp_path: Path) -> None:
    unedited, edited = (run(tmp_path, basis) for basis in TRIGGER_BASES)
    assert [cleared(t) for t in unedited] == [cleared(t) for t in edited]
    assert [t.usage for t in unedited] == [t.usage for t in edited]


@pytest.mark.slow
def test_the_server_strategy_clears_again_on_every_turn_under_the_unedited_model(
    tmp_path: Path,
) -> None:
    turns = run(tmp_path, "unedited", strategy="server")
    counts = [cleared(t) for t in turns]
    first = next(i for i, c in enumerate(counts) if c)
    moves = sum(counts[i] != counts[i - 1] for i in range(first + 1, len(counts)))
    assert moves * 2 > len(counts) - first  # the contrast: most turns past it move the boundary
