"""Save-before-clear: the notice, through the real SDK over HTTP against the emulator."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.agent import checkpoint
from agentctl.context.tokens import estimate_message_tokens
from agentctl.emulator import running
from agentctl.home import sessions_dir
from agentctl.profile.settings import CHECKPOINT_TEXT
from agentctl.types import Event, Turn

PROFILE = """
model = "claude-sonnet-5"
max_turns = 60
[api]
base_url = "{url}"
[context_editing.tool_uses]
strategy = "{strategy}"
trigger = 9000
keep = 2
clear_at_least = 0
[context_editing.checkpoint]
{checkpoint}
"""
TASK = (
    "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"
    "\nmemory: when told\n"
)
FILES = 8
CUSTOM = "Checkpoint: old results are cleared soon. Put what you still need in memory now."


def workspace(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    for i in range(FILES):
        lines = [f"entry {n}: shard replica queue worker batch lease {i}" for n in range(110)]
        lines.insert(50, f"FINDING {i:02d}: item {i * 7} confirmed")
        (folder / f"log-{i:02d}.txt").write_text("\n".join(lines) + "\n")
    return folder


@dataclass
class Outcome:
    result: agentctl.RunResult
    turns: list[Turn]
    bodies: list[dict[str, Any]]  # what the emulator received, in order
    memory: Path


@pytest.fixture
def run_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with running() as emulator:

        def go(
            checkpoint: str = "", task: str = TASK, record: bool = False, strategy: str = "server"
        ) -> Outcome:
            emulator.requests.clear()
            profile = tmp_path / "p.toml"
            text = PROFILE.format(url=emulator.base_url, checkpoint=checkpoint, strategy=strategy)
            profile.write_text(text)
            events: list[Event] = []
            memory = tmp_path / f"mem-{len(list(tmp_path.glob('mem-*')))}"
            result = agentctl.run(
                task, profile=profile, workspace=workspace(tmp_path / "ws"),
                memory_root=memory, on_event=events.append, record=record,
            )  # fmt: skip
            bodies = [r.body for r in emulator.requests if r.path == "/v1/messages"]
            return Outcome(result, [e for e in events if isinstance(e, Turn)], bodies, memory)

        yield go


def notices(body: dict[str, Any], text: str = CHECKPOINT_TEXT) -> list[tuple[int, int]]:
    """(message, block) positions of the notice in a request."""
    return [
        (m, b)
        for m, message in enumerate(body["messages"])
        if isinstance(message["content"], list)
        for b, block in enumerate(message["content"])
        if block.get("type") == "text" and block.get("text") == text
    ]


def first_with(bodies: list[dict[str, Any]], text: str = CHECKPOINT_TEXT) -> int:
    return next(i for i, body in enumerate(bodies) if notices(body, text))


def cleared(turn: Turn) -> int:
    return sum(e.cleared_tool_uses for e in turn.applied_edits)


def memory_writes(turns: list[Turn]) -> list[int]:
    return [t.turn for t in turns for op in t.memory_ops if op.command != "view"]


@pytest.mark.slow
def test_the_notice_is_sent_once_in_the_last_request_before_the_first_clearing(
    run_with: Any,
) -> None:
    out: Outcome = run_with()
    k = first_with(out.bodies)
    # Sent once: every later request holds it (history), at the same place, once.
    assert all(notices(b) == notices(out.bodies[k]) for b in out.bodies[k:])
    assert all(len(notices(b)) == 1 for b in out.bodies[k:]) and not any(
        notices(b) for b in out.bodies[:k]
    )
    # In the newest message, after its tool_result blocks (the API's order).
    (m, b), last = notices(out.bodies[k])[0], out.bodies[k]["messages"][-1]
    assert m == len(out.bodies[k]["messages"]) - 1 and b == len(last["content"]) - 1
    assert [x["type"] for x in last["content"][:-1]] == ["tool_result"] * (b)
    # No clearing before it; the first one comes within two requests of it (the notice
    # request, or the one after the model's save).
    first_clear = next(i for i, t in enumerate(out.turns) if cleared(t))
    assert k <= first_clear <= k + 2
    assert all(t.trigger_distance is not None and t.trigger_distance <= 0 for t in out.turns[:k])
    # The turn whose results carried it says so, and only that one.
    assert [t.turn for t in out.turns if t.checkpoint] == [out.turns[k - 1].turn]
    # The cached prefix holds: request k reads the whole prompt of request k - 1.
    assert out.turns[k].usage.cache_read_input_tokens == out.turns[k - 1].usage.prompt_tokens
    # The when-told model saved right after it, and at no other time.
    assert memory_writes(out.turns) == [out.turns[k].turn]
    saved = "".join(p.read_text() for p in out.memory.glob("*.md"))
    assert "FINDING 00" in saved


@pytest.mark.slow
def test_turned_off_there_is_no_notice_and_the_when_told_model_never_writes(
    run_with: Any,
) -> None:
    off: Outcome = run_with("enabled = false")
    assert not any(notices(b) for b in off.bodies)
    assert not any(t.checkpoint for t in off.turns)
    assert any(cleared(t) for t in off.turns)  # clearing did happen
    assert memory_writes(off.turns) == [] and not list(off.memory.glob("*.md"))
    on: Outcome = run_with()
    kept = [f"FINDING {i:02d}" in on.result.text for i in range(FILES)]
    lost = [f"FINDING {i:02d}" in off.result.text for i in range(FILES)]
    assert sum(kept) > sum(lost)  # what the notice buys on this workload


@pytest.mark.slow
def test_custom_text_is_sent_instead_of_the_built_in_one(run_with: Any) -> None:
    # repeat changes nothing under the server strategy: its prompt stays past the trigger
    out: Outcome = run_with(f'text = "{CUSTOM}"\nrepeat = true')
    assert not any(notices(b) for b in out.bodies)
    k = first_with(out.bodies, CUSTOM)
    assert len(notices(out.bodies[-1], CUSTOM)) == 1
    assert memory_writes(out.turns) == [out.turns[k].turn]  # memory and clearing: told


@pytest.mark.slow
def test_repeat_tells_it_again_before_each_batched_clearing(run_with: Any) -> None:
    once: Outcome = run_with(strategy="batched")
    assert [t.checkpoint for t in once.turns].count(True) == 1
    out: Outcome = run_with("repeat = true", strategy="batched")
    sent = [i for i, t in enumerate(out.turns) if t.checkpoint]
    moves = [
        i for i in range(1, len(out.turns)) if cleared(out.turns[i]) != cleared(out.turns[i - 1])
    ]
    assert len(sent) >= 2 and len(moves) >= 2
    for a, b in itertools.pairwise(sent):
        assert any(a < m <= b for m in moves), (sent, moves)  # one per clearing cycle
    for a in sent:  # read by request a + 1; a clearing follows within two more requests
        assert any(a + 1 <= m <= a + 3 for m in moves), (sent, moves)
    assert memory_writes(out.turns) == [out.turns[a + 1].turn for a in sent]
    kept = sum(f"FINDING {i:02d}" in out.result.text for i in range(FILES))
    assert kept == FILES > sum(f"FINDING {i:02d}" in once.result.text for i in range(FILES))


@pytest.mark.slow
def test_the_task_front_matter_turns_it_off(run_with: Any) -> None:
    task = "+++\n[context_editing.checkpoint]\nenabled = false\n+++\n" + TASK
    out: Outcome = run_with(task=task)
    assert not any(notices(b) for b in out.bodies) and not any(t.checkpoint for t in out.turns)


@pytest.mark.slow
def test_counted_in_ndjson_and_the_transcript(run_with: Any) -> None:
    out: Outcome = run_with(record=True)
    lines = [json.loads(json.dumps(t.to_json())) for t in out.turns]
    assert [line["checkpoint"] for line in lines].count(True) == 1
    assert all(isinstance(line["checkpoint"], bool) for line in lines)
    path = sessions_dir() / f"{out.result.session_id}.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    events = [r["event"] for r in records if r["type"] == "event"]
    flagged = [e for e in events if e["event"] == "turn" and e["checkpoint"] is True]
    assert len(flagged) == 1
    back = Turn.from_json(flagged[0])
    assert back.checkpoint and back.turn == next(t.turn for t in out.turns if t.checkpoint)
    # The message that carried it is recorded as sent: the tool results, then the notice.
    carried = [
        r["message"]["content"]
        for r in records
        if r["type"] == "message" and isinstance(r["message"]["content"], list)
        and any(b.get("text") == CHECKPOINT_TEXT for b in r["message"]["content"])
    ]  # fmt: skip
    assert len(carried) == 1 and carried[0][-1]["text"] == CHECKPOINT_TEXT
    assert carried[0][0]["type"] == "tool_result"


# The decision itself (pure).


def test_due_when_the_request_after_next_is_expected_to_cross() -> None:
    added = [{"role": "user", "content": [{"type": "text", "text": "word " * 400}]}]
    growth = 2 * estimate_message_tokens(added[0])
    assert checkpoint.due(-growth + 1, added)
    assert not checkpoint.due(-growth, added)  # lands on the trigger: not past it
    assert checkpoint.due(5, added)  # already past it: at the latest now
    assert not checkpoint.due(None, added)  # no token trigger


def test_a_resumed_history_that_holds_it_is_not_told_again() -> None:
    profile = agentctl.Profile()
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
    ]
    assert not checkpoint.already_sent(profile, history)
    history[-1]["content"].append(checkpoint.notice_block(profile.context_editing))  # type: ignore[union-attr]
    assert checkpoint.already_sent(profile, history)


def test_offered_only_with_memory_and_a_token_trigger() -> None:
    base = agentctl.load_profile(overrides={})
    assert checkpoint.offered(base.context_editing, base.tools.memory)
    server = {"context_editing.tool_uses.strategy": "server"}
    for change in (
        {"context_editing.checkpoint.enabled": False},
        {"tools.memory": False},
        {"context_editing.tool_uses.enabled": False},
        {**server, "context_editing.tool_uses.trigger_kind": "tool_uses"},
    ):
        changed = agentctl.load_profile(overrides=change)
        assert not checkpoint.offered(changed.context_editing, changed.tools.memory), change
    served = agentctl.load_profile(overrides=server)
    assert checkpoint.offered(served.context_editing, served.tools.memory)
