"""Rendering of runs: live table and plain lines on stderr, NDJSON and the answer on stdout."""

from __future__ import annotations

from agentctl.render.answer import render_answer
from agentctl.render.base import Renderer
from agentctl.render.factory import make_renderer
from agentctl.render.table import summary_table, turn_table

__all__ = ["Renderer", "make_renderer", "render_answer", "summary_table", "turn_table"]
