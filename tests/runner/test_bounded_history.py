"""A run's history after a compaction: the client holds and sends the history from the last
compaction block on (what the server still reads), the transcript keeps all of it, and what
reads the earlier messages (resume, follow-ups and forks, a lost thread) goes on from there.

The real SDK over HTTP against the emulator, with the sweep of tests/runner/compaction_workload.py
(16 files, compaction at 50,000 tokens, a little past the middle of the sweep)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.emulator import running
from agentctl.sessions.transcript import load_session
from agentctl.types import TurnEvent

from .compaction_workload import FILES, setup
from .test_compaction_run import ndjson


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The emulator the runs of a test go to (over HTTP, the SDK's base URL)."""
    with running(clock=lambda: 0.0) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        yield server


def sent(emu: Any) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.path == "/v1/messages"]


def opens_with_compaction(message: dict[str, Any]) -> bool:
    content = message["content"]
    return message["role"] == "assistant" and content[0]["type"] == "compaction"


def all_found(text: str) -> bool:
    return all(f"FINDING {i:02d}" in text for i in range(FILES))


def profile_file(tmp: Path, threads: bool) -> Path:
    path, _task = setup(tmp, pause=False)
    path.write_text(path.read_text() + f"[api]\nthreads = {str(threads).lower()}\n")
    return path


def compacted_at(turns: tuple[TurnEvent, ...] | list[TurnEvent]) -> int:
    """The index (in `turns`) of the one turn whose reply compacted."""
    (index,) = [i for i, t in enumerate(turns) if t.usage.compactions]
    return index


@pytest.mark.slow
@pytest.mark.parametrize("threads", [False, True])
def test_after_a_compaction_requests_start_at_its_block_and_the_transcript_keeps_all(
    tmp_path: Path, emu: Any, threads: bool
) -> None:
    result = agentctl.run("task.md", profile=profile_file(tmp_path, threads))
    bodies = sent(emu)
    assert all_found(result.text) and result.stop_reason == "end_turn"
    at = compacted_at(result.turns)
    assert 3 < at < len(result.turns) - 3
    before, after = bodies[: at + 1], bodies[at + 1 :]
    assert before[0]["messages"][0]["role"] == "user"  # the task
    if threads:  # a new thread, holding what the server reads; then only what is new
        assert after[0]["thread"] == {"type": "create"}
        assert [b["thread"]["type"] for b in after[1:]] == ["continue"] * (len(after) - 1)
        assert len(after[0]["messages"]) == 2  # the compacting reply and its tool results
    else:
        assert [len(b["messages"]) for b in after] == [2 * n for n in range(1, len(after) + 1)]
    assert opens_with_compaction(after[0]["messages"][0])
    # The transcript has every message, and each request counts the whole history.
    session = load_session(result.session_id)
    assert session.history[0]["content"].startswith("# Sweep")
    assert opens_with_compaction(session.history[2 * at + 1])
    counts = [t.messages_count for t in session.turns]
    assert counts == [2 * n - 1 for n in range(1, len(session.turns) + 1)]


@pytest.mark.slow
def test_resume_after_a_compaction_sends_from_its_block(tmp_path: Path, emu: Any) -> None:
    profile = profile_file(tmp_path, threads=False)
    first = ndjson("task.md", "--profile", str(profile), "--max-turns", "17")
    turns = [e for e in first if e["event"] == "turn"]
    assert any(t["usage"]["compactions"] for t in turns) and first[-1]["event"] == "error"
    rest = ndjson("--resume", "last", "--max-turns", "120")
    bodies = sent(emu)
    assert rest[-1]["event"] == "result" and all_found(rest[-1]["text"])
    resumed = bodies[len(turns) :]
    assert opens_with_compaction(resumed[0]["messages"][0])
    assert all(opens_with_compaction(b["messages"][0]) for b in resumed)
    session = load_session("last")
    assert [t.messages_count for t in session.turns] == [
        2 * n - 1 for n in range(1, len(session.turns) + 1)
    ]


@pytest.mark.slow
def test_a_follow_up_and_forks_after_a_compaction(tmp_path: Path, emu: Any) -> None:
    with agentctl.Session(profile_file(tmp_path, threads=True)) as chat:
        done = chat.send(Path("task.md").read_text())
        at = compacted_at(done.turns)
        start = len(sent(emu))
        follow = chat.send("Which file held FINDING 03?")
        follow_body = sent(emu)[start]
        late = chat.fork(turn=at + 2)  # the turn after the compacting one (turn at + 1)
        late_answer = late.send("List the findings so far.")
        late_body = sent(emu)[-len(late_answer.turns)]
        early = chat.fork(turn=2)  # before it: the whole history up to there
        early_answer = early.send("List the findings so far.")
        early_body = sent(emu)[-len(early_answer.turns)]
    assert follow.stop_reason == "end_turn" and follow.turns
    assert follow_body["thread"] == {"type": "create"}  # a new process's client: a new thread
    assert opens_with_compaction(follow_body["messages"][0])
    assert follow_body["messages"][-1]["content"][0]["text"] == "Which file held FINDING 03?"
    assert late_answer.stop_reason == "end_turn" and late.id != chat.id
    assert opens_with_compaction(late_body["messages"][0]) and len(late_body["messages"]) == 4
    assert early_answer.stop_reason == "end_turn"
    assert early_body["messages"][0]["content"].startswith("# Sweep")
    assert len(early_body["messages"]) == 5
    # The forks' transcripts hold their whole history: the task first.
    assert load_session(late.id or "").history[0]["content"].startswith("# Sweep")


@pytest.mark.slow
def test_a_thread_lost_after_a_compaction_is_created_again_from_its_block(
    tmp_path: Path, emu: Any
) -> None:
    seen: list[TurnEvent] = []

    def forget(event: object) -> None:
        if isinstance(event, TurnEvent):
            seen.append(event)
            if len(seen) > 1 and seen[-2].usage.compactions:
                emu.service.threads.forget()  # as a server that lost what it held

    result = agentctl.run("task.md", profile=profile_file(tmp_path, True), on_event=forget)
    bodies = sent(emu)
    assert all_found(result.text) and result.stop_reason == "end_turn"
    at = compacted_at(result.turns)
    kinds = [b["thread"]["type"] for b in bodies]
    assert kinds[at + 1 : at + 4] == ["create", "continue", "create"]
    # the lost thread's turn, sent again from the compaction block on (not the whole session)
    again = [b for b in bodies[at + 1 :] if b["thread"]["type"] == "create"][1]
    assert opens_with_compaction(again["messages"][0]) and len(again["messages"]) == 4


@pytest.mark.slow
def test_batched_clearing_after_a_compaction_steers_on_what_is_sent(
    tmp_path: Path, emu: Any
) -> None:
    """Clearing on (batched, its trigger above the compaction's): after the compaction the
    steered edit counts the tool uses of the history sent, from the block on."""
    profile = profile_file(tmp_path, threads=True)
    text = profile.read_text().replace("enabled = false\n", 'strategy = "batched"\n', 1)
    profile.write_text(
        text.replace(
            "[context_editing.tool_uses]\n",
            ("[context_editing.tool_uses]\ntrigger = 60000\nlow_water = 30000\n"),
            1,
        )
    )
    result = agentctl.run("task.md", profile=profile)
    assert all_found(result.text) and result.stop_reason == "end_turn"
    at = compacted_at(result.turns)
    session = load_session(result.session_id)
    for turn in session.turns[at + 1 :]:
        (edit,) = [e for e in turn.body["context_management"]["edits"]
                   if e["type"] == "clear_tool_uses_20250919"]  # fmt: skip
        history = session.history[2 * at + 1 : turn.messages_count]
        uses = sum(b["type"] == "tool_use" for m in history for b in m["content"]
                   if m["role"] == "assistant")  # fmt: skip
        assert edit["trigger"] == {"type": "tool_uses", "value": uses}  # never exceeded
    assert not any(t.cleared_tool_uses for t in result.turns)
