"""The default model's quote rule: "Quote the tool result ID verbatim" gets that result's content
as the model sees it (after the server's edits), so `agentctl probe` can read the placeholder
offline just as it reads it from a real model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

QUOTE = re.compile(r"Quote the tool result (\S+) verbatim")


def quoted_result(request: Mapping[str, Any]) -> str | None:
    """The content of the tool result the last user message asks to quote, else None."""
    messages = request.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return None
    match = QUOTE.search(_text(messages[-1].get("content")))
    if match is None:
        return None
    for message in messages:
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result" and block.get("tool_use_id") == match[1]:
                return _text(block.get("content"))
    return None


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")
