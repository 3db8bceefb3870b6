"""The compaction engine (context/compaction.py) on hand-computed cases.

Token figures follow the estimator rule (docs/context.md; tests/emulator/test_editing.py):
the opening user message "read the files" is 9 tokens, a tool_use `rf {"p":"a"}` 37, a
tool_result of N words N + N // 10 + 30. `conversation(100, words=500)` is
9 + 100 * (37 + 580) = 61,709.
"""

from __future__ import annotations

from typing import Any

from agentctl.agent.request import build_context_management
from agentctl.context.compaction import (
    DEFAULT_SUMMARY_PROMPT,
    MAX_LINES,
    compact,
    compacted,
    opening_summary,
    summarize,
    summarized_turns,
    summary_task,
)
from agentctl.context.tokens import estimate_request_tokens, estimate_text_tokens
from agentctl.context.validate import validate_compaction_blocks
from tests.emulator.helpers import conversation

BIG = 61_709


def edit(trigger: int = 50_000, **extra: Any) -> dict[str, Any]:
    return {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": trigger},
        **extra,
    }


def body(messages: list[dict[str, Any]], *edits: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": messages, "context_management": {"edits": list(edits)}}


def summary_block(text: str) -> dict[str, Any]:
    return {"type": "compaction", "content": text}


def test_big_conversation_is_61709_tokens() -> None:
    assert estimate_request_tokens(body(conversation(100, words=500))) == BIG


def test_compaction_fires_when_the_prompt_reaches_the_trigger() -> None:
    assert compact(body(conversation(100, words=500), edit(BIG + 1))) is None
    done = compact(body(conversation(100, words=500), edit(BIG)))
    assert done is not None
    assert done.input_tokens == BIG + estimate_text_tokens(DEFAULT_SUMMARY_PROMPT)
    assert done.output_tokens == estimate_text_tokens(done.summary)
    assert done.pause is False
    assert done.request["messages"] == [{"role": "user", "content": [summary_block(done.summary)]}]


def test_no_strategy_no_compaction_and_instructions_replace_the_prompt() -> None:
    assert compact(body(conversation(100, words=500))) is None
    done = compact(body(conversation(100, words=500), edit(instructions="Keep words")))
    assert done is not None
    assert done.input_tokens == BIG + 2  # "Keep words": two tokens, not the default prompt
    paused = compact(body(conversation(100, words=500), edit(pause_after_compaction=True)))
    assert paused is not None and paused.pause is True


def test_summary_of_a_small_conversation() -> None:
    messages = [
        {"role": "user", "content": "Find the apples.\nAll of them."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading.\nsecond line"},
                {"type": "tool_use", "id": "a", "name": "read_file", "input": {"path": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "a", "content": "one\nred apples"}],
        },
    ]
    assert summarize(messages) == (
        "<summary>\n<task>\nFind the apples.\nAll of them.\n</task>\n"
        '<progress turns="1">\n- said: Reading.\n'
        '- read_file {"path": "x"} -> one\n</progress>\n</summary>'
    )
    # Instructions pick the result line that names one of their words.
    assert "-> red apples" in summarize(messages, "Keep everything about apples")


def test_later_summary_carries_the_task_turns_and_lines() -> None:
    first = summarize(conversation(2))
    assert summary_task(first) == "read the files"
    assert summarized_turns(first) == 2
    view = [
        {"role": "user", "content": [summary_block(first)]},
        {"role": "assistant", "content": [{"type": "text", "text": "next"}]},
    ]
    second = summarize(view)
    assert summary_task(second) == "read the files"
    assert summarized_turns(second) == 3
    assert second.count('- rf {"p": "a"} -> word') == 2
    assert second.endswith("- said: next\n</progress>\n</summary>")


def test_summary_keeps_only_the_last_lines() -> None:
    text = summarize(conversation(MAX_LINES + 5))
    assert "(5 earlier lines dropped)" in text
    assert text.count("- rf") == MAX_LINES


def test_a_task_that_quotes_the_tags_does_not_fool_the_parser() -> None:
    task = 'do <progress turns="99"> things'
    text = summarize([{"role": "user", "content": task}])
    assert summary_task(text) == task
    assert summarized_turns(text) == 0


def test_compacted_drops_everything_before_the_last_summary() -> None:
    history = [
        *conversation(2),
        {"role": "assistant", "content": [summary_block("old")]},
        {"role": "user", "content": "more"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "x"},
                summary_block("new"),
                {"type": "text", "text": "y"},
            ],
        },
        {"role": "user", "content": "go"},
    ]
    assert compacted({"messages": history})["messages"] == [
        {"role": "user", "content": [summary_block("new")]},
        {"role": "assistant", "content": [{"type": "text", "text": "y"}]},
        {"role": "user", "content": "go"},
    ]
    assert opening_summary(compacted({"messages": history})["messages"]) == "new"


def test_failed_compaction_blocks_are_no_ops() -> None:
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [{"type": "compaction", "content": None}]},
        {"role": "user", "content": "go"},
    ]
    assert compacted({"messages": history})["messages"] == history


def test_compaction_block_needs_the_strategy_and_content() -> None:
    history = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [summary_block("s")]},
    ]
    assert validate_compaction_blocks(body(history)) == (
        "messages.1.content.0: `compaction` blocks require a `compact_20260112` strategy in "
        "`context_management.edits`."
    )
    assert validate_compaction_blocks(body(history, edit())) is None
    history[1]["content"] = [summary_block("")]
    assert validate_compaction_blocks(body(history, edit())) == (
        "messages.1.content.0.content: String should have at least 1 character"
    )


def test_batched_clearing_steers_on_the_compacted_history() -> None:
    """The server counts and clears on the whole history, compaction block or not; the walk
    measures what the model reads. Here nothing after the block passes the trigger, so the
    request must clear nothing although the whole history is far above it."""
    from agentctl.context.engine import edit_as_server
    from agentctl.profile.settings import ClearToolUses, Compaction, ContextEditing

    tu = ClearToolUses(strategy="batched", trigger=1_000, low_water=500, keep=1)
    history = [
        *conversation(30),  # 30 tool uses before the summary: the model no longer reads them
        {"role": "assistant", "content": [summary_block("s"), tool_use_block(99)]},
        {"role": "user", "content": [result_block(99)]},
    ]
    request: dict[str, Any] = {"model": "m", "messages": history}
    assert estimate_request_tokens(request) > 1_000 > estimate_request_tokens(compacted(request))
    with_summary = ContextEditing(tu, compaction=Compaction(enabled=True))
    edits = build_context_management(with_summary, request)
    assert edits is not None
    # Before the first clearing, with a summary in the history: a trigger on the tool uses
    # in it (31), which the server's count never exceeds.
    assert edits["edits"][0]["trigger"] == {"type": "tool_uses", "value": 31}
    assert edits["edits"][-1]["type"] == "compact_20260112"
    out = edit_as_server({**request, "context_management": edits})
    assert out.applied_edits == []
    plain = build_context_management(ContextEditing(tu), request)
    assert plain is not None  # without the summary the walk sees the whole history
    assert plain["edits"][0]["trigger"]["type"] == "tool_uses"
    assert plain["edits"][0]["keep"] == {"type": "tool_uses", "value": 1}


def tool_use_block(i: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{i}", "name": "rf", "input": {"p": "a"}}


def result_block(i: int) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * 50}
