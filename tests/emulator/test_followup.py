"""The default policy's follow-ups: which user turn is one, and how it is answered."""

from __future__ import annotations

import pytest

from agentctl.emulator.followup_answers import follow_up, follow_up_answer, typed_text, viewed_since
from agentctl.sessions.transcript import FollowUpRecord, MalformedRecord, from_json, to_json

RESULTS = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
}
VIEW = {
    "type": "tool_use",
    "id": "t2",
    "name": "memory",
    "input": {"command": "view", "path": "/memories/n.md"},
}


def test_the_task_and_tool_results_are_no_follow_up() -> None:
    task = {"role": "user", "content": "Summarise."}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    assert follow_up([task]) is None
    assert follow_up([task, answer, RESULTS]) is None
    asked = {"role": "user", "content": "Which one?"}
    assert follow_up([task, answer, asked]) == (2, "Which one?")
    beside = {"role": "user", "content": [*RESULTS["content"], {"type": "text", "text": "And?"}]}
    assert follow_up([task, answer, asked, answer, beside]) == (4, "And?")
    assert typed_text([{"type": "tool_result", "content": "x"}]) == ""


def test_viewed_since_looks_after_the_follow_up_only() -> None:
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [VIEW]},
        {"role": "user", "content": "Which one?"},
    ]
    assert not viewed_since(messages, 2, "/memories/n.md")
    messages.append({"role": "assistant", "content": [VIEW]})
    assert viewed_since(messages, 2, "/memories/n.md")
    assert not viewed_since(messages, 2, "/memories/other.md")


def test_the_answer_keeps_the_facts_naming_the_question_words() -> None:
    facts = {"a.txt": "ratio rose in Oslo", "b.txt": "ratio rose in Lima"}
    text = follow_up_answer("Which note mentions Lima?", facts, "my notes")
    assert "b.txt" in text and "a.txt" not in text and "1 of 2" in text
    other = follow_up_answer("What about Paris?", facts, "my notes")
    assert "Nothing in my notes bears on it" in other and "a.txt" in other and "b.txt" in other
    assert "nothing to report" in follow_up_answer("Why?", {}, "my notes")
    dated = {"a": "renewal 2027-04-01", "b": "renewal 2026-09-30", "c": "notice 2026"}
    assert "- b:" in follow_up_answer("Which renews in 2026?", dated, "my notes")
    assert "- a:" not in follow_up_answer("Which renews in 2026?", dated, "my notes")


def test_the_follow_up_record_round_trips_and_is_checked() -> None:
    record = FollowUpRecord("s1", 8, "Which one?", "list", False, ts=1.5)
    assert from_json(to_json(record)) == record
    with pytest.raises(MalformedRecord, match="new_client"):
        from_json({**to_json(record), "new_client": "no"})
    older = {k: v for k, v in to_json(record).items() if k != "new_client"}
    parsed = from_json(older)
    assert isinstance(parsed, FollowUpRecord) and parsed.new_client
