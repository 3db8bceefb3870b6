"""The `memory: when told` model (save-before-clear), on requests built by hand."""

from __future__ import annotations

from typing import Any

from agentctl.emulator.policy import DefaultPolicy, told

TOLD_TASK = "Collect every FINDING line.\n\nmemory: when told\n"
NOTICE = {"type": "text", "text": "Results get cleared soon: save what you need to memory."}


def _told_request(*, notice: bool, placeholder: str = "[cleared]") -> dict[str, Any]:
    listing = {"type": "tool_use", "id": "t1", "name": "list_files", "input": {"path": "."}}
    read = {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "a.txt"}}
    results = [{"type": "tool_result", "tool_use_id": "t2",
                "content": "     1\tnoise\n     2\tFINDING 7: the valve\n"}]  # fmt: skip
    return {
        "tools": [{"type": "memory_20250818", "name": "memory"}, *(
            {"name": n, "input_schema": {"type": "object"}} for n in ("list_files", "read_file")
        )],
        "messages": [
            {"role": "user", "content": TOLD_TASK},
            {"role": "assistant", "content": [listing]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt\nb.txt"}]},
            {"role": "assistant", "content": [read]},
            {"role": "user", "content": [*results, *([NOTICE] if notice else [])]},
        ],
    }  # fmt: skip


def test_the_when_told_model_saves_only_right_after_the_notice() -> None:
    policy = DefaultPolicy("[cleared]")
    quiet = policy.reply(_told_request(notice=False))
    assert [(c.name, c.input.get("path")) for c in quiet.blocks] == [("read_file", "b.txt")]
    assert not told(_told_request(notice=False))
    saved = policy.reply(_told_request(notice=True))
    (call,) = saved.blocks
    assert call.name == "memory" and call.input["command"] == "create"
    assert "- a.txt: FINDING 7: the valve" in call.input["file_text"]
    assert "Plan: a.txt | b.txt" in call.input["file_text"]
    # A text that does not mention memory, or one before the results, is not the notice.
    other = _told_request(notice=True)
    other["messages"][-1]["content"][-1] = {"type": "text", "text": "Keep going."}
    assert not told(other)
    before = _told_request(notice=True)
    before["messages"][-1]["content"].reverse()
    assert not told(before)


def test_the_notice_is_no_follow_up_but_other_text_beside_results_is() -> None:
    from agentctl.emulator.followup_answers import follow_up

    messages = _told_request(notice=True)["messages"]
    assert follow_up(messages) is None
    messages[-1]["content"][-1] = {"type": "text", "text": "Which file names the valve?"}
    assert follow_up(messages) == (4, "Which file names the valve?")
