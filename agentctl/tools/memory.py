"""The `memory_20250818` tool as the run loop offers it: a thin adapter over the memory store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from agentctl.memory.pending import open_for_run
from agentctl.memory.root import check_writable
from agentctl.profile.settings import MemorySettings
from agentctl.types import MEMORY_TOOL

MEMORY_TOOL_NAME = MEMORY_TOOL
MEMORY_TOOL_TYPE = "memory_20250818"


class MemoryBackend(Protocol):
    """What answers memory commands: `agentctl.memory.store.MemoryStore` in a real run."""

    def execute(
        self,
        command: Mapping[str, Any],
        *,
        turn: int | None = None,
        tool_use_id: str | None = None,
    ) -> str: ...


class MemoryTool:
    """Forwards each call to the store; the store raises ToolError for model-visible errors,
    and a ToolFailure (WriteFailedError) for a write that failed for a reason that is not the
    model's, which the ToolBox counts and the run reports (`totals.tool_failures`)."""

    # The store cuts long views itself (memory.max_view_chars) with a view_range to read on;
    # the generic result cap would cut them again with no way to continue.
    self_limited = True

    def __init__(self, backend: MemoryBackend) -> None:
        self._backend = backend

    @property
    def name(self) -> str:
        return MEMORY_TOOL_NAME

    def definition(self) -> dict[str, Any]:
        return {"type": MEMORY_TOOL_TYPE, "name": MEMORY_TOOL_NAME}

    def call(self, tool_input: Mapping[str, Any]) -> str:
        return self._backend.execute(tool_input)

    def call_traced(self, tool_input: Mapping[str, Any], *, turn: int, tool_use_id: str) -> str:
        """A model's call: its turn and tool_use id go into the memory history."""
        return self._backend.execute(tool_input, turn=turn, tool_use_id=tool_use_id)


def open_memory_tool(settings: MemorySettings, session: str) -> MemoryTool:
    """A MemoryTool over the store at `settings.root`, journaling under this session id
    (with memory.review = "queue", over the session's pending layer instead).

    The root is made if missing and must be writable: ConfigError (exit 2) naming it if not.
    """
    store = open_for_run(settings, session)  # memory.review = "queue": a pending layer
    check_writable(store.root)
    return MemoryTool(store)
