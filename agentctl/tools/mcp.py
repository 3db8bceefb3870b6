"""MCP servers' tools offered as `mcp__NAME__TOOL`: start, call, results as text, stop.

The `mcp` SDK is imported (by `mcp_bridge`) only when a profile declares a server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentctl.errors import ConfigError, ToolError
from agentctl.profile.settings import McpServer
from agentctl.tools.registry import Tool

if TYPE_CHECKING:
    from agentctl.tools.mcp_bridge import LoopThread, ServerConnection

PREFIX = "mcp__"
# The Messages API's rule for tool names.
API_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def offered(names: list[str], server: str, settings: McpServer) -> list[str]:
    """The server's tool names the model is offered: allow (if any), minus deny, API-valid."""
    return [
        n
        for n in names
        if (not settings.allow or n in settings.allow)
        and n not in settings.deny
        and API_TOOL_NAME.fullmatch(tool_name(server, n))
    ]


class McpTool:
    """One tool of a running MCP server, as a client-side `Tool` of the ToolBox."""

    self_limited = False

    def __init__(self, connection: ServerConnection, tool: Any) -> None:
        self._connection = connection
        self._tool = tool
        self._name = tool_name(connection.name, tool.name)

    @property
    def name(self) -> str:
        return self._name

    def definition(self) -> dict[str, Any]:
        schema = self._tool.input_schema or {"type": "object", "properties": {}}
        return {
            "name": self._name,
            "description": self._tool.description or "",
            "input_schema": schema,
        }

    def call(self, tool_input: Mapping[str, Any]) -> str:
        from agentctl.tools.mcp_bridge import CallTimeout

        try:
            result = self._connection.call(self._tool.name, tool_input)
        except CallTimeout as err:
            where = f"MCP server {self._connection.name!r}, tool {self._tool.name!r}"
            raise ToolError(f"Error: {where}: {err}") from None
        except Exception as err:  # the server died or broke the protocol
            raise ToolError(self._failure(err)) from None
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or "Error: the tool reported an error")
        return text

    def _failure(self, err: Exception) -> str:
        tail = self._connection.stderr_tail()
        line = f"Error: MCP server {self._connection.name!r} failed: {reason_of(err)}"
        return f"{line}\nserver stderr (last lines):\n{tail}" if tail else line


def result_text(result: Any) -> str:
    """A CallToolResult as text: text blocks as they are, other blocks summarised."""
    parts = [block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False)]
    return "\n".join(parts)


def block_text(block: Any) -> str:
    """One content block: text, or `[image image/png, 1234 bytes]` and the like."""
    kind = block.type
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {base64_size(block.data)} bytes]"
    if kind == "resource_link":
        size = f", {block.size} bytes" if block.size is not None else ""
        return f"[resource link {block.uri} ({block.mime_type or 'unknown type'}{size})]"
    if kind == "resource":
        return resource_text(block.resource)
    return f"[{kind} content]"


def resource_text(resource: Any) -> str:
    """An embedded resource: its text under a header, or a summary of its binary blob."""
    mime = resource.mime_type or "unknown type"
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {resource.uri} ({mime}, {len(text)} characters)]\n{text}"
    return f"[resource {resource.uri} ({mime}, {base64_size(resource.blob)} bytes)]"


def base64_size(data: str) -> int:
    """Bytes encoded by a base64 string."""
    stripped = data.strip()
    return len(stripped) * 3 // 4 - stripped[-2:].count("=")


@contextmanager
def mcp_tools(servers: Mapping[str, McpServer]) -> Iterator[list[Tool]]:
    """Start every server, yield their offered tools, stop them all on every way out.

    A server that cannot start raises ConfigError (exit 2) naming it, with its stderr tail.
    """
    if not servers:
        yield []
        return
    from agentctl.tools.mcp_bridge import LoopThread

    loop = LoopThread()
    connections: list[ServerConnection] = []
    try:
        tools: list[Tool] = []
        for name, settings in servers.items():
            connection, listed = start_server(name, settings, loop, connections)
            names = offered([t.name for t in listed], name, settings)
            tools.extend(McpTool(connection, t) for t in listed if t.name in names)
        yield tools
    finally:
        stop_all(connections)
        loop.close()


def start_server(
    name: str, settings: McpServer, loop: LoopThread, started: list[ServerConnection]
) -> tuple[ServerConnection, list[Any]]:
    """Start one server (appended to `started` first, so it is stopped even if this fails)."""
    from agentctl.tools.mcp_bridge import ServerConnection

    connection = ServerConnection(name, settings, loop)
    started.append(connection)
    try:
        return connection, connection.start()
    except Exception as err:
        raise ConfigError(start_failure(connection, err)) from None


def reason_of(err: BaseException) -> str:
    """Why, in words: the first error inside a task group's, an OSError's strerror."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    return reason or type(err).__name__


def start_failure(connection: ServerConnection, err: Exception) -> str:
    """One line: which server, the command, why; the last stderr line when there is one."""
    reason = reason_of(err)
    server = connection.server
    if server.url:
        return f"mcp.servers.{connection.name}: cannot connect to {server.url}: {reason}"
    tail = connection.stderr_tail(lines=1)
    said = f" (stderr: {tail})" if tail else ""
    return f"mcp.servers.{connection.name}: cannot start {server.command[0]!r}: {reason}{said}"


def stop_all(connections: list[ServerConnection]) -> None:
    for connection in reversed(connections):
        connection.stop()


@dataclass(frozen=True)
class ServerStatus:
    """What `mcp list` and `doctor` show for one server."""

    name: str
    ok: bool
    tools: tuple[str, ...]  # offered, as mcp__NAME__TOOL
    hidden: tuple[str, ...]  # left out by allow / deny
    error: str = ""


def probe(servers: Mapping[str, McpServer]) -> list[ServerStatus]:
    """Start each server on its own, list its tools, stop it."""
    return [probe_one(name, settings) for name, settings in servers.items()]


def probe_one(name: str, settings: McpServer) -> ServerStatus:
    from agentctl.tools.mcp_bridge import LoopThread

    loop = LoopThread()
    started: list[ServerConnection] = []
    try:
        _, listed = start_server(name, settings, loop, started)
    except ConfigError as err:
        return ServerStatus(name, False, (), (), str(err))
    finally:
        stop_all(started)
        loop.close()
    names = [t.name for t in listed]
    shown = offered(names, name, settings)
    hidden = tuple(n for n in names if n not in shown)
    return ServerStatus(name, True, tuple(tool_name(name, n) for n in shown), hidden)


# Tables of a server whose values may be credentials: never written to a transcript.
SECRET_TABLES = ("env", "headers")
MASK = "[NOT RECORDED]"


def masked(profile: dict[str, Any]) -> dict[str, Any]:
    """A profile dict (as recorded) with every value of the servers' env/headers masked."""
    servers = {
        name: {k: mask_table(v) if k in SECRET_TABLES else v for k, v in table.items()}
        for name, table in profile.get("mcp", {}).get("servers", {}).items()
    }
    return (
        {**profile, "mcp": {**profile.get("mcp", {}), "servers": servers}} if servers else profile
    )


def mask_table(values: Mapping[str, str]) -> dict[str, str]:
    return dict.fromkeys(values, MASK)


def unmask(recorded: dict[str, Any], current: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`recorded` with its masked values taken from `current` (the profile file as it is now);
    ConfigError naming the key when `current` no longer has one."""
    result: dict[str, Any] = json.loads(json.dumps(recorded))
    for name, table in result.get("mcp", {}).get("servers", {}).items():
        for kind in SECRET_TABLES:
            for key, value in table.get(kind, {}).items():
                if value == MASK:
                    table[kind][key] = current_value(current, (name, kind, key), where)
    return result


def current_value(current: Mapping[str, Any], path: tuple[str, str, str], where: str) -> str:
    node: Any = current.get("mcp", {}).get("servers", {})
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    if not isinstance(node, str):
        key = "mcp.servers." + ".".join(path)
        raise ConfigError(
            f"{key}: its value is not kept in the transcript and {where} no longer sets it"
            " (declare the server there again to resume)"
        )
    return node
