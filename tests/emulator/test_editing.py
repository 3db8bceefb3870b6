"""Server-side context editing through the emulator, with figures hand-computed from the
estimator rule (docs/context.md): a word of letters = 1 piece, single spaces free, 1-2
punctuation characters = 1 piece, N pieces = N + N // 10 tokens; +2 per block, +4 per message,
+24 tool_use/tool_result framing, +20 per thinking block.

Per-block figures used below:
  user "read the files"                  3 + 2 + 4 (message)        =  9
  tool_use rf {"p":"a"}                  24 + 1 (rf) + 6 ({" p ": " a "}) + 2 + 4  = 37
  tool_result "word " * 50               24 + (50 + 5) + 2 + 4      = 85
  default placeholder "[Tool result cleared by context management]": [ Tool result
  cleared by context management ] = 8 tokens -> cleared block 24 + 8 + 2 = 34 (was 81)
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agentctl.context.server_model import parse_server_model
from agentctl.emulator.model import Reply, Script, TextOut
from agentctl.emulator.server import running

from .helpers import BETA, MODEL, conversation, make_client, request

THINKING = {"type": "enabled", "budget_tokens": 1024}


class SpyModel:
    """Records the (edited) requests the model is shown."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def reply(self, request: dict[str, Any]) -> Reply:
        self.seen.append(request)
        return Reply((TextOut("ok"),))


def clear_tool_uses(**fields: Any) -> dict[str, Any]:
    return {"type": "clear_tool_uses_20250919", **fields}


def tokens(value: int, kind: str = "input_tokens") -> dict[str, Any]:
    return {"type": kind, "value": value}


def create(emu: Any, edits: list[dict[str, Any]], **extra: Any) -> Any:
    body = request(messages=extra.pop("messages", conversation(3)), betas=[BETA], **extra)
    body["context_management"] = {"edits": edits}
    return make_client(emu.base_url).beta.messages.create(**body)


def test_uncleared_conversation_is_375_tokens() -> None:
    with running(script=Script()) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            **request(messages=conversation(3))
        )
    assert message.usage.input_tokens == 9 + 3 * 37 + 3 * 85 == 375
    assert message.context_management is None


def test_clear_oldest_results_beyond_keep() -> None:
    edit = clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses"))
    spy = SpyModel()
    with running(model=spy) as emu:
        message = create(emu, [edit])
    applied = [e.to_dict() for e in message.context_management.applied_edits]
    assert applied == [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 94}
    ]
    assert message.usage.input_tokens == 375 - 2 * (81 - 34) == 281
    contents = [m["content"][0].get("content") for m in spy.seen[0]["messages"][2::2]]
    placeholder = "[Tool result cleared by context management]"
    assert contents == [placeholder, placeholder, "word " * 50]  # the model saw the edit


def test_placeholder_is_a_setting() -> None:
    edit = clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses"))
    with running(
        script=Script(), server_model=parse_server_model("unedited,placeholder=[cleared]")
    ) as emu:
        message = create(emu, [edit])
    # "[cleared]" = [ cleared ] = 3 tokens -> cleared block 29, saves 52 per result
    assert message.context_management.applied_edits[0].cleared_input_tokens == 104
    assert message.usage.input_tokens == 271


def test_trigger_not_reached_gives_empty_applied_edits() -> None:
    with running(script=Script()) as emu:
        message = create(emu, [clear_tool_uses(trigger=tokens(375))])  # must exceed, not equal
    assert message.context_management.applied_edits == []
    assert message.usage.input_tokens == 375


def test_clear_at_least_unmet_applies_nothing() -> None:
    edit = clear_tool_uses(
        trigger=tokens(100), keep=tokens(1, "tool_uses"), clear_at_least=tokens(95)
    )
    with running(script=Script()) as emu:
        message = create(emu, [edit])
    assert message.context_management.applied_edits == []
    assert message.usage.input_tokens == 375


def test_tool_uses_trigger_and_exclude_tools() -> None:
    messages = conversation(3)
    messages[1]["content"][0]["name"] = "memory"  # t1 is a memory call: excluded
    edit = clear_tool_uses(
        trigger=tokens(2, "tool_uses"), keep=tokens(1, "tool_uses"), exclude_tools=["memory"]
    )
    with running(script=Script()) as emu:
        message = create(emu, [edit], messages=messages)
    # candidates t2, t3; keep 1 -> only t2 cleared (47 tokens); "memory" costs like "rf" (1)
    assert message.context_management.applied_edits[0].cleared_tool_uses == 1
    assert message.context_management.applied_edits[0].cleared_input_tokens == 47


def test_clear_tool_inputs_also_clears_the_calls() -> None:
    edit = clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses"), clear_tool_inputs=True)
    with running(script=Script()) as emu:
        message = create(emu, [edit])
    # input {"p":"a"} (6 tokens) becomes {} ({} = 1 token): 5 more per pair
    assert message.context_management.applied_edits[0].cleared_input_tokens == 94 + 2 * 5


def test_clear_thinking_keeps_the_last_turns() -> None:
    edits = [
        {"type": "clear_thinking_20251015", "keep": tokens(1, "thinking_turns")},
        clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses")),
    ]
    with running(script=Script()) as emu:
        message = create(
            emu, edits, messages=conversation(3, thinking=True), thinking=THINKING, max_tokens=2000
        )
    applied = [e.to_dict() for e in message.context_management.applied_edits]
    # each thinking block "one two three" = 3 + 20 + 2 = 25 tokens, of which the 3 of its text
    # are reported; the answered (last) turn keeps its thinking, the two older ones lose theirs
    assert applied == [
        {
            "type": "clear_thinking_20251015",
            "cleared_thinking_turns": 2,
            "cleared_input_tokens": 6,
        },
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2, "cleared_input_tokens": 94},
    ]
    assert message.usage.input_tokens == 375 + 3 * 25 - 50 - 94


def test_count_tokens_reports_before_and_after() -> None:
    edit = clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses"))
    with running(script=Script()) as emu:
        counted = make_client(emu.base_url).beta.messages.count_tokens(
            model=MODEL,
            messages=conversation(3),
            betas=[BETA],
            context_management={"edits": [edit]},
        )
    assert counted.input_tokens == 281
    assert counted.context_management.original_input_tokens == 375


def test_streamed_context_management_matches() -> None:
    edit = clear_tool_uses(trigger=tokens(100), keep=tokens(1, "tool_uses"))
    body = request(messages=conversation(3), betas=[BETA])
    body["context_management"] = {"edits": [edit]}
    with (
        running(script=Script()) as emu,
        make_client(emu.base_url).beta.messages.stream(**body) as stream,
    ):
        final = stream.get_final_message()
    assert final.context_management.applied_edits[0].cleared_input_tokens == 94
    assert final.usage.input_tokens == 281


@pytest.mark.parametrize(
    ("edits", "extra", "message"),
    [
        (
            [{"type": "clear_thinking_20251015", "keep": "all"}],
            {},
            "`clear_thinking_20251015` strategy requires `thinking` to be enabled or adaptive",
        ),
        (
            [clear_tool_uses(), {"type": "clear_thinking_20251015", "keep": "all"}],
            {"thinking": THINKING, "max_tokens": 2000},
            "`clear_thinking_20251015` must be the first strategy",
        ),
        ([{"type": "clear_everything"}], {}, "context_management.edits.0: Input tag"),
        ([clear_tool_uses(keep=tokens(-1, "tool_uses"))], {}, "context_management.edits.0"),
        ([clear_tool_uses(trigger={"type": "bananas", "value": 3})], {}, "trigger"),
    ],
)
def test_bad_edits_are_400(edits: list[Any], extra: dict[str, Any], message: str) -> None:
    with running(script=Script()) as emu, pytest.raises(anthropic.BadRequestError) as caught:
        create(emu, edits, **extra)
    assert message in caught.value.body["error"]["message"]  # type: ignore[index]


def test_context_management_without_beta_is_400() -> None:
    body = request(context_management={"edits": [clear_tool_uses()]})
    with running(script=Script()) as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).beta.messages.create(**body)
    error = caught.value.body["error"]  # type: ignore[index]
    assert error == {
        "type": "invalid_request_error",
        "message": "context_management: Extra inputs are not permitted",
    }
