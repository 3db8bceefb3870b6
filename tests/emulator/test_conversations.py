"""The shared engine keeps its editing state per conversation, for a bounded number of them."""

from __future__ import annotations

import json
import random

from agentctl.context.cache import PromptCache
from agentctl.context.engine import edit_as_server
from agentctl.context.server_model import ServerModel
from agentctl.emulator.context_engine import SharedEngine
from agentctl.emulator.conversations import CONVERSATIONS
from tests.context.test_incremental import MARKER, conversation

TOOL = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 1500}}
COMPACT = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}


def _bodies(seed: int) -> list[dict[str, object]]:
    history = conversation(random.Random(seed), 30, unanswered=0)
    out: list[dict[str, object]] = []
    for count in range(3, len(history) + 1, 2):
        messages = json.loads(json.dumps(history[:count]))
        last = messages[-1]["content"]
        if isinstance(last, list) and last:
            last[-1]["cache_control"] = MARKER
        out.append({"model": "claude-sonnet-5", "max_tokens": 10, "messages": messages,
                    "context_management": {"edits": [TOOL, COMPACT]}})  # fmt: skip
    return out


def test_interleaved_conversations_are_edited_and_accounted_as_from_scratch() -> None:
    now = [0.0]
    engine = SharedEngine(lambda: now[0], ServerModel())
    fresh = PromptCache(lambda: now[0])
    runs = [_bodies(seed) for seed in (1, 2, 3)]
    compared = 0
    for step in range(max(len(r) for r in runs)):
        for bodies in runs:
            if step >= len(bodies):
                continue
            body = bodies[step]
            now[0] += 5.0
            assert engine.validate(body) is None
            edited = engine.edit(body)
            expected = edit_as_server(body)
            assert edited.request == expected.request
            assert edited.applied_edits == expected.applied_edits
            assert edited.input_tokens == expected.input_tokens
            assert engine.account(edited.request, "claude-sonnet-5") == fresh.account(
                expected.request, "claude-sonnet-5"
            )
            compared += 1
    assert compared > 40
    assert sum(c.editor.scratch for c in engine._conversations.values()) == 0


def test_the_engine_keeps_the_most_recent_conversations_only() -> None:
    engine = SharedEngine(lambda: 0.0, ServerModel())
    for n in range(CONVERSATIONS + 10):
        engine.edit(
            {"model": "claude-sonnet-5", "messages": [{"role": "user", "content": f"task {n}"}]}
        )
    assert len(engine._conversations) == CONVERSATIONS
