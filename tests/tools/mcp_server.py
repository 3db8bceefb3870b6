"""A real MCP server (the `mcp` SDK's MCPServer) over stdio, for the MCP tests; with
`--http PORT`, over streamable HTTP on 127.0.0.1:PORT/mcp instead.

Writes its pid to $MCP_PID_FILE when set; `FAIL_AT_START=1` makes it exit before serving.
"""

from __future__ import annotations

import base64
import os
import struct
import subprocess
import sys
import threading
import zlib

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
    ToolExecution,
)


class FixtureServer(MCPServer):
    """The SDK's server, with tools whose names start `task_` declared as task-only
    (`execution.taskSupport: "required"`; the SDK's decorator cannot say so)."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        required = ToolExecution(task_support="required")
        return [
            t.model_copy(update={"execution": required}) if t.name.startswith("task_") else t
            for t in tools
        ]


server = FixtureServer("fixture", log_level="CRITICAL")
# A process that outlives a polite stop: only SIGKILL ends it.
STUBBORN = (
    "import signal, threading\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "threading.Event().wait()\n"
)
# A 1x1 PNG: 70 bytes.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwAD"
    "hgGAWjR9awAAAABJRU5ErkJggg=="
)


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return f"{a} + {b} = {a + b}"


@server.tool()
def echo(text: str) -> str:
    """Return `text` as it is."""
    return text


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of the server ("<unset>" when it has none)."""
    return os.environ.get(name, "<unset>")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP header of this call's request (HTTP transport only)."""
    request = ctx.request_context.request
    return str(request.headers.get(name, "<none>")) if request is not None else "<no request>"


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and a tiny PNG."""
    return [
        TextContent(type="text", text="a pixel"),
        ImageContent(type="image", data=PIXEL, mime_type="image/png"),
    ]


def png(width: int, height: int) -> str:
    """A grey PNG of this size, base64 (the emulator sizes an image from its header)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    head = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    data = chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + data).decode()


@server.tool()
def media() -> list[ContentBlock]:
    """A BMP (a format the API does not take), a 300x200 PNG and an embedded PDF."""
    pdf = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()
    return [
        ImageContent(
            type="image", data=base64.b64encode(b"BM" * 8).decode(), mime_type="image/bmp"
        ),
        TextContent(type="text", text="the chart:"),
        ImageContent(type="image", data=png(300, 200), mime_type="image/png"),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///report.pdf", mime_type="application/pdf", blob=pdf
            ),
        ),
    ]


@server.tool()
def kinds() -> list[ContentBlock]:
    """One block of each other kind: audio, a resource link, embedded text and binary."""
    return [
        AudioContent(
            type="audio", data=base64.b64encode(b"RIFF" * 4).decode(), mime_type="audio/wav"
        ),
        ResourceLink(
            type="resource_link",
            name="log",
            description="the app's log",
            uri="file:///var/log/app.log",
            size=2048,
        ),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="memo://1", mime_type="text/plain", text="hello"),
        ),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(
                uri="blob://2", blob=base64.b64encode(b"x" * 10).decode()
            ),
        ),
    ]


@server.tool()
def structured() -> CallToolResult:
    """A result with structured content only."""
    return CallToolResult(content=[], structured_content={"rows": 2, "ok": True})


@server.tool()
def task_render(scene: str) -> str:
    """Render a scene (a long job: only as an MCP task)."""
    return f"rendered {scene}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `later` and tell the client its tool list changed."""
    server.add_tool(lambda: "added mid-run", name="later", description="A tool added mid-run.")
    await ctx.session.send_tool_list_changed()
    return "grown"


@server.tool()
async def steps(ctx: Context) -> str:
    """Report progress three times, then answer."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"step {step} of 3")
    return "stepped"


@server.tool()
def client(ctx: Context) -> str:
    """The name and version the client gave in `initialize`."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} {info.version}" if info is not None else "<none>"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("the fixture failed on purpose")


@server.tool()
def die() -> str:
    """Write to stderr, then exit at once (a server crash mid-run)."""
    print("fixture: fatal: out of cheese", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def hang(gate: str, child: bool = False) -> str:
    """Signal `gate` exists (creates the file), then never answer. With `child`, first start a
    process in the server's group that ignores SIGTERM and never reads stdin."""
    if child:
        subprocess.Popen([sys.executable, "-c", STUBBORN], stdin=subprocess.DEVNULL)
    open(gate, "w").close()
    threading.Event().wait()
    return "never"


def main() -> None:
    if os.environ.get("FAIL_AT_START"):
        print("fixture: cannot open the database", file=sys.stderr, flush=True)
        sys.exit(1)
    pid_file = os.environ.get("MCP_PID_FILE")
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(str(os.getpid()))
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    assert base64.b64decode(PIXEL)
    main()
