"""Test doubles for the loop: the shipped ScriptedClient and helpers, and a fake memory backend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentctl.errors import ToolError
from agentctl.testing import ScriptedClient, reply, text, tool_use

__all__ = ["FakeMemory", "ScriptedClient", "reply", "text", "tool_use"]


class FakeMemory:
    """A memory backend recording commands; `fail` names commands that raise ToolError."""

    def __init__(self, fail: tuple[str, ...] = ()) -> None:
        self.commands: list[dict[str, Any]] = []
        self.fail = fail

    def execute(self, command: Mapping[str, Any], **origin: Any) -> str:
        self.commands.append(dict(command))
        if command.get("command") in self.fail:
            raise ToolError(f"Error: The path {command.get('path')} does not exist")
        return "ok"
