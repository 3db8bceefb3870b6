"""MCP servers' tools offered as `mcp__NAME__TOOL`: start, call, results as text, stop.

The `mcp` SDK is imported (by `mcp_bridge`) only when a profile declares a server.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentctl.errors import ConfigError, ToolError
from agentctl.profile.settings import McpServer
from agentctl.tools.registry import Tool, ToolContent, base64_size, block_line, drain, relay

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

    def call(self, tool_input: Mapping[str, Any]) -> ToolContent:
        return drain(self.run(tool_input))

    def run(self, tool_input: Mapping[str, Any]) -> Generator[str, None, ToolContent]:
        """`call`, yielding the server's progress notifications as one-line messages."""
        from agentctl.tools.mcp_bridge import CallTimeout

        try:
            calling = self._connection.call(self._tool.name, tool_input)
            result = yield from relay(calling, progress_line)
        except CallTimeout as err:
            where = f"MCP server {self._connection.name!r}, tool {self._tool.name!r}"
            raise ToolError(f"Error: {where}: {err}") from None
        except Exception as err:  # the server died or broke the protocol
            raise ToolError(self._failure(err)) from None
        media = MediaLimit(self._connection.name, self._connection.server.max_media_bytes)
        content = result_content(result, media)
        if result.is_error:
            text = content if isinstance(content, str) else "\n".join(map(block_line, content))
            raise ToolError(text or "Error: the tool reported an error")
        return content

    def _failure(self, err: Exception) -> str:
        tail = self._connection.stderr_tail()
        line = f"Error: MCP server {self._connection.name!r} failed: {reason_of(err)}"
        return f"{line}\nserver stderr (last lines):\n{tail}" if tail else line


def progress_line(progress: Any) -> str:
    """A progress notification as one short line for the status line: its message (made
    printable, cut at 80 characters) or `3/10`."""
    of = f"/{progress.total:g}" if progress.total is not None else ""
    text = progress.message or f"{progress.done:g}{of}"
    shown = "".join(c if c.isprintable() else "?" for c in text)
    return shown if len(shown) <= 80 else shown[:79] + "…"


# The media types the API takes inside a tool_result: image blocks and (PDF) document blocks.
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_TYPES = ("application/pdf",)


@dataclass(frozen=True)
class MediaLimit:
    """The largest image or PDF one server's results may pass to the model, and its key."""

    server: str
    max_bytes: int

    @property
    def key(self) -> str:
        return f"mcp.servers.{self.server}.max_media_bytes"


def result_content(result: Any, media: MediaLimit) -> ToolContent:
    """A CallToolResult as a tool_result's content: its text (other blocks summarised in a
    line), or content blocks when it carries an image or PDF the API takes within `media`."""
    blocks = [api_block for block in result.content for api_block in api_blocks(block, media)]
    if not blocks and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    if all(block["type"] == "text" for block in blocks):
        return "\n".join(block["text"] for block in blocks)
    return blocks


def api_blocks(block: Any, media: MediaLimit) -> list[dict[str, Any]]:
    """One MCP content block as the API's: an image block, a text line and a document block
    for an embedded PDF, else one text block (`block_text`)."""
    if block.type == "image":
        return [media_block("image", block.mime_type, block.data, media)]
    resource: Any = block.resource if block.type == "resource" else None
    if getattr(resource, "blob", None) is not None and resource.mime_type in DOCUMENT_TYPES:
        head = {"type": "text", "text": resource_text(resource)}
        return [head, media_block("document", resource.mime_type, resource.blob, media)]
    return [{"type": "text", "text": block_text(block)}]


def media_block(kind: str, mime: str, data: str, media: MediaLimit) -> dict[str, Any]:
    """An image or document block with base64 data; a text note saying why not when the API
    would refuse it or it is larger than the profile lets through."""
    size = base64_size(data)
    why = media_problem(kind, mime, data, size, media)
    if why:
        return {"type": "text", "text": f"[{kind} {mime}, {size} bytes: not sent, {why}]"}
    return {"type": kind, "source": {"type": "base64", "media_type": mime, "data": data}}


def media_problem(kind: str, mime: str, data: str, size: int, media: MediaLimit) -> str:
    """Why an image or document cannot go to the model ("" when it can)."""
    if kind == "image" and mime not in IMAGE_TYPES:
        return "the API takes JPEG, PNG, GIF and WebP images only"
    if size > media.max_bytes:
        return f"larger than {media.key} = {media.max_bytes}"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "its data is not valid base64"
    return ""


def block_text(block: Any) -> str:
    """One content block other than an image as text: text as it is, others as one line
    (`[audio audio/wav, 16 bytes: ...]`, a resource link with its name and description, a
    resource's header)."""
    kind = block.type
    if kind == "text":
        return str(block.text)
    if kind == "audio":
        size = base64_size(block.data)
        return f"[audio {block.mime_type}, {size} bytes: not sent, the API takes no audio]"
    if kind == "resource_link":
        return resource_link_text(block)
    if kind == "resource":
        return resource_text(block.resource)
    return f"[{kind} content]"


def resource_link_text(link: Any) -> str:
    """`[resource link URI "NAME": DESCRIPTION (TYPE, N bytes)]`: what the server calls it."""
    size = f", {link.size} bytes" if link.size is not None else ""
    name = f" {json.dumps(link.name, ensure_ascii=False)}" if link.name else ""
    about = f": {link.description}" if link.description else ""
    return f"[resource link {link.uri}{name}{about} ({link.mime_type or 'unknown type'}{size})]"


def resource_text(resource: Any) -> str:
    """An embedded resource: its text under a header, or a summary of its binary blob."""
    mime = resource.mime_type or "unknown type"
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {resource.uri} ({mime}, {len(text)} characters)]\n{text}"
    return f"[resource {resource.uri} ({mime}, {base64_size(resource.blob)} bytes)]"


def needs_tasks(tool: Any) -> bool:
    """A tool that only runs as an MCP task (`execution.taskSupport: "required"`): the
    installed `mcp` SDK has the task types but no client side for them, so it is not offered."""
    return getattr(getattr(tool, "execution", None), "task_support", None) == "required"


TASKS_NOTE = "they need MCP tasks, which agentctl cannot run yet"


def offered_tools(connection: ServerConnection, listed: list[Any]) -> list[McpTool]:
    """The McpTools the model is offered of what a server listed."""
    names = offered([t.name for t in listed], connection.name, connection.server)
    return [McpTool(connection, t) for t in listed if t.name in names and not needs_tasks(t)]


def tasks_warning(name: str, listed: list[Any]) -> str:
    """The run's warning about a server's task-only tools ("" when it has none)."""
    needing = [t.name for t in listed if needs_tasks(t)]
    if not needing:
        return ""
    return f"mcp.servers.{name}: not offered: {', '.join(needing)} ({TASKS_NOTE})"


class McpTools:
    """The tools the running servers offer; a server that sent notifications/tools/list_changed
    is listed again before the next request (its tools as it lists them then)."""

    def __init__(
        self, started: list[tuple[ServerConnection, list[Any]]], warn: Callable[[str], None]
    ) -> None:
        self._warn = warn
        self._warned: set[str] = set()
        self._tools = {c.name: self._offer(c, listed) for c, listed in started}
        self._connections = [c for c, _ in started]

    def current(self) -> list[Tool]:
        for connection in self._connections:
            if connection.take_change():
                self._relist(connection)
        return [tool for tools in self._tools.values() for tool in tools]

    def _relist(self, connection: ServerConnection) -> None:
        try:
            listed = connection.list_tools()
        except Exception:  # a server gone or broken keeps the tools it had
            return
        self._tools[connection.name] = self._offer(connection, listed)

    def _offer(self, connection: ServerConnection, listed: list[Any]) -> list[McpTool]:
        warning = tasks_warning(connection.name, listed)
        if warning and warning not in self._warned:
            self._warned.add(warning)
            self._warn(warning)
        return offered_tools(connection, listed)


@contextmanager
def mcp_tools(
    servers: Mapping[str, McpServer], warn: Callable[[str], None] = lambda _: None
) -> Iterator[McpTools]:
    """Start every server, yield their offered tools, stop them all on every way out; `warn`
    hears about tools that are not offered (they need MCP tasks).

    A server that cannot start raises ConfigError (exit 2) naming it, with its stderr tail.
    """
    if not servers:
        yield McpTools([], warn)
        return
    from agentctl.tools.mcp_bridge import LoopThread

    loop = LoopThread()
    connections: list[ServerConnection] = []
    try:
        started = [start_server(name, s, loop, connections) for name, s in servers.items()]
        yield McpTools(started, warn)
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
    # The first line of each offered tool's description, by its mcp__NAME__TOOL name.
    descriptions: dict[str, str] = field(default_factory=dict)
    needs_tasks: tuple[str, ...] = ()  # not offered: they run only as MCP tasks


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
    tasks = tuple(t.name for t in listed if t.name in shown and needs_tasks(t))
    kept = [t for t in listed if t.name in shown and t.name not in tasks]
    hidden = tuple(n for n in names if n not in shown)
    about = {tool_name(name, t.name): first_line(t.description or "") for t in kept}
    return ServerStatus(name, True, tuple(about), hidden, descriptions=about, needs_tasks=tasks)


def first_line(text: str, limit: int = 100) -> str:
    """The first non-empty line of `text`, cut at `limit` characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
