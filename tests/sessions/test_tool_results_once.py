"""A transcript stores each tool result once: in its `tool_result` record, which the message
that carries it back to the model refers to by tool_use id (`result_refs`). A transcript
written before (data/v1-tool-results.jsonl: every result in full in both records, written
by agentctl at 7c02316, a memory script stopped by max_turns after 4 turns) reads the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.catalog import export_session
from agentctl.sessions.resume import resumable_history
from agentctl.sessions.transcript import (
    MalformedRecord,
    MessageRecord,
    ToolResultRecord,
    TranscriptWriter,
    from_json,
    load_session,
    read_records,
    to_json,
)
from agentctl.types import ToolCall

OLD = Path(__file__).parent / "data" / "v1-tool-results.jsonl"


def _install(name: str, lines: list[dict[str, Any]]) -> Path:
    path = sessions_dir() / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _old_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in OLD.read_text(encoding="utf-8").splitlines()]


def _stored_once(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same records as this version's writer writes them (results referred to)."""
    out = sessions_dir() / "rewritten.tmp"
    with TranscriptWriter(out) as writer:
        for line in lines:
            record = from_json(line)
            if isinstance(record, ToolResultRecord):
                call = ToolCall(record.tool_use_id, record.name, record.input, record.is_error, 0)
                writer.tool_result(record.turn, call, record.content)
            elif isinstance(record, MessageRecord):
                writer.message(record.index, record.message)
            else:
                assert record is not None
                writer.append(record)
    rewritten = read_records(out)
    out.unlink()
    # the writer stamps its own times: keep the old ones, so only the storing differs
    return [{**new, "ts": old["ts"]} for new, old in zip(rewritten, lines, strict=True)]


def _tool_result_blocks(messages: Any) -> list[dict[str, Any]]:
    return [
        b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


@pytest.mark.dates
def test_an_old_transcript_keeps_its_tool_results_in_the_history() -> None:
    old = load_session(_install("v1", _old_lines()).stem)
    blocks = _tool_result_blocks(old.history)
    assert len(blocks) == 4 and all(b["content"] for b in blocks)
    assert [b["content"] for b in blocks] == [
        old.tool_results[b["tool_use_id"]].content for b in blocks
    ]
    assert (old.last_turn, old.outcome, old.last_stop) == (4, "limit", "tool_use")
    assert all(r["v"] == 1 and "result_refs" not in r for r in read_records(old.path))


@pytest.mark.dates
def test_the_same_run_stored_once_reads_back_the_same_and_is_smaller() -> None:
    lines = _old_lines()
    once = _stored_once(lines)
    messages = [r for r in once if r["type"] == "message"]
    referring = [r for r in messages if r.get("result_refs")]
    assert len(referring) == 4 and all(r["v"] == 2 for r in referring)
    assert _tool_result_blocks(r["message"] for r in referring)
    assert not any("content" in b for b in _tool_result_blocks(r["message"] for r in referring))
    old = load_session(_install("old", lines).stem)
    new = load_session(_install("new", once).stem)
    assert new.path.stat().st_size < old.path.stat().st_size
    assert new.history == old.history and new.records == old.records
    assert [t.messages for t in new.turns] == [t.messages for t in old.turns]
    assert {**export_session(new), "session": "old"} == export_session(old)
    assert resumable_history(new) == resumable_history(old)


@pytest.mark.dates
def test_sessions_commands_show_the_same_for_either_storing() -> None:
    lines = _old_lines()
    _install("old", lines)
    _install("new", _stored_once(lines))
    runner = CliRunner()
    for command in (["sessions", "show"], ["stats"], ["sessions", "export"]):
        shown = [
            runner.invoke(app, [*command, name], env={"NO_COLOR": "1", "COLUMNS": "120"})
            for name in ("old", "new")
        ]
        assert [r.exit_code for r in shown] == [0, 0], shown[0].output
        assert shown[0].output.replace("old", "new") == shown[1].output.replace("old", "new")


def test_a_message_refers_only_to_results_the_writer_recorded(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    answered = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "same"},
        {"type": "tool_result", "tool_use_id": "b", "content": "not recorded"},
        {"type": "tool_result", "tool_use_id": "c", "content": "differs", "is_error": True},
    ]}  # fmt: skip
    with TranscriptWriter(path) as writer:
        writer.tool_result(1, ToolCall("a", "memory", {}, False, 4), "same")
        writer.tool_result(1, ToolCall("c", "memory", {}, True, 4), "recorded text")
        writer.message(0, answered)
        writer.message(1, answered)  # the results were referred to once: in full again
    first, second = (r for r in read_records(path) if r["type"] == "message")
    assert first["result_refs"] == ["a"] and "content" not in first["message"]["content"][0]
    assert first["message"]["content"][1:] == answered["content"][1:]
    assert "result_refs" not in second and second["message"] == answered
    assert to_json(from_json(first)) == first  # type: ignore[arg-type]


def test_a_reference_to_no_recorded_result_names_the_line(tmp_path: Path) -> None:
    lines = _old_lines()
    broken = _stored_once(lines)
    first_ref = next(i for i, r in enumerate(broken) if r.get("result_refs"))
    del broken[first_ref - 1]  # the tool_result record it refers to
    path = _install("broken", broken)
    with pytest.raises(Exception, match=rf"line {first_ref}: `result_refs`: no tool_result"):
        load_session(path.stem)
    with pytest.raises(MalformedRecord, match="must be a list of strings"):
        from_json({"type": "message", "index": 0, "message": {"role": "user", "content": []},
                   "result_refs": [1]})  # fmt: skip


def test_only_a_message_record_reads_as_version_2() -> None:
    message = {"v": 2, "type": "message", "index": 0, "message": {"role": "user", "content": "x"}}
    assert isinstance(from_json(message), MessageRecord)
    for newer in ({**message, "v": 3}, {"v": 2, "type": "event", "event": {"event": "start"}}):
        with pytest.raises(MalformedRecord, match="newer than this agentctl reads"):
            from_json(newer)
