"""The estimator's documented rule, checked on hand-counted strings and blocks."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from agentctl.context.tokens import (
    BLOCK_OVERHEAD,
    COMPACTION_OVERHEAD,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    THINKING_OVERHEAD,
    TOOL_USE_OVERHEAD,
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
        ("12345", 5),  # one per digit
        ("row 12 has", 5),  # row | space before a digit | 1 | 2 | has
        ("日本", 2),  # one per non-ASCII character
        ('{"a":1}', 5),  # {" | a | ": | 1 | }
        ("word " * 10, 11),  # ten pieces and a tenth more
        ("word " * 19, 20),  # 19 pieces + 19 // 10
    ],
)
def test_text_rule(text: str, tokens: int) -> None:
    assert estimate_text_tokens(text) == tokens


def test_blocks_count_content_plus_overheads() -> None:
    text = {"type": "text", "text": "word " * 9}
    use = {"type": "tool_use", "id": "t0", "name": "read", "input": {"path": "/0"}}
    result = {"type": "tool_result", "tool_use_id": "t0", "content": "word " * 9}
    assert estimate_block_tokens(text) == BLOCK_OVERHEAD + 9
    # 2 + framing + read + {" path ": "/ 0 "}
    assert estimate_block_tokens(use) == 2 + TOOL_USE_OVERHEAD + 1 + 6
    assert estimate_block_tokens(result) == 2 + TOOL_USE_OVERHEAD + 9
    assert estimate_block_tokens({"type": "image", "source": {}}) == BLOCK_OVERHEAD + IMAGE_TOKENS


def test_result_content_list_and_markers() -> None:
    inner = [{"type": "text", "text": "word " * 5}, {"type": "text", "text": "x"}]
    block = {"type": "tool_result", "tool_use_id": "t", "content": inner}
    assert estimate_block_tokens(block) == 2 + TOOL_USE_OVERHEAD + (2 + 5) + (2 + 1)
    marked = {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
    assert estimate_block_tokens(marked) == estimate_block_tokens({"type": "text", "text": "hi"})


def test_thinking_ignores_signature_redacted_by_length() -> None:
    short = {"type": "thinking", "thinking": "hmm " * 7, "signature": "A" * 400}
    assert estimate_block_tokens(short) == 2 + THINKING_OVERHEAD + 7
    assert estimate_block_tokens({"type": "redacted_thinking", "data": "Z" * 41}) == 2 + 11


def test_tools_custom_and_server_defined() -> None:
    custom = {"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}}
    # 8 + read + (Read a file .) + ({" type ": " object "})
    assert estimate_tool_tokens(custom) == 8 + 1 + 4 + 6
    assert estimate_tool_tokens({"type": "memory_20250818", "name": "memory"}) == 1220
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
    expected = (1220 + TOOLS_PREAMBLE) + (2 + 3) + (MESSAGE_OVERHEAD + 2 + 4) + MESSAGE_OVERHEAD
    assert estimate_request_tokens(request) == expected
    assert sum(p.tokens for p in request_positions(request)) == expected
    assert estimate_system_tokens(None) == 0
    assert estimate_system_tokens([{"type": "text", "text": "Be brief."}]) == 5


def _png(width: int, height: int) -> str:
    """A real (tiny-bodied) PNG header: signature and IHDR with the given size."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk + b"\0" * 2000).decode()


def _jpeg(width: int, height: int) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\1\1\0\0\1\0\1\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\1\x11\0"
    return base64.b64encode(b"\xff\xd8" + app0 + sof + b"\0" * 500).decode()


def _image(data: str, media: str = "image/png") -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


@pytest.mark.parametrize(
    ("data", "tokens"),
    [
        (_png(200, 150), 40),  # 30,000 pixels / 750
        (_png(3000, 1000), 1093),  # long edge scaled to 1568: 1568 x 522.67 / 750
        (_png(4000, 4000), 1600),  # area capped at 1.2 MP
        (_jpeg(640, 480), 410),  # 307,200 / 750 = 409.6, rounded up
        (base64.b64encode(b"GIF89a" + struct.pack("<HH", 75, 100) + b"\0" * 20).decode(), 10),
        ("not base64 at all!", IMAGE_TOKENS),
    ],
)
def test_images_count_by_their_size_never_their_base64(data: str, tokens: int) -> None:
    assert estimate_block_tokens(_image(data)) == BLOCK_OVERHEAD + tokens
    url = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    assert estimate_block_tokens(url) == BLOCK_OVERHEAD + IMAGE_TOKENS


def test_compaction_block_is_its_summary_in_a_frame_and_a_failed_one_is_free() -> None:
    block = {"type": "compaction", "content": "Summary: user said hello."}
    assert estimate_block_tokens(block) == BLOCK_OVERHEAD + COMPACTION_OVERHEAD + 6
    assert estimate_block_tokens({"type": "compaction", "content": None}) == BLOCK_OVERHEAD


def test_the_text_cache_holds_a_whole_long_history_without_a_cliff() -> None:
    """5,000 turns' strings stay cached (the old 4,096-entry LRU missed every one of them on
    each pass once a history outgrew it); past its budget it counts without holding."""
    from agentctl.context.tokens import _TextCounts

    counts = _TextCounts(budget=10_000_000)
    texts = [f"result {i}: " + "word " * 300 for i in range(5_000)]
    first = [counts(t) for t in texts]
    assert len(counts) == 5_000
    assert [counts(t) for t in texts] == first and len(counts) == 5_000
    small = _TextCounts(budget=3_100)
    assert [small(t) for t in texts[:5]] == first[:5]
    assert len(small) == 2 and small.held <= 3_100
