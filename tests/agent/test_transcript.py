"""Transcripts on disk: records, crash-cut lines, session lookup, history replay for --resume."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentctl.agent.retry import RetryPolicy, parse_retry_after, status_is_retryable
from agentctl.errors import UsageError
from agentctl.home import sessions_dir
from agentctl.sessions.resume import load_run, resumable_history
from agentctl.sessions.transcript import (
    TranscriptWriter,
    find_session,
    read_records,
    read_transcript,
    session_path,
)


def write_session(session: str, *records: tuple[str, dict[str, object]]) -> Path:
    path = session_path(session)
    with TranscriptWriter(path) as writer:
        writer.write("session", session=session, task="t", profile={}, cwd=".")
        for kind, fields in records:
            writer.write(kind, **fields)
    return path


@pytest.mark.dates
def test_records_are_versioned_lines_in_a_private_file() -> None:
    path = write_session(
        "20260101-000000-aaaaaa",
        ("message", {"index": 0, "message": {"role": "user", "content": "t"}}),
    )
    records = read_records(path)
    assert [r["type"] for r in records] == ["session", "message"]
    assert all(r["v"] == 1 and isinstance(r["ts"], float) for r in records)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sessions_dir()).st_mode) == 0o700


@pytest.mark.dates
def test_a_line_cut_by_a_crash_is_skipped_but_a_corrupt_middle_is_an_error() -> None:
    path = write_session("20260101-000000-bbbbbb")
    with path.open("a") as f:
        f.write('{"v": 1, "type": "mess')
    assert len(read_records(path)) == 1
    with path.open("a") as f:
        f.write("\n" + '{"v": 1, "type": "event"}' + "\n")
    with pytest.raises(UsageError, match="line 2 is not a JSON record"):
        read_records(path)


@pytest.mark.dates
def test_find_session_by_id_prefix_and_last() -> None:
    first = write_session("20260101-000000-cccccc")
    second = write_session("20260101-000001-dddddd")
    os.utime(first, (1, 1))
    assert find_session("last") == second
    assert find_session("20260101-000000") == first
    with pytest.raises(UsageError, match="ambiguous prefix"):
        find_session("20260101")
    with pytest.raises(UsageError, match="no such session"):
        find_session("1999")


def message(index: int, role: str, text: str) -> tuple[str, dict[str, object]]:
    return ("message", {"index": index, "message": {"role": role, "content": text}})


@pytest.mark.dates
def test_replay_lets_a_later_record_replace_from_its_index() -> None:
    path = write_session(
        "20260101-000001-ffffff",
        message(0, "user", "task"),
        message(1, "assistant", "cut answer"),
        message(1, "assistant", "redone"),
        message(2, "user", "results"),
    )
    history = list(read_transcript(path).history)
    assert [m["content"] for m in history] == ["task", "redone", "results"]


@pytest.mark.parametrize(("stop", "kept"), [("tool_use", 1), ("max_tokens", 1), ("pause_turn", 2)])
@pytest.mark.dates
def test_a_trailing_answer_is_kept_only_when_it_is_resent(stop: str, kept: int) -> None:
    write_session(
        "20260101-000002-eeeeee",
        message(0, "user", "task"),
        ("request", {"turn": 1}),
        message(1, "assistant", "partial"),
        ("response", {"turn": 1, "message": {"stop_reason": stop}}),
    )
    run = load_run("last")
    assert run.last_turn == 1 and run.last_stop == stop and run.outcome == "unknown"
    assert len(resumable_history(run)) == kept


@pytest.mark.dates
def test_a_finished_session_cannot_be_resumed() -> None:
    write_session(
        "20260101-000003-ffffff",
        message(0, "user", "task"),
        ("event", {"event": {"event": "result", "stop_reason": "end_turn"}}),
    )
    with pytest.raises(UsageError, match="already finished"):
        load_run("20260101-000003")


def test_retry_policy_backoff_and_retry_after() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0, jitter=lambda: 1.0)
    assert [policy.delay(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert policy.delay(3, retry_after=0.25) == 0.25
    assert policy.delay(0, retry_after=3600) == 60.0
    assert parse_retry_after({"Retry-After-Ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2026"}) is None
    assert [status_is_retryable(s) for s in (400, 401, 403, 404, 408, 409, 429, 500, 529)] == [
        False,
        False,
        False,
        False,
        True,
        True,
        True,
        True,
        True,
    ]
    assert status_is_retryable(200, "overloaded_error") and not status_is_retryable(
        200, "invalid_request_error"
    )


@pytest.mark.dates
def test_request_records_leave_out_the_messages_but_count_them() -> None:
    path = session_path("20260101-000004-aaaaaa")
    with TranscriptWriter(path) as writer:
        writer.request(3, {"model": "m", "messages": [{"role": "user", "content": "x"}] * 5})
    (record,) = read_records(path)
    assert record["turn"] == 3 and record["messages_count"] == 5
    assert record["request"] == {"model": "m"}


@pytest.mark.dates
def test_a_turn_cut_mid_tools_is_finished_from_the_recorded_results() -> None:
    uses = [
        {"type": "tool_use", "id": "a", "name": "memory", "input": {"command": "create"}},
        {"type": "tool_use", "id": "b", "name": "read_file", "input": {"path": "x"}},
    ]
    write_session(
        "20260101-000005-aaaaaa",
        message(0, "user", "task"),
        ("request", {"turn": 1}),
        ("message", {"index": 1, "message": {"role": "assistant", "content": uses}}),
        ("response", {"turn": 1, "message": {"stop_reason": "tool_use"}}),
        (
            "tool_result",
            {"turn": 1, "tool_use_id": "a", "content": "File created", "is_error": False},
        ),
    )
    history = resumable_history(load_run("last"))
    assert len(history) == 3
    first, second = history[2]["content"]
    assert first == {"type": "tool_result", "tool_use_id": "a", "content": "File created"}
    assert second["tool_use_id"] == "b" and second["is_error"] is True
    assert "interrupted" in second["content"]
