"""Offline Messages API emulator: HTTP server, scripted model, faults (docs/emulator.md).

This module is the emulator's one public entry: code outside `agentctl/emulator/` imports
from here, never from the modules behind it (tests/test_architecture.py checks). Nothing on
the client side (agent/, tools/) imports it at all: it is reached over HTTP.
"""

from __future__ import annotations

from agentctl.emulator.batches import BatchTiming, parse_batch_faults
from agentctl.emulator.corpus import Corpus, load_corpus
from agentctl.emulator.editing import ContextEngine, SharedEngine
from agentctl.emulator.fidelity import (
    Exchange,
    RecordingError,
    message_from_events,
    parse_recordings,
    recorded_events,
)
from agentctl.emulator.model import Reply, Script, ScriptedModel, ScriptTurn, TextOut, ToolCall
from agentctl.emulator.policy import DefaultPolicy
from agentctl.emulator.replay import check_all
from agentctl.emulator.server import Emulator, running

__all__ = [
    "BatchTiming",
    "ContextEngine",
    "Corpus",
    "DefaultPolicy",
    "Emulator",
    "Exchange",
    "RecordingError",
    "Reply",
    "Script",
    "ScriptTurn",
    "ScriptedModel",
    "SharedEngine",
    "TextOut",
    "ToolCall",
    "check_all",
    "load_corpus",
    "message_from_events",
    "parse_batch_faults",
    "parse_recordings",
    "recorded_events",
    "running",
]
