"""The async `mcp` SDK driven from sync code: one loop thread, one task per server (stdio or
streamable HTTP)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import functools
import logging
import os
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Coroutine, Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from agentctl.profile.settings import McpServer

T = TypeVar("T")
# How long a server may take to wind down (the SDK closes stdin, waits 2 s, then kills its
# process group and waits 2 s more).
STOP_TIMEOUT_S = 10.0
STDERR_TAIL_BYTES = 2_000
# A server's stderr file is cut back to its tail once it holds more than this; it is looked at
# every STDERR_POLL_S while it grows (at most STDERR_IDLE_S apart while it does not).
STDERR_KEEP_BYTES = 64 * 1024
STDERR_POLL_S = 0.005
STDERR_IDLE_S = 0.02
# A server's tools/list, followed page by page, ends within these (else it cannot start).
MAX_TOOL_PAGES = 100
MAX_TOOLS = 10_000
# A streamable HTTP server's JSON answer (one message) is read up to this many bytes, else the
# request fails; its SSE events are each held to the SDK's own limit (1 MiB).
MAX_HTTP_MESSAGE_BYTES = 16 * 1024 * 1024
# A server may take longer to start (an interpreter, a package download) than to answer.
MIN_START_TIMEOUT_S = 30.0


class CallTimeout(Exception):
    """A request to a server did not finish within its timeout."""


@dataclass(frozen=True)
class Progress:
    """One progress notification of a call: how far (of `total`, when known), and what."""

    done: float
    total: float | None
    message: str | None


@functools.cache
def quiet_sdk_logs() -> None:
    """The SDK logs a server's bad output with tracebacks; the core never prints, so those
    records reach only handlers an application configured (not logging's last resort)."""
    logging.getLogger("mcp").addHandler(logging.NullHandler())


class LoopThread:
    """An asyncio event loop running in one daemon thread; `run` waits for a coroutine."""

    def __init__(self) -> None:
        quiet_sdk_logs()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="agentctl-mcp", daemon=True
        )
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call_soon(self, callback: Any) -> None:
        self._loop.call_soon_threadsafe(callback)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """The coroutine's result; CallTimeout after `timeout` s (the coroutine is cancelled)."""
        return wait(self.submit(coro), timeout)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_TIMEOUT_S)
        if not self._thread.is_alive():
            self._loop.close()


def wait(future: concurrent.futures.Future[T], timeout: float) -> T:
    """`future.result(timeout)`, cancelling the work on a timeout or Ctrl-C."""
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise CallTimeout(f"no answer within {timeout:g} s") from None
    except BaseException:
        future.cancel()
        raise


class ServerConnection:
    """One MCP server (stdio or HTTP): started by `start`, held open by a task until `stop`."""

    def __init__(self, name: str, server: McpServer, loop: LoopThread) -> None:
        self.name = name
        self.server = server
        self._loop = loop
        # The server's stderr, for its tail; closed by stop(). Appending (the flag belongs to
        # the open file the server shares), so that cutting it back makes it small again.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        flags = fcntl.fcntl(self._stderr.fileno(), fcntl.F_GETFL)
        fcntl.fcntl(self._stderr.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
        self._ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self._done: concurrent.futures.Future[None] | None = None
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        # Set by the server's notifications/tools/list_changed; taken by `take_change`.
        self._changed = threading.Event()

    def start(self) -> list[Any]:
        """Start the server, initialize, list its tools (the SDK's `Tool` objects)."""
        self._done = self._loop.submit(self._serve())
        return wait(self._ready, max(self.server.timeout_s, MIN_START_TIMEOUT_S))

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Generator[Progress, None, Any]:
        """The SDK's CallToolResult (CallTimeout, or the SDK's error when the server is gone),
        yielding the server's progress notifications while it runs (the call has a progress
        token): the latest one each time, so a flood of them is not queued up."""
        wake = threading.Event()
        latest: list[Progress] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            latest[:] = [Progress(done, total, message)]
            wake.set()

        coro = self._session.call_tool(tool, dict(arguments), progress_callback=on_progress)
        future = self._loop.submit(coro)
        future.add_done_callback(lambda _: wake.set())
        deadline = time.monotonic() + self.server.timeout_s
        try:
            while not future.done():
                if not wake.wait(max(deadline - time.monotonic(), 0)):
                    raise CallTimeout(f"no answer within {self.server.timeout_s:g} s")
                wake.clear()
                if latest:
                    yield latest.pop()
            return future.result()
        finally:
            future.cancel()  # a timeout, Ctrl-C, or the caller gone (no-op once done)

    def take_change(self) -> bool:
        """Whether the server said its tools changed since the last call (then clears it)."""
        changed = self._changed.is_set()
        self._changed.clear()
        return changed

    def list_tools(self) -> list[Any]:
        """The server's tools as it lists them now (bounded as at the start)."""
        return self._loop.run(list_all_tools(self._session), self.server.timeout_s)

    async def _on_message(self, message: Any) -> None:
        """A notification or transport error from the server: only list_changed is acted on
        (a flag: a flood of them costs one tools/list before the next request)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._changed.set()

    def stop(self) -> None:
        """Ask the serving task to close the session; the SDK then stops the process group."""
        if self._stop is not None:
            self._loop.call_soon(self._stop.set)
        if self._done is not None:
            if not self._ready.done():  # still starting (a start timeout or Ctrl-C)
                self._done.cancel()
            concurrent.futures.wait([self._done], STOP_TIMEOUT_S)
        self._stderr.close()

    def stderr_tail(self, lines: int = 10) -> str:
        """The last lines the server wrote to stderr ("" when none)."""
        size = os.fstat(self._stderr.fileno()).st_size
        start = max(0, size - STDERR_TAIL_BYTES)
        data = os.pread(self._stderr.fileno(), size - start, start)
        return "\n".join(data.decode("utf-8", "replace").strip().splitlines()[-lines:])

    def trim_stderr(self) -> int:
        """Cut the stderr file back to its last STDERR_TAIL_BYTES once it holds more than
        STDERR_KEEP_BYTES; its size before."""
        fd = self._stderr.fileno()
        first = size = os.fstat(fd).st_size
        for attempt in range(3):
            if size <= STDERR_KEEP_BYTES:
                break
            tail = os.pread(fd, STDERR_TAIL_BYTES, size - STDERR_TAIL_BYTES)
            now = os.fstat(fd).st_size
            if now == size or attempt == 2:  # else it was written to since the tail was read
                os.ftruncate(fd, 0)  # (what lands between these calls, or in a flood, is lost)
                os.write(fd, whole_lines(tail))
                break
            size = now
        return first

    async def _keep_stderr_bounded(self) -> None:
        size, pause = 0, STDERR_POLL_S
        while not self._stderr.closed:
            await asyncio.sleep(pause)
            try:
                before, size = size, self.trim_stderr()
            except (OSError, ValueError):  # closed by stop() meanwhile
                return
            grew = size != before
            pause = STDERR_POLL_S if grew else min(pause * 2, STDERR_IDLE_S)
            if size > STDERR_KEEP_BYTES:
                size = STDERR_TAIL_BYTES

    async def _serve(self) -> None:
        trimmer = asyncio.ensure_future(self._keep_stderr_bounded())
        try:
            await self._run_session()
        except BaseException as err:
            if not self._ready.done():
                self._ready.set_exception(err)
            raise
        finally:
            trimmer.cancel()

    async def _run_session(self) -> None:
        from mcp import ClientSession

        async with (
            self._transport() as (read, write),
            ClientSession(
                read, write, message_handler=self._on_message, client_info=client_info()
            ) as session,
        ):
            await session.initialize()
            tools = await list_all_tools(session)
            self._session, self._stop = session, asyncio.Event()
            self._ready.set_result(tools)
            await self._stop.wait()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        """The read and write streams: a process started here, or an HTTP session."""
        if self.server.url:
            async with http_transport(self.server) as streams:
                yield streams
            return
        from mcp import StdioServerParameters, stdio_client

        from agentctl.tools.mcp_process import launch_argv

        server = self.server
        argv = launch_argv(server)
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(server.env) or None, cwd=server.cwd
        )
        async with stdio_client(params, errlog=self._stderr) as streams:  # type: ignore[arg-type]
            yield streams


def client_info() -> Any:
    """How agentctl introduces itself in `initialize`: its name and version."""
    from mcp.types import Implementation

    from agentctl import __version__

    return Implementation(name="agentctl", version=__version__)


def whole_lines(data: bytes) -> bytes:
    """`data` without its first line and without a last line still being written (when it
    has a line break at all): what is kept of a cut stderr starts and ends on a line."""
    start, end = data.find(b"\n") + 1, data.rfind(b"\n") + 1
    return data[start:end] if 0 < start < end else data


@contextlib.asynccontextmanager
async def http_transport(server: McpServer) -> AsyncIterator[tuple[Any, Any]]:
    """A streamable HTTP session with the server's headers (the SDK's default timeouts)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers=dict(server.headers) or None)
    http.event_hooks["response"].append(bound_json_body)
    async with http, streamable_http_client(server.url, http_client=http) as streams:
        yield streams


async def bound_json_body(response: Any) -> None:
    """A JSON answer's body is read through a counter (the SDK reads it whole)."""
    if response.headers.get("content-type", "").lower().startswith("application/json"):
        response.stream = bounded_stream(response.stream, MAX_HTTP_MESSAGE_BYTES)


def bounded_stream(inner: Any, cap: int) -> Any:
    """An httpx2 response stream that fails once more than `cap` bytes came through."""
    import httpx2

    class BoundedStream(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > cap:
                    raise ValueError(f"an answer of more than {cap} bytes")
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    return BoundedStream()


async def list_all_tools(session: Any) -> list[Any]:
    """Every tool of the server, following `next_cursor` pages: at most MAX_TOOL_PAGES pages
    and MAX_TOOLS tools (a server that pages forever would hold the start, growing)."""
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        if len(tools) > MAX_TOOLS:
            raise ValueError(f"more than {MAX_TOOLS} tools in tools/list")
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise ValueError(f"more than {MAX_TOOL_PAGES} pages of tools/list")
