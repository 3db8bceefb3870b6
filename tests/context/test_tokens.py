"""The estimator's documented rule, checked on hand-counted strings and blocks."""

from __future__ import annotations

import pytest

from agentctl.context.tokens import (
    BLOCK_OVERHEAD,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    TOOLS_PREAMBLE,
    estimate_block_tokens,
    estimate_request_tokens,
    estimate_system_tokens,
    estimate_text_tokens,
    estimate_tool_tokens,
    request_positions,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("Do the task.", 4),  # Do | the | task | .
        ("Hello, world!\n    return x", 7),  # newline + indent is one piece
        ("internationalization", 2),  # letter runs split every 10
        ("12345", 2),  # digits split every 3
        ("日本", 2),  # one per non-ASCII character
        ('{"a":1}', 5),  # {" | a | ": | 1 | }
    ],
)
def test_text_rule(text: str, tokens: int) -> None:
    assert estimate_text_tokens(text) == tokens


def test_blocks_count_content_plus_overheads() -> None:
    text = {"type": "text", "text": "word " * 10}
    use = {"type": "tool_use", "id": "t0", "name": "read", "input": {"path": "/0"}}
    result = {"type": "tool_result", "tool_use_id": "t0", "content": "word " * 10}
    assert estimate_block_tokens(text) == BLOCK_OVERHEAD + 10
    assert estimate_block_tokens(use) == 17  # 2 + 8 + read + {" path ": "/ 0 "}
    assert estimate_block_tokens(result) == 2 + 8 + 10
    assert estimate_block_tokens({"type": "image", "source": {}}) == BLOCK_OVERHEAD + IMAGE_TOKENS


def test_result_content_list_and_markers() -> None:
    inner = [{"type": "text", "text": "word " * 5}, {"type": "text", "text": "x"}]
    block = {"type": "tool_result", "tool_use_id": "t", "content": inner}
    assert estimate_block_tokens(block) == 2 + 8 + (2 + 5) + (2 + 1)
    marked = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
    assert estimate_block_tokens(marked) == estimate_block_tokens({"type": "text", "text": "hi"})


def test_thinking_ignores_signature_redacted_by_length() -> None:
    short = {"type": "thinking", "thinking": "hmm " * 7, "signature": "A" * 400}
    assert estimate_block_tokens(short) == 2 + 7
    assert estimate_block_tokens({"type": "redacted_thinking", "data": "Z" * 41}) == 2 + 11


def test_tools_custom_and_server_defined() -> None:
    custom = {"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}}
    # 8 + read + (Read a file .) + ({" type ": " object "})
    assert estimate_tool_tokens(custom) == 8 + 1 + 4 + 6
    assert estimate_tool_tokens({"type": "memory_20250818", "name": "memory"}) == 500
    assert estimate_tool_tokens({"type": "bash_20250124", "name": "bash"}) == 245
    assert estimate_tool_tokens({"type": "mystery_20990101", "name": "m"}) == 300


def test_request_total_is_the_sum_of_its_positions() -> None:
    request = {
        "tools": [{"type": "memory_20250818", "name": "memory"}],
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "Do the task."},
            {"role": "assistant", "content": []},
        ],
    }
    expected = (500 + TOOLS_PREAMBLE) + (2 + 3) + (MESSAGE_OVERHEAD + 2 + 4) + MESSAGE_OVERHEAD
    assert estimate_request_tokens(request) == expected
    assert sum(p.tokens for p in request_positions(request)) == expected
    assert estimate_system_tokens(None) == 0
    assert estimate_system_tokens([{"type": "text", "text": "Be brief."}]) == 5
