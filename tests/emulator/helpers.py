"""Helpers for emulator tests: an SDK client factory and request builders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.lib.tools._beta_functions import ToolError

BETA = "context-management-2025-06-27"
MODEL = "claude-sonnet-5"


def make_client(base_url: str, **kwargs: Any) -> anthropic.Anthropic:
    """A real SDK client pointed at an emulator (no retries unless asked)."""
    kwargs.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=base_url, api_key="test-key", **kwargs)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- a tool-use conversation with figures that are easy to compute by hand -------------------


def tool_use(i: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{i}", "name": "rf", "input": {"p": "a"}}


def tool_result(i: int, words: int = 50) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * words}


def conversation(pairs: int, *, thinking: bool = False, words: int = 50) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    for i in range(1, pairs + 1):
        head = [{"type": "thinking", "thinking": "one two three", "signature": "s"}]
        messages.append({"role": "assistant", "content": [*head[:thinking], tool_use(i)]})
        messages.append({"role": "user", "content": [tool_result(i, words)]})
    return messages


def request(**overrides: Any) -> dict[str, Any]:
    """A minimal valid beta.messages.create body."""
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 1000, "messages": [user("hello")]}
    body.update(overrides)
    return body


# --- a minimal client-side agent loop for tests (the real one lives in agentctl.agent) --------

LIST_FILES = {
    "name": "list_files",
    "description": "List workspace files.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
READ_FILE = {
    "name": "read_file",
    "description": "Read a workspace file.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}
MEMORY = {"type": "memory_20250818", "name": "memory"}


def list_files(root: Path) -> str:
    """The workspace contract's list_files result for the whole workspace."""
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    return "\n".join(f"{p.relative_to(root).as_posix()}\t{p.stat().st_size}" for p in files)


def read_file(root: Path, path: str, offset: int = 1, limit: int = 2000) -> str:
    """The workspace contract's read_file result (line limit, no size cap in this double)."""
    lines = (root / path).read_text().split("\n")
    shown = lines[offset - 1 : offset - 1 + limit]
    out = [f"{n:>6}\t{line}" for n, line in enumerate(shown, offset)]
    rest = len(lines) - (offset - 1 + len(shown))
    if rest > 0:
        following = offset + len(shown)
        out.append(
            f"[truncated: more lines follow; call read_file with offset={following} to continue]"
        )
    return "\n".join(out)


class PagedMemory:
    """The SDK's memory tool with views cut at `limit` characters, as agentctl's store does."""

    def __init__(self, base_path: Path, limit: int) -> None:
        self.inner = BetaLocalFilesystemMemoryTool(base_path=str(base_path))
        self.limit = limit

    def call(self, arguments: dict[str, Any]) -> Any:
        text = self.inner.call(arguments)
        if arguments.get("command") != "view" or len(text) <= self.limit:
            return text
        kept = text[: self.limit].rsplit("\n", 1)[0]
        first = (arguments.get("view_range") or [1])[0]
        following = first + kept.count("\n")
        return (
            f"{kept}\n[Output truncated at {self.limit} characters: showing lines "
            f"{first}-{following - 1}. To read the rest, call view with view_range "
            f"[{following}, -1] (or a smaller range).]"
        )


def run_tool(block: Any, workspace: Path, memory: Any) -> dict[str, Any]:
    """Execute one tool_use block; errors become is_error results."""
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.id}
    try:
        if block.name == "memory":
            result["content"] = memory.call(block.input)
        elif block.name == "list_files":
            result["content"] = list_files(workspace)
        else:
            result["content"] = read_file(
                workspace, block.input["path"], block.input.get("offset", 1)
            )
    except (ToolError, OSError) as err:
        result.update(content=str(err), is_error=True)
    return result


def run_session(
    client: anthropic.Anthropic,
    task: str,
    workspace: Path,
    memory_base: Path,
    *,
    tools: tuple[dict[str, Any], ...] = (MEMORY, LIST_FILES, READ_FILE),
    max_turns: int = 60,
    view_limit: int | None = None,
    **extra: Any,
) -> list[Any]:
    """Drive the emulator like an agent loop; returns every response (BetaMessage)."""
    memory: Any = BetaLocalFilesystemMemoryTool(base_path=str(memory_base))
    if view_limit is not None:
        memory = PagedMemory(memory_base, view_limit)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    extra.setdefault("max_tokens", 4000)
    responses = []
    for _ in range(max_turns):
        reply = client.beta.messages.create(
            model=MODEL, messages=messages, tools=list(tools), **extra
        )
        responses.append(reply)
        messages.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
        if reply.stop_reason != "tool_use":
            return responses
        calls = [b for b in reply.content if b.type == "tool_use"]
        messages.append(
            {"role": "user", "content": [run_tool(b, workspace, memory) for b in calls]}
        )
    raise AssertionError("the session did not end")


def tool_calls(responses: list[Any]) -> list[str]:
    """`name:command-or-path` for every tool call, in order (compact sequence checks)."""
    out = []
    for reply in responses:
        for b in reply.content:
            if b.type == "tool_use":
                detail = b.input.get("command") or b.input.get("path", "")
                out.append(f"{b.name}:{detail}")
    return out
