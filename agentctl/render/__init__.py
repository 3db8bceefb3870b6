"""Rendering of runs: live table and plain lines on stderr, NDJSON and the answer on stdout.

The names below load on first use, so `from agentctl.render.table import turn_table` (the
sessions commands) does not pay for the live view or the Markdown renderer.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentctl.render.answer import render_answer
    from agentctl.render.base import Renderer
    from agentctl.render.factory import make_renderer
    from agentctl.render.table import summary_table, turn_table

__all__ = ["Renderer", "make_renderer", "render_answer", "summary_table", "turn_table"]

_HOMES = {
    "Renderer": "base",
    "make_renderer": "factory",
    "render_answer": "answer",
    "summary_table": "table",
    "turn_table": "table",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"agentctl.render.{_HOMES[name]}"), name)
