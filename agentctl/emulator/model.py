"""The emulated model: what it produces (Reply), the Model seam, and the scripted model."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentctl.context.compaction import opening_summary, summarized_turns
from agentctl.emulator.conversations import CONVERSATIONS, Held, conversation_key
from agentctl.emulator.structured import shaped_answer
from agentctl.emulator.validation import thinking_enabled

Json = dict[str, Any]

STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal", "pause_turn")


@dataclass(frozen=True)
class TextOut:
    """A text block the model writes."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingOut:
    """A thinking block (only emitted when the request turns thinking on)."""

    thinking: str
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class ToolCall:
    """A tool_use block; the id is assigned when the message is built."""

    name: str
    input: Json
    type: Literal["tool_use"] = "tool_use"


Block = TextOut | ThinkingOut | ToolCall


@dataclass(frozen=True)
class Reply:
    """One assistant turn; stop_reason None = tool_use if it calls tools, else end_turn."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    stop_sequence: str | None = None
    output_tokens: int | None = None  # overrides the estimate when set


class Model(Protocol):
    """Produces the next assistant turn from the EDITED request, as the real model would see it."""

    def reply(self, request: Json) -> Reply:
        """The next turn; must be deterministic for the same request."""
        ...


def assistant_turns(request: Json) -> int:
    """How many assistant turns the conversation already has; after a compaction, the turns
    its summary says it covers plus those since."""
    return summarized(request) + _counted(request, _ASSISTANT_TURNS, _assistant)


def _assistant(message: Json) -> int:
    return int(message.get("role") == "assistant")


def summarized(request: Json) -> int:
    """The turns a compaction summary opening the conversation says it covers (0 without)."""
    summary = opening_summary(request["messages"])
    return _turns_in(summary) if summary is not None else 0


@functools.lru_cache(maxsize=CONVERSATIONS)
def _turns_in(summary: str) -> int:
    """`summarized_turns`, read once per summary (every request after a compaction opens
    with the same one)."""
    return summarized_turns(summary)


def script_position(request: Json, held: Held[list[int]] | None = None) -> int:
    """Sampling steps so far: one per assistant message, plus one per server tool call (the
    model continues after each inside the same response), less one per assistant message that
    ends on a server tool result (its continuation has not been sampled yet: a pause_turn);
    after a compaction, the turns its summary covers come first. With `held`, the steps of the
    messages a conversation's earlier request shares are not counted again."""
    return summarized(request) + _counted(request, held, _steps)


# Per conversation, the assistant messages before each message of its last request.
_ASSISTANT_TURNS: Held[list[int]] = Held()


def _counted(request: Json, held: Held[list[int]] | None, count: Callable[[Json], int]) -> int:
    """The sum of `count` over the request's messages; with `held`, the sums kept for the
    messages the conversation's last request shares are not taken again."""
    messages = request["messages"]
    if held is None:
        return sum(map(count, messages))
    key = (conversation_key(request), None)
    with _TALLYING:  # a kept tally is cut and extended in place, not copied
        shared, sums = held.recall(key, messages)
        sums = [0] if sums is None else sums  # the sum before each message
        del sums[shared + 1 :]
        for message in messages[shared:]:
            sums.append(sums[-1] + count(message))
        held.keep(key, messages, sums)
        return sums[len(messages)]


_TALLYING = threading.Lock()


def _steps(message: Json) -> int:
    """The sampling steps one message stands for (see `script_position`)."""
    if message.get("role") != "assistant":
        return 0
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    calls = sum(1 for b in blocks if b.get("type") == "server_tool_use")
    open_end = bool(blocks) and str(blocks[-1].get("type", "")).endswith("_tool_result")
    return 1 + calls - int(open_end)


@dataclass(frozen=True)
class ScriptTurn:
    """One scripted assistant turn: thinking, text, then tool calls."""

    thinking: str | None = None
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    stop_sequence: str | None = None
    output_tokens: int | None = None

    def to_reply(self, with_thinking: bool) -> Reply:
        """The Reply for this turn; thinking is dropped when the request did not enable it."""
        blocks: list[Block] = []
        if self.thinking and with_thinking:
            blocks.append(ThinkingOut(self.thinking))
        if self.text:
            blocks.append(TextOut(self.text))
        blocks.extend(self.tool_calls)
        return Reply(tuple(blocks), self.stop_reason, self.stop_sequence, self.output_tokens)


@dataclass(frozen=True)
class Script:
    """A list of assistant turns; past its end the model ends the turn with `final_text`."""

    turns: tuple[ScriptTurn, ...] = ()
    final_text: str = "Done: the script has no more turns."
    source: str = "<script>"
    # The context window the emulator enforces while this script plays (None: the model's,
    # from context.prices): a small one lets a short script reach it.
    context_window: int | None = None


class ScriptedModel:
    """Replays a Script. The position is the number of assistant turns so far (a function of
    the request; what each conversation's last request counted is kept to save the walk)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._steps: Held[list[int]] = Held()

    def reply(self, request: Json) -> Reply:
        position = script_position(request, self._steps)
        if position < len(self.script.turns):
            return self.script.turns[position].to_reply(thinking_enabled(request))
        return Reply((TextOut(shaped_answer(request, self.script.final_text)),), "end_turn")
