"""The Python conversation API: `agentctl.Session` (send, fork, totals), `agentctl.arun`,
`agentctl.run(continue_session=..., fork=...)`, through the real SDK against the emulator;
and the pure parts (fork specs, NDJSON user turns, `-c` with no SESSION)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import agentctl
from agentctl.cli.run_conversation import latest_by_default, user_turns
from agentctl.errors import UsageError
from agentctl.home import sessions_dir
from agentctl.runner.followup import parse_fork
from agentctl.sessions.transcript import read_records

TASK = "Summarise the findings about the cache hit ratio."


@pytest.fixture(autouse=True)
def _workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    for i, city in enumerate(["Oslo", "Lima", "Kyiv"]):
        (tmp_path / "ws" / f"note{i}.txt").write_text(
            f"Finding {i}: the cache hit ratio rose to {50 + i}% in {city}\nfiller\n"
        )


def files() -> list[Path]:
    return sorted(sessions_dir().glob("*.jsonl"))


@pytest.mark.slow
@pytest.mark.dates
def test_session_sends_follow_ups_into_one_transcript_and_forks(tmp_path: Path) -> None:
    seen: list[agentctl.Event] = []
    with agentctl.Session(
        offline=True, workspace="ws", memory_root="mem", on_event=seen.append
    ) as chat:
        first = chat.send(TASK)
        second = chat.send("Which note was about Kyiv?")
        assert chat.id == first.session_id == second.session_id
        assert second.first_turn == len(first.turns)
        n = len(first.turns)
        assert [t.turn for t in second.turns] == [n + 1, n + 2]  # view the notes, answer
        assert "note2.txt" in second.text and "note0.txt" not in second.text
        assert chat.text == second.text
        assert chat.totals.cost_usd == pytest.approx(first.totals.cost_usd + second.totals.cost_usd)
        assert chat.totals.usage.output_tokens == sum(t.usage.output_tokens for t in chat.turns)
        assert sum(isinstance(e, agentctl.ResultEvent) for e in seen) == 2
        (original,) = files()
        before = original.read_bytes()
        with chat.fork(2) as branch:
            forked = branch.send("What did you look at first?")
        assert branch.id != chat.id and forked.first_turn == 2
        assert forked.turns[0].turn == 3
    assert original.read_bytes() == before
    header = read_records(sessions_dir() / f"{branch.id}.jsonl")[0]
    assert (header["forked_from"], header["forked_at"]) == (chat.id, 2)
    records = read_records(original)
    assert [r["new_client"] for r in records if r["type"] == "follow_up"] == [False]


@pytest.mark.slow
@pytest.mark.dates
def test_run_continue_and_fork_and_arun() -> None:
    first = agentctl.run(TASK, offline=True, workspace="ws", memory_root="mem")
    follow = agentctl.run("Which note was about Lima?", continue_session="last", offline=True)
    assert follow.session_id == first.session_id
    assert follow.first_turn == len(first.turns) and "note1.txt" in follow.text

    async def main() -> agentctl.RunResult:
        return await agentctl.arun(
            "And about Oslo?", continue_session=first.session_id, offline=True
        )

    asynced = asyncio.run(main())
    assert asynced.session_id == first.session_id and "note0.txt" in asynced.text
    assert asynced.first_turn == follow.first_turn + len(follow.turns)

    branch = agentctl.run("Anything about Kyiv?", fork=f"{first.session_id}@1", offline=True)
    assert branch.session_id != first.session_id and branch.first_turn == 1
    assert branch.text.startswith("You asked: Anything about Kyiv?")
    assert len(files()) == 2


@pytest.mark.slow
@pytest.mark.dates
def test_a_follow_up_after_clearing_reads_the_notes_in_memory_again() -> None:
    clearing = {
        "context_editing.tool_uses.trigger": 1200,
        "context_editing.tool_uses.keep": 1,
        "context_editing.tool_uses.clear_at_least": 1,
    }
    with agentctl.Session(
        offline=True, workspace="ws", memory_root="mem", overrides=clearing
    ) as chat:
        first = chat.send(TASK)
        assert first.totals.cleared_input_tokens > 0  # the notes views were cleared too
        second = chat.send("Which note was about Lima?")
    calls = [c.name + ":" + str(c.input.get("command")) for t in second.turns for c in t.tool_calls]
    assert "memory:view" in calls  # looked its notes up again
    assert "from my notes" in second.text.lower() and "note1.txt" in second.text


@pytest.mark.slow
@pytest.mark.dates
def test_python_errors_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="nothing to fork"):
        agentctl.Session(offline=True).fork(1)
    with pytest.raises(UsageError, match="no sessions yet"):
        agentctl.run("hello", continue_session="last", offline=True)
    first = agentctl.run(TASK, offline=True, workspace="ws", memory_root="mem")
    with pytest.raises(UsageError, match="no answered turn 40"):
        agentctl.run("hi", fork=f"{first.session_id}@40", offline=True)
    with pytest.raises(UsageError, match="not both"):
        agentctl.run("hi", fork="last", continue_session="last", offline=True)
    with pytest.raises(UsageError, match="give the follow-up"):
        agentctl.run(continue_session="last", offline=True)
    assert len(files()) == 1
    with agentctl.Session(offline=True, workspace="ws", overrides={"max_turns": 2}) as cut:
        with pytest.raises(agentctl.LimitError):
            cut.send(TASK)
        assert cut.id is not None and cut.results == []  # recorded, not finished
        with pytest.raises(UsageError, match=r"did not finish.*--resume"):
            cut.send("And then?")


def test_parse_fork() -> None:
    assert parse_fork("abc@3") == ("abc", 3)
    assert parse_fork("last") == ("last", None)
    for bad in ("abc@0", "abc@x", "abc@", "@3", "abc@-1"):
        with pytest.raises(UsageError):
            parse_fork(bad)


def test_user_turns_reads_lines_lazily_and_names_bad_ones() -> None:
    good = user_turns(['{"text": "one"}\n', "\n", '{"text": "two"}\n'])
    assert list(good) == ["one", "two"]
    lazy = user_turns(['{"text": "one"}\n', "oops\n"])
    assert next(lazy) == "one"  # the first turn runs before the bad line is read
    with pytest.raises(UsageError, match="stdin line 2: not JSON"):
        next(lazy)
    for line in ('["text"]', '{"text": 3}', '{"text": "  "}', '{"prompt": "x"}'):
        with pytest.raises(UsageError, match='stdin line 1: needs a non-empty "text"'):
            list(user_turns([line]))


def test_continue_without_a_session_means_the_latest() -> None:
    assert latest_by_default(["-c", "-p", "x"]) == ["-c", "last", "-p", "x"]
    assert latest_by_default(["-p", "x", "--continue"]) == ["-p", "x", "--continue", "last"]
    assert latest_by_default(["--continue", "abc", "-p", "x"]) == ["--continue", "abc", "-p", "x"]
    assert latest_by_default(["-p", "--", "-c"]) == ["-p", "--", "-c"]
    assert latest_by_default(["-c", "-"]) == ["-c", "last", "-"]
