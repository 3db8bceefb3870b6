"""Text from the model, a file or a server made safe to show: no markup, controls visible.

Such text is data. Passed to Rich as a `str` it is parsed as markup (`[/]` raises,
`[link=...]` makes a hyperlink); written raw, an ESC or C1 byte lets it set the window
title, clear the screen or plant an OSC 8 link. Everything from outside that reaches a
terminal goes through `visible` (plain text) or `safe_text` (a Rich Text, never markup), so
only agentctl's own styling reaches the terminal.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

LAYOUT = "\n\t"  # kept by default: the line breaks and tabs that text is laid out with
# Format characters that are part of writing, not tricks: joiners in emoji and in scripts.
_WRITING = frozenset("\u200c\u200d")
# Controls, format characters, line/paragraph separators, and lone surrogates (no terminal
# or UTF-8 file can take one: they come from names that are not UTF-8).
_HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs")


def visible(text: str, keep: str = LAYOUT) -> str:
    """`text` with every control and format character (Cc, Cf, Zl, Zp) and lone surrogate
    (Cs) shown as an escape.

    `\\x1b` for ESC, `\\x9b` for C1 CSI, `\\u202e` for a bidi override, `\\xe9` for the byte
    0xE9 of a name that is not UTF-8; the characters in
    `keep` stay as they are (by default newline and tab). CRLF becomes LF first.
    """
    if text.isprintable():
        return text
    if "\n" in keep:
        text = text.replace("\r\n", "\n")
    return "".join(_shown(char) if char not in keep and _hidden(char) else char for char in text)


def _hidden(char: str) -> bool:
    """A character a terminal acts on, or hides, instead of showing it."""
    if char.isprintable():
        return False
    return unicodedata.category(char) in _HIDDEN and char not in _WRITING


def _shown(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def safe_text(text: str, style: str = "", keep: str = LAYOUT) -> Text:
    """A Rich Text of `visible(text)`: printed as it reads, never parsed as markup."""
    from rich.text import Text

    return Text(visible(text, keep), style=style)


def error_line(message: object) -> str:
    """`agentctl: <message>`, the one line every command prints for an error it stops on.

    Error messages quote paths, names and server replies, so they are shown `visible` too.
    """
    return f"agentctl: {visible(str(message), keep='')}"
