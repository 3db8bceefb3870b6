"""The model's context window, enforced by the emulator over HTTP with the real SDK."""

from __future__ import annotations

import anthropic
import pytest

from agentctl.context.prices import DEFAULT_CONTEXT_WINDOW, context_window
from agentctl.context.tokens import estimate_request_tokens
from agentctl.emulator.model import Script, ScriptTurn
from agentctl.emulator.script import parse_script
from agentctl.emulator.server import running
from agentctl.errors import ConfigError

from .helpers import make_client, request

LONG = Script((ScriptTurn(text="word " * 400),))  # about 400 output tokens


def prompt_tokens() -> int:
    return estimate_request_tokens(request())


def test_a_prompt_above_the_window_is_the_apis_400_naming_both_sizes() -> None:
    size = prompt_tokens()
    with (
        running(context_window=size - 1) as emu,
        pytest.raises(anthropic.BadRequestError) as caught,
    ):
        make_client(emu.base_url).beta.messages.create(**request())
    assert caught.value.status_code == 400
    assert f"prompt is too long: {size} tokens > {size - 1} maximum" in str(caught.value)
    assert len(emu.requests) == 1


def test_output_that_would_run_past_the_window_stops_there() -> None:
    size = prompt_tokens()
    with running(script=LONG, context_window=size + 50) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(max_tokens=1000))
    assert message.stop_reason == "model_context_window_exceeded"
    assert message.usage.output_tokens == 50
    text = message.content[0].text  # type: ignore[union-attr]
    assert 0 < len(text) < len("word " * 400)


def test_max_tokens_below_the_room_left_still_stops_at_max_tokens() -> None:
    size = prompt_tokens()
    with running(script=LONG, context_window=size + 500) as emu:
        client = make_client(emu.base_url)
        capped = client.beta.messages.create(**request(max_tokens=100))
        whole = client.beta.messages.create(**request(max_tokens=1000))
    assert (capped.stop_reason, capped.usage.output_tokens) == ("max_tokens", 100)
    assert whole.stop_reason == "end_turn"  # ~400 tokens fit in the 500 left


def test_the_window_comes_from_the_model_table_unless_the_script_sets_one() -> None:
    assert context_window("claude-sonnet-5") == 1_000_000  # `/v1/models` max_input_tokens
    assert context_window("claude-sonnet-4-5-20250929") == 1_000_000
    assert context_window("claude-opus-4-5") == context_window("claude-haiku-4-5") == 200_000
    assert context_window("not-a-claude-id") == DEFAULT_CONTEXT_WINDOW
    script = parse_script({"context_window": 3000, "turn": [{"text": "hi"}]})
    assert script.context_window == 3000
    with pytest.raises(ConfigError, match="context_window: must be a positive integer"):
        parse_script({"context_window": 0})
