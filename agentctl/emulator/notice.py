"""How the emulated models recognise agentctl's save-before-clear notice (docs/context.md).

The notice is a text block after the tool_result blocks of a user message, whatever its
wording; the emulated models take such a block as the notice when it speaks of memory and of
clearing (the built-in wording does), and as typed text (a follow-up) otherwise.
"""

from __future__ import annotations

from typing import Any


def is_notice(block: object) -> bool:
    """A text block whose words name memory and clearing ("clear", "cleared", "clearing")."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return False
    text = str(block.get("text", "")).lower()
    return "memory" in text and "clear" in text


def told(message: dict[str, Any]) -> bool:
    """`message` is a user message holding tool results and, after them, the notice."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return False
    kinds = [b.get("type") if isinstance(b, dict) else None for b in content]
    if "tool_result" not in kinds:
        return False
    return any(is_notice(b) for b in content[kinds.index("tool_result") :])
