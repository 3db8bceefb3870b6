"""The one deterministic token estimator of agentctl: request JSON in, token counts out.

Rule (ours; calibrated on real recorded counts and the legacy tokenizer in
`bench/tokens_calibration.py`, figures in docs/context.md): every match of `_PIECE` is one
piece. A piece is a run of up to 10 ASCII letters, one digit, a single space before a digit
(as common BPE pre-tokenizers keep digits apart from the space before them), a newline with
the whitespace after it, a run of 2+ whitespace characters, up to 2 ASCII punctuation
characters, or one non-ASCII character. Other single spaces are free (BPE vocabularies fold
them into the next word). A string of N pieces is N + N // 10 tokens: current models count
about a tenth more than the legacy tokenizer the piece rule was tuned on (a 225,039-character
English text: 55,009 estimated, about 55,085 real).

Structure costs (fitted to recorded usage where a recording settles them, else ours): each
message costs `MESSAGE_OVERHEAD`, each content block `BLOCK_OVERHEAD`, a thinking block
`THINKING_OVERHEAD` more, tool_use / tool_result framing `TOOL_USE_OVERHEAD`, a compaction
block `COMPACTION_OVERHEAD` (the frame the server puts around a summary), a request with tools
pays `TOOLS_PREAMBLE` once (the tool-use system prompt; the docs quote 346 tokens for Claude 4
with `tool_choice` auto). Images count as images (w*h/750 from the size in the image data,
`IMAGE_TOKENS` when it cannot be read), never as their base64 text. `cache_control` markers
and thinking `signature`s never count: the model does not read them.

Every count is additive over *positions* (one per tool definition, system block and message
content block; see `request_positions`), so the cache model can split a prompt at any block
and the pieces sum to `estimate_request_tokens`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.memo import remembered

_PIECE = re.compile(
    r"[A-Za-z]{1,10}|[0-9]| (?=[0-9])|\n\s*|\s{2,}|[!-/:-@\[-`{-~]{1,2}|[^\x00-\x7f]"
)

MESSAGE_OVERHEAD = 4  # role marker and turn separators (ours)
BLOCK_OVERHEAD = 2  # block boundary (ours)
# tool_use / tool_result framing: id, name, wrapper tags. Fitted: a second turn that adds a
# text, a memory tool_use and a 30-character tool_result billed 102 more tokens (sonnet-4-5).
TOOL_USE_OVERHEAD = 24
TOOL_DEF_OVERHEAD = 8  # per custom tool definition (ours)
TOOLS_PREAMBLE = 346  # tool-use system prompt, Claude 4 docs, tool_choice auto/none
# A thinking block's frame beyond its text. Fitted: clearing two short thinking blocks
# (65 estimated text tokens) cut billed input by 110 tokens (847 -> 737, opus-5-5).
THINKING_OVERHEAD = 20
# The frame around a compaction summary. Fitted on five recorded prompts holding one
# (sonnet-4-6): 136, 220, 229, 181 and 239 input tokens leave 84-91 tokens beyond the texts.
COMPACTION_OVERHEAD = 86
IMAGE_TOKENS = 1600  # an image whose size cannot be read: ~1.15 megapixels at w*h/750
IMAGE_MAX_EDGE = 1568  # the vision docs: a longer edge is scaled down first
IMAGE_MAX_PIXELS = 1_200_000  # ... and so is a larger area (ours: 1,600 tokens at most)
PDF_PAGE_GUESS_TOKENS = 3000  # a base64 PDF of unknown length (ours: 1.5k-3k tokens/page in docs)

# Anthropic-defined tools carry a server-side description we never see: fixed costs.
# bash/text_editor/computer figures are the tool-use docs' published overheads; the rest ours.
SERVER_TOOL_TOKENS: dict[str, int] = {
    # Fitted: a one-line question with the memory tool billed 1,577 input tokens and counted
    # 1,581 for another (sonnet-4-5): tools preamble + memory = 1,566.
    "memory": 1220,
    "bash": 245,
    "text_editor": 700,
    "str_replace_editor": 700,
    "str_replace_based_edit_tool": 700,
    "computer": 735,
    "web_search": 300,  # ours
    "web_fetch": 300,  # ours
    "code_execution": 300,  # ours
}
DEFAULT_SERVER_TOOL_TOKENS = 300  # ours: any other typed (non-custom) tool


class _TextCounts:
    """Counts of strings already estimated, held up to `budget` characters of strings.

    Histories are resent whole, so the cache must hold a whole history: a cache that evicts
    (an LRU of a few thousand entries, as before) misses every entry once a history outgrows
    it, since each request walks the history in the same order. This one holds every string
    until the budget is spent, then counts the new ones without keeping them: past the
    budget only what is new costs anything again, never the whole history.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0  # characters of the strings held
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> int:
        count = self._counts.get(text)
        if count is not None:
            return count
        pieces = len(_PIECE.findall(text))
        count = pieces + pieces // 10
        if self.held + len(text) <= self.budget:
            with self._lock:
                self._counts[text] = count
                self.held += len(text)
        return count

    def __len__(self) -> int:
        return len(self._counts)

    def cache_clear(self) -> None:
        with self._lock:
            self._counts.clear()
            self.held = 0


# 256 M characters of strings: several thousand turns of 9 kB results; the strings are the
# history's own objects (most of them), so holding them adds little memory.
TEXT_CACHE_CHARS = 256 << 20
estimate_text_tokens = _TextCounts(TEXT_CACHE_CHARS)
"""Tokens of a plain string by the `_PIECE` rule; cached (histories are resent)."""


def _json_tokens(value: Any) -> int:
    """Tokens of a JSON value as the model reads it: compact JSON text."""
    if isinstance(value, str):
        return estimate_text_tokens(value)
    return estimate_text_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _content_tokens(content: Any) -> int:
    """tool_result / search result content: a string, a list of blocks, or any JSON."""
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_text_tokens(content)
    if isinstance(content, list):
        return sum(
            estimate_block_tokens(b) if isinstance(b, Mapping) else _json_tokens(b) for b in content
        )
    return _json_tokens(content)


def _document_tokens(block: Mapping[str, Any]) -> int:
    source = block.get("source") or {}
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind == "text":
        return estimate_text_tokens(str(source.get("data", "")))
    if kind == "content":
        return _content_tokens(source.get("content"))
    return PDF_PAGE_GUESS_TOKENS


def _block_body_tokens(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return estimate_text_tokens(str(block.get("text", "")))
    if kind == "thinking":  # the signature is verification data, not model input (ours)
        return THINKING_OVERHEAD + estimate_text_tokens(str(block.get("thinking", "")))
    if kind == "redacted_thinking":  # encrypted: one token per 4 characters (ours)
        return math.ceil(len(str(block.get("data", ""))) / 4)
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        name = estimate_text_tokens(str(block.get("name", "")))
        return TOOL_USE_OVERHEAD + name + _json_tokens(block.get("input", {}))
    if kind == "compaction":  # the summary the model reads, in the server's frame
        content = block.get("content")
        return COMPACTION_OVERHEAD + estimate_text_tokens(str(content)) if content else 0
    if kind == "image":
        return image_tokens(block)
    if kind == "document":
        return _document_tokens(block)
    if kind == "tool_result" or str(kind).endswith("_tool_result"):
        return TOOL_USE_OVERHEAD + _content_tokens(block.get("content"))
    rest = {k: v for k, v in block.items() if k not in ("cache_control", "type")}
    return _json_tokens(rest)  # unknown or rare blocks: their JSON (ours)


def _image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from the header of a PNG, GIF, WebP or JPEG file, else None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(
                data[27:30], "little"
            )
        if chunk == b"VP8 ":
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        return None
    return _jpeg_size(data) if data[:2] == b"\xff\xd8" else None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame marker."""
    i = 2
    while i + 9 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None


_IMAGE_HEAD_CHARS = 87_384  # base64 of the first 64 KiB: enough for any header we read


def image_tokens(block: Mapping[str, Any]) -> int:
    """An image as the vision docs count it: w*h/750 after scaling to the size limits.

    The size comes from the header of base64 data (PNG, GIF, WebP, JPEG); an image given by
    URL or file id, or one whose header cannot be read, costs `IMAGE_TOKENS`.
    """
    source = block.get("source")
    data = source.get("data") if isinstance(source, Mapping) else None
    if not isinstance(data, str):
        return IMAGE_TOKENS
    head = data[:_IMAGE_HEAD_CHARS]
    try:
        size = _image_size(base64.b64decode(head[: len(head) // 4 * 4]))
    except (binascii.Error, ValueError, struct.error):
        size = None
    if size is None or min(size) <= 0:
        return IMAGE_TOKENS
    width, height = size
    scale = min(
        1.0, IMAGE_MAX_EDGE / max(width, height), math.sqrt(IMAGE_MAX_PIXELS / (width * height))
    )
    return max(1, math.ceil(width * scale * height * scale / 750))


def estimate_block_tokens(block: Mapping[str, Any]) -> int:
    """Tokens of one content block, `BLOCK_OVERHEAD` included; cache_control is free."""
    return remembered("block", block, lambda: BLOCK_OVERHEAD + _block_body_tokens(block))


def _server_tool_tokens(kind: str) -> int:
    base = re.sub(r"_\d{8}$", "", kind)  # memory_20250818 -> memory
    return SERVER_TOOL_TOKENS.get(base, DEFAULT_SERVER_TOOL_TOKENS)


def estimate_tool_tokens(tool: Mapping[str, Any]) -> int:
    """One tool definition: custom = name + description + schema; typed tools a fixed cost."""
    return remembered("tool", tool, lambda: _tool_tokens(tool))


def _tool_tokens(tool: Mapping[str, Any]) -> int:
    kind = tool.get("type")
    if kind not in (None, "custom") and "input_schema" not in tool:
        return _server_tool_tokens(str(kind))
    return (
        TOOL_DEF_OVERHEAD
        + estimate_text_tokens(str(tool.get("name", "")))
        + estimate_text_tokens(str(tool.get("description", "") or ""))
        + _json_tokens(tool.get("input_schema", {}))
    )


def system_blocks(system: str | Sequence[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    """The system prompt as a list of text blocks (a string is one block; "" none)."""
    if not system:
        return []
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    return list(system)


def estimate_system_tokens(system: str | Sequence[Mapping[str, Any]] | None) -> int:
    """The system prompt: the sum of its blocks."""
    return sum(estimate_block_tokens(b) for b in system_blocks(system))


def message_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A message's content as blocks (string content is one text block)."""
    content = message.get("content", [])
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content if isinstance(b, Mapping)]


@dataclass(frozen=True)
class Position:
    """One prefix position: a tool definition, a system block, or a message block."""

    segment: str  # "tools" | "system" | "messages"
    block: Mapping[str, Any]
    tokens: int  # this position's share of estimate_request_tokens
    message_index: int = -1  # messages segment only


def message_positions(messages: Sequence[Mapping[str, Any]], start: int = 0) -> list[Position]:
    """The positions of `messages`, the first of which is message number `start`."""
    out: list[Position] = []
    for i, message in enumerate(messages, start):
        blocks = message_blocks(message)
        if not blocks:  # an empty message still costs its overhead
            out.append(Position("messages", {"type": "text", "text": ""}, MESSAGE_OVERHEAD, i))
            continue
        for j, block in enumerate(blocks):
            extra = MESSAGE_OVERHEAD if j == 0 else 0
            out.append(Position("messages", block, extra + estimate_block_tokens(block), i))
    return out


def request_positions(request: Mapping[str, Any]) -> list[Position]:
    """All positions in prefix order tools -> system -> messages (the prompt-caching docs)."""
    tools = list(request.get("tools") or [])
    out = [
        Position("tools", t, estimate_tool_tokens(t) + (TOOLS_PREAMBLE if i == 0 else 0))
        for i, t in enumerate(tools)
    ]
    out += [
        Position("system", b, estimate_block_tokens(b))
        for b in system_blocks(request.get("system"))
    ]
    return out + message_positions(request.get("messages") or [])


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """One message: `MESSAGE_OVERHEAD` plus its blocks."""
    return remembered("message", message, lambda: _message_tokens(message))


def _message_tokens(message: Mapping[str, Any]) -> int:
    return MESSAGE_OVERHEAD + sum(estimate_block_tokens(b) for b in message_blocks(message))


def estimate_request_tokens(request: Mapping[str, Any]) -> int:
    """tools + system + messages: our stand-in for the usage input total of the request."""
    tools = list(request.get("tools") or [])
    total = sum(estimate_tool_tokens(t) for t in tools) + (TOOLS_PREAMBLE if tools else 0)
    total += estimate_system_tokens(request.get("system"))
    return total + sum(estimate_message_tokens(m) for m in request.get("messages") or [])
