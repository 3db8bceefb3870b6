"""Save-before-clear: when to tell the model, once, to write to memory what it still needs.

The notice is a text block appended, after the tool_result blocks, to the user message that
answers a turn's tool calls (the API takes text there, after the results). It stays in the
history like any message, so later requests send the same prefix and the cache holds.

When: the turn just answered reported its prompt's distance to the clear_tool_uses trigger
(`distance`, the figure the turn table shows as "to trig", negated). The
next request adds what this turn added (the reply and its tool results, estimated by
`context.tokens`); the forecast assumes the request after it adds as much again. The notice
rides with this turn's tool results when the request after next is expected to cross the
trigger (so the model reads it in the last request before a clearing can happen), or when
the next one is (at the latest, the crossing request). Once: never again once sent (the
history holds it: a resumed run finds it there) or once a clearing was reported. With
`repeat` and batched clearing, once per clearing cycle: each clearing (a batch) arms it again,
so the next approach to the trigger gets its own notice. The server strategy clears on every
request past the trigger: there is no next approach, and `repeat` does nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.tokens import estimate_message_tokens
from agentctl.profile.settings import ClearToolUses, ContextEditing, Profile
from agentctl.types import AppliedEdit, Usage

Message = Mapping[str, Any]


def offered(editing: ContextEditing, memory: bool) -> bool:
    """Whether a run can send the notice at all: the setting on, the memory tool offered
    (`memory`), clear_tool_uses on with an input_tokens trigger (the one "to trig" measures)."""
    edit = editing.tool_uses
    return (
        editing.checkpoint.enabled
        and memory
        and edit.enabled
        and edit.trigger_kind == "input_tokens"
    )


def notice_block(editing: ContextEditing) -> dict[str, Any]:
    """The text block the notice is."""
    return {"type": "text", "text": editing.checkpoint.wording}


def already_sent(profile: Profile, messages: Sequence[Message]) -> bool:
    """The history already holds the notice (in a user message, as a text block)."""
    wording = profile.context_editing.checkpoint.wording
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        if any(isinstance(b, Mapping) and b.get("text") == wording for b in content):
            return True
    return False


def cleared_uses(edits: Sequence[AppliedEdit]) -> int:
    """The tool uses a response reports cleared (the server reports the whole cleared set on
    every request: a clearing happened when this count changes)."""
    return sum(e.cleared_tool_uses for e in edits if e.type.startswith("clear_tool_uses"))


def distance(edit: ClearToolUses, usage: Usage, applied: Sequence[AppliedEdit]) -> int | None:
    """Prompt size before editing minus the clear_tool_uses trigger (negative: below it);
    None without a token trigger. What a run computes from each response and a replay from
    each replayed turn.

    The server compares the unedited prompt with the trigger; `usage` reports the prompt after
    editing, so the tokens the edits cleared are added back. Batched clearing compares the
    prompt as edited (the trigger is its high-water mark): the distance to the next batch.
    """
    if not edit.enabled or edit.trigger_kind != "input_tokens":
        return None
    if edit.strategy == "batched":
        return usage.prompt_tokens - edit.trigger
    cleared = sum(e.cleared_input_tokens for e in applied)
    return usage.prompt_tokens + cleared - edit.trigger


def due(distance: int | None, added: Sequence[Message]) -> bool:
    """The notice goes with this turn's tool results: `distance` is the turn's prompt minus the
    trigger (`distance`; None: no token trigger), `added` the messages this turn
    appended (its reply and its tool results). True when the request after next, growing as
    this turn did, is expected to exceed the trigger (the server clears past it)."""
    if distance is None:
        return False
    growth = sum(estimate_message_tokens(m) for m in added)
    return distance + 2 * growth > 0


@dataclass
class Tracker:
    """Where a run stands with the notice (the loop holds one)."""

    armed: bool  # the next due turn sends it
    repeat: bool = False  # armed again by each clearing (batched clearing only)
    cleared: int = 0  # tool uses the latest response reported cleared

    @classmethod
    def start(cls, profile: Profile, messages: Sequence[Message]) -> Tracker:
        settings = profile.context_editing
        on = offered(settings, profile.tools.memory)
        armed = on and not already_sent(profile, messages)
        batched = settings.tool_uses.strategy == "batched"
        return cls(armed, on and settings.checkpoint.repeat and batched)

    def observe(self, edits: Sequence[AppliedEdit]) -> None:
        """A response came: a clearing (the cleared count moved) disarms it, or with
        `repeat` arms it for the next one."""
        count = cleared_uses(edits)
        if count != self.cleared:
            self.armed, self.cleared = self.repeat, count

    def take(self, distance: int | None, added: Sequence[Message]) -> bool:
        """Whether this turn's tool results carry the notice (disarms it when they do)."""
        if not self.armed or not due(distance, added):
            return False
        self.armed = False
        return True
