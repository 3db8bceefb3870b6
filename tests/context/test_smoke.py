"""First slice: the engine, cache and estimator agree with each other on a small session."""

from __future__ import annotations

from typing import Any

from agentctl.context.cache import PromptCache
from agentctl.context.engine import apply_context_edits, validate_edits
from agentctl.context.tokens import estimate_request_tokens


def _session(rounds: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Do the task."}]
    for i in range(rounds):
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"/{i}"}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * 500}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return {"model": "claude-sonnet-5", "max_tokens": 10, "messages": messages}


def test_clearing_then_cache_accounting_add_up() -> None:
    request = _session(6)
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100}}
    outcome = apply_context_edits(request, [edit])
    assert outcome.applied_edits[0]["cleared_tool_uses"] == 3
    cleared = outcome.applied_edits[0]["cleared_input_tokens"]
    assert outcome.original_input_tokens - outcome.input_tokens == cleared
    usage = PromptCache(clock=lambda: 0.0).account(
        {**outcome.request, "cache_control": {"type": "ephemeral"}}, "claude-sonnet-5"
    )
    assert usage.cache_creation_input_tokens == estimate_request_tokens(outcome.request)
    assert validate_edits({**request, "context_management": {"edits": [edit]}}) is None
