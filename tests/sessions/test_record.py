"""The transcript format, its one writer and reader: round trip, ids, locks, cut lines, ENOSPC."""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from agentctl import clock
from agentctl.agent.task import read_task
from agentctl.errors import EXIT_RUNTIME, UsageError
from agentctl.profile.loader import Overrides
from agentctl.runner import execute, plan_new, plan_resume
from agentctl.sessions.transcript import (
    MessageRecord,
    SessionHeader,
    TranscriptWriteError,
    TranscriptWriter,
    from_json,
    new_session_id,
    read_records,
    read_transcript,
    session_path,
    to_json,
)
from agentctl.types import ErrorEvent, Event

REPO = Path(__file__).resolve().parents[2]


def header_only(session: str = "20260101-000000-aaaaaa") -> Path:
    path = session_path(session)
    with TranscriptWriter(path) as writer:
        writer.append(SessionHeader(session=session, task="t", model="m"))
    return path


@pytest.mark.dates
def test_every_line_of_a_real_run_reads_back_to_the_same_json(transcripts: dict[str, Path]) -> None:
    for path in transcripts.values():
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert [to_json(from_json(line)) for line in lines] == lines  # type: ignore[arg-type]
        assert read_records(path) == lines


@pytest.mark.dates
def test_line_and_paragraph_separators_inside_a_record_do_not_split_it() -> None:
    path = header_only()
    text = "a\u2028b\u0085c\u2029d\re\x0cf"
    with TranscriptWriter(path) as writer:
        writer.message(0, {"role": "user", "content": text})
    transcript = read_transcript(path)
    assert list(transcript.history) == [{"role": "user", "content": text}]
    assert transcript.warnings == ()


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", ".hidden", "", "a\x00b", "x" * 200])
def test_session_ids_that_are_not_one_file_name_are_refused(bad: str) -> None:
    with pytest.raises(UsageError, match="not a valid session id"):
        session_path(bad)


@pytest.mark.dates
def test_new_ids_are_valid() -> None:
    assert session_path(new_session_id()).suffix == ".jsonl"


def test_a_new_id_never_repeats_one_given_before_or_one_with_a_transcript() -> None:
    tokens = iter(["aaaaaa", "aaaaaa", "bbbbbb", "cccccc"])
    with clock.frozen(date(2026, 3, 1)):
        first = new_session_id(lambda _: next(tokens))
        session_path("20260301-000000-bbbbbb").parent.mkdir(parents=True, exist_ok=True)
        session_path("20260301-000000-bbbbbb").write_text("")
        second = new_session_id(lambda _: next(tokens))
    assert (first, second) == ("20260301-000000-aaaaaa", "20260301-000000-cccccc")


@pytest.mark.dates
def test_a_second_writer_of_a_session_is_refused_until_the_first_closes() -> None:
    path = header_only()
    with TranscriptWriter(path), pytest.raises(UsageError, match="another agentctl run"):
        TranscriptWriter(path)
    with TranscriptWriter(path) as again:
        again.message(0, {"role": "user", "content": "t"})
    assert len(read_records(path)) == 2


@pytest.mark.dates
def test_a_cut_fragment_is_cut_off_and_a_whole_unended_record_is_ended() -> None:
    path = header_only()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"v": 1, "type": "mess')
    assert "line 2" in read_transcript(path).warnings[0]
    with TranscriptWriter(path) as writer:
        assert writer.repaired == "removed a cut last line (22 bytes)"
    assert path.read_bytes() == whole
    record = json.dumps(to_json(MessageRecord(0, {"role": "user", "content": "t"})))
    path.write_bytes(whole + record.encode())
    with pytest.raises(TranscriptWriteError, match="cannot end the cut last line"):
        TranscriptWriter(path, write=full_disk(0))
    with TranscriptWriter(path) as writer:
        assert writer.repaired == "ended the last line"
        writer.message(1, {"role": "assistant", "content": "a"})
    assert [m["content"] for m in read_transcript(path).history] == ["t", "a"]


def full_disk(room: int) -> Callable[[int, bytes], int]:
    """An os.write that takes `room` more bytes (the last write short), then raises ENOSPC."""

    def write(fd: int, data: bytes) -> int:
        nonlocal room
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, data[:room])
        room -= written
        return written

    return write


@pytest.mark.dates
def test_a_full_disk_is_one_line_saying_what_was_saved_and_leaves_whole_records() -> None:
    path = header_only()
    size = path.stat().st_size
    with TranscriptWriter(path, write=full_disk(150)) as writer:
        writer.message(0, {"role": "user", "content": "short"})
        with pytest.raises(TranscriptWriteError) as caught:
            writer.message(1, {"role": "assistant", "content": "x" * 100})
        writer.message(2, {"role": "user", "content": "dropped"})  # after the error: nothing
    message = str(caught.value)
    assert caught.value.exit_code == EXIT_RUNTIME and "\n" not in message
    assert "no space left on device" in message
    assert "saved: the transcript up to turn 0 (1 records" in message
    assert f"agentctl run --resume {path.stem}" in message
    transcript = read_transcript(path)
    assert transcript.warnings == () and path.stat().st_size > size
    assert list(transcript.history) == [{"role": "user", "content": "short"}]


@pytest.mark.dates
def test_a_run_that_fills_the_disk_stops_with_that_error_and_can_be_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.md").write_text(
        '+++\n[memory]\nroot = "mem"\n+++\nSummarise the notes in memory.\n'
    )
    task = read_task("task.md", io.StringIO())
    prep = plan_new(task, overrides=Overrides(values={"max_turns": 20}), offline=True)
    events: list[Event] = []
    with pytest.raises(TranscriptWriteError) as caught:
        execute(prep, on_event=events.append, transcript_write=full_disk(9000))
    assert isinstance(events[-1], ErrorEvent) and events[-1].message == str(caught.value)
    transcript = read_transcript(session_path(prep.session))
    assert transcript.warnings == () and len(transcript.history) >= 2
    resumed = plan_resume(prep.session, offline=True)
    assert execute(resumed, on_event=events.append).stop_reason == "end_turn"
