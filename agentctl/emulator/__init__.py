"""Offline Messages API emulator: HTTP server, scripted model, faults (docs/emulator.md).

This module is the emulator's one public entry: code outside `agentctl/emulator/` imports
from here, never from the modules behind it (tests/test_architecture.py checks). Nothing on
the client side (agent/, tools/) imports it at all: it is reached over HTTP.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentctl.emulator.batches import BatchTiming, parse_batch_faults
    from agentctl.emulator.check import check_all
    from agentctl.emulator.context_engine import ContextEngine, SharedEngine
    from agentctl.emulator.corpus import Corpus, load_corpus
    from agentctl.emulator.fidelity import (
        Exchange,
        RecordingError,
        message_from_events,
        parse_recordings,
        recorded_events,
    )
    from agentctl.emulator.model import Reply, Script, ScriptedModel, ScriptTurn, TextOut, ToolCall
    from agentctl.emulator.policy import DefaultPolicy
    from agentctl.emulator.script import load_script
    from agentctl.emulator.server import KEEP_BYTES, KEEP_REQUESTS, Emulator, running

# Every name loads its module on first use, so each user pays for what it takes: `doctor`
# starts the server without the `emulator check` side (recordings, replay over urllib), and
# a test that only builds a Script never loads http.server.
_HOMES = {
    **dict.fromkeys(("BatchTiming", "parse_batch_faults"), "agentctl.emulator.batches"),
    "check_all": "agentctl.emulator.check",
    **dict.fromkeys(("ContextEngine", "SharedEngine"), "agentctl.emulator.context_engine"),
    **dict.fromkeys(("Corpus", "load_corpus"), "agentctl.emulator.corpus"),
    **dict.fromkeys(
        (
            "Exchange",
            "RecordingError",
            "message_from_events",
            "parse_recordings",
            "recorded_events",
        ),
        "agentctl.emulator.fidelity",
    ),
    **dict.fromkeys(
        ("Reply", "Script", "ScriptedModel", "ScriptTurn", "TextOut", "ToolCall"),
        "agentctl.emulator.model",
    ),
    "DefaultPolicy": "agentctl.emulator.policy",
    "load_script": "agentctl.emulator.script",
    **dict.fromkeys(
        ("KEEP_BYTES", "KEEP_REQUESTS", "Emulator", "running"), "agentctl.emulator.server"
    ),
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'agentctl.emulator' has no attribute {name!r}")


__all__ = [
    "KEEP_BYTES",
    "KEEP_REQUESTS",
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
    "load_script",
    "message_from_events",
    "parse_batch_faults",
    "parse_recordings",
    "recorded_events",
    "running",
]
