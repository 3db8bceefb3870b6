"""The emulator's HTTP server (stdlib, 127.0.0.1, HTTP/1.1 keep-alive) and `running(...)`."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.emulator.faults import Fault, FaultPlan, parse_faults
from agentctl.emulator.protocol import (
    BATCHES_ROUTE,
    PAUSE_AFTER,
    ApiFailure,
    check_auth,
    check_version,
    error_body,
    new_request_id,
)
from agentctl.emulator.sse import encode_event, message_events

# Lazy imports: the services (model, context engine, batches) and the script and corpus
# loaders load when `running` needs them, so a server only started and connected to
# (`doctor --offline`) never loads them.
if TYPE_CHECKING:
    from agentctl.emulator.batches import BatchesService, BatchFaults, BatchTiming
    from agentctl.emulator.context_engine import ContextEngine
    from agentctl.emulator.corpus import Corpus
    from agentctl.emulator.model import Model, Script
    from agentctl.emulator.service import MessagesService

ROUTES = ("/v1/messages", "/v1/messages/count_tokens")
REDACTED_HEADERS = ("x-api-key", "authorization")
# What a long-lived emulator (`emulator serve`, `run --offline`) keeps of the requests it was
# sent: the last 50, and of their bodies 8 MiB at most (as parsed JSON some 40 MB of memory).
KEEP_REQUESTS = 50
KEEP_BYTES = 8 << 20
MAX_BODY_BYTES = 32 << 20  # the API's request size limit: larger bodies get 413 unread


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the emulator received it; credentials are redacted.

    `size` is the body's length in bytes; `body` is None when it was too large to keep.
    """

    number: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    size: int = 0

    @property
    def kept_bytes(self) -> int:
        return self.size if self.body is not None else 0


@dataclass(frozen=True)
class Response:
    """An answer before it is written: JSON, or a list of SSE frames."""

    status: int
    body: Any = None
    events: tuple[bytes, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    request_id: str = ""  # empty: a fresh `req_...` id


class Emulator:
    """A running emulator: its base URL and the requests it has received (thread-safe).

    Its services (the model, the context engine, the batches) are built by `build` when the
    first request needs them: a server that is only started and connected to (`doctor
    --offline`) never loads them.
    """

    def __init__(
        self,
        build: Callable[[], tuple[MessagesService, BatchesService]],
        faults: FaultPlan,
        port: int = 0,
        keep_requests: int | None = None,
        keep_bytes: int | None = None,
    ) -> None:
        self._build = build
        self._services: tuple[MessagesService, BatchesService] | None = None
        self._build_lock = threading.Lock()
        self.faults = faults
        self.requests: list[ReceivedRequest] = []
        # None: keep all (tests); a long-lived server keeps the last few, and bodies of at
        # most `keep_bytes` in all (a body larger than that is recorded without it).
        self.keep_requests = keep_requests
        self.keep_bytes = keep_bytes
        self.max_body_bytes = MAX_BODY_BYTES  # the API's request limit (lower it in tests)
        self._kept_bytes = 0
        self._count = 0
        self.errors: list[str] = []  # tracebacks of unexpected exceptions (answered with 500)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.emulator = self
        # A short poll interval keeps close() fast (serve_forever checks for shutdown this often).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def service(self) -> MessagesService:
        """The Messages API service (built on first use)."""
        return self._built()[0]

    @property
    def batches(self) -> BatchesService:
        """The Message Batches service (built on first use, with the Messages service)."""
        return self._built()[1]

    def _built(self) -> tuple[MessagesService, BatchesService]:
        with self._build_lock:
            if self._services is None:
                self._services = self._build()
            return self._services

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`, for `anthropic.Anthropic(base_url=...)`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> None:
        """Serve on a background thread."""
        self._thread.start()

    def close(self) -> None:
        """Stop serving, wake hanging handlers and drop open keep-alive connections."""
        self.stopping.set()
        if self._thread.is_alive():  # shutdown() waits for serve_forever: never if unstarted
            self._httpd.shutdown()
        with self._lock:
            for connection in list(self._connections):
                _shut(connection)
        self._httpd.server_close()

    def record(
        self, method: str, path: str, headers: dict[str, str], body: Any, size: int = 0
    ) -> int:
        """Append a ReceivedRequest; returns its 1-based number (the fault plan's key)."""
        shown = {k: ("REDACTED" if k in REDACTED_HEADERS else v) for k, v in headers.items()}
        if self.keep_bytes is not None and size > self.keep_bytes:
            body = None
        with self._lock:
            self._count += 1
            request = ReceivedRequest(self._count, method, path, shown, body, size)
            self.requests.append(request)
            self._kept_bytes += request.kept_bytes
            self._trim()
            return self._count

    def _trim(self) -> None:
        """Drop the oldest records past `keep_requests` or `keep_bytes` (lock held)."""
        while self.requests and (
            (self.keep_requests is not None and len(self.requests) > self.keep_requests)
            or (self.keep_bytes is not None and self._kept_bytes > self.keep_bytes)
        ):
            self._kept_bytes -= self.requests.pop(0).kept_bytes

    def track(self, connection: socket.socket, live: bool) -> None:
        """Keep the set of open connections, so close() can drop them."""
        with self._lock:
            if live:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def answer(
        self, route: str, headers: dict[str, str], body: Any, method: str = "POST"
    ) -> Response:
        """The response for one API request, errors included (GET: the batches endpoints)."""
        try:
            check_auth(headers)
            check_version(headers)
            if route.startswith(BATCHES_ROUTE):  # a cancel has no body
                return Response(200, self.batches.handle(method, route, headers, body))
            if body is None:
                raise ApiFailure(400, "There was an error parsing the body: invalid JSON")
            if route == ROUTES[1]:
                return Response(200, self.service.count_tokens(headers, body))
            message = self.service.create(headers, body)
        except ApiFailure as failure:
            return failure_response(failure)
        except Exception as err:  # a bug in a model or the engine: answer 500, keep the trace
            self.errors.append(traceback.format_exc())
            why = f"Internal server error (emulator: {type(err).__name__}: {err})"
            return failure_response(ApiFailure(500, why))
        if isinstance(body, dict) and body.get("stream") is True:
            frames = tuple(encode_event(n, d) for n, d in message_events(message))
            return Response(200, events=frames)
        return Response(200, message)


def failure_response(failure: ApiFailure) -> Response:
    """An error Response; the request id is filled in when it is written."""
    return Response(failure.status, failure)


def _shut(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the peer
        connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client that keeps a connection open never blocks shutdown
    request_queue_size = 64  # bursts of parallel clients (tests, benches) are not refused
    emulator: Emulator

    def handle_error(self, request: Any, client_address: Any) -> None:
        """socketserver prints tracebacks to stderr; the core never prints, so keep them."""
        kind = sys.exc_info()[0]
        if kind is not None and issubclass(kind, ConnectionError | TimeoutError):
            return  # the client went away (or a fault dropped it): normal here
        self.emulator.errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as httpx's connection pool expects
    server_version = "agentctl-emulator"
    timeout = 120  # idle keep-alive connections end eventually
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # holds the body back ~40 ms per request.
    disable_nagle_algorithm = True

    server: _Server

    @property
    def emulator(self) -> Emulator:
        return self.server.emulator

    def setup(self) -> None:
        super().setup()
        self.emulator.track(self.connection, True)

    def finish(self) -> None:
        self.emulator.track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the core never prints; requests are inspectable through Emulator.requests

    def do_GET(self) -> None:
        route = urlsplit(self.path).path.rstrip("/")
        if not route.startswith(BATCHES_ROUTE):
            self._not_found()
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.emulator.record("GET", self.path, headers, None)
        self._send(self.emulator.answer(route, headers, None, method="GET"), None)

    def do_POST(self) -> None:
        route = urlsplit(self.path).path.rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        size = int(self.headers.get("content-length") or 0)
        limit = self.emulator.max_body_bytes
        if size > limit:  # answered unread, so the connection cannot be reused
            self.emulator.record("POST", self.path, headers, None, size)
            self.close_connection = True
            message = f"Request exceeds the maximum allowed number of bytes ({limit})"
            self._send(failure_response(ApiFailure(413, message)), None)
            return
        body = self._read_json(size)
        number = self.emulator.record("POST", self.path, headers, body, size)
        if route not in ROUTES and not route.startswith(BATCHES_ROUTE):
            self._not_found()
            return
        fault = self.emulator.faults.fault_for(number)
        streaming = isinstance(body, dict) and body.get("stream") is True
        if fault is not None and _inject_before(self, fault, streaming):
            return
        self._send(self.emulator.answer(route, headers, body), fault)

    def _read_json(self, length: int) -> Any:
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _not_found(self) -> None:
        self._send(failure_response(ApiFailure(404, "Not Found")), None)

    def _send(self, response: Response, fault: Fault | None) -> None:
        request_id = response.request_id or new_request_id()
        if response.events:
            _write_stream(self, response, request_id, fault)
            return
        payload = response.body
        if isinstance(payload, ApiFailure):
            payload = error_body(payload, request_id)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        kind = "application/x-jsonl" if isinstance(payload, bytes) else "application/json"
        if fault is not None and fault.kind == "malformed":
            data = data[: max(1, len(data) // 2)]  # 200 with a cut-off JSON body
        self._head(response.status, request_id, kind, response.headers)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _head(
        self, status: int, request_id: str, kind: str, extra: tuple[tuple[str, str], ...]
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("request-id", request_id)
        for name, value in extra:
            self.send_header(name, value)


def _inject_before(handler: _Handler, fault: Fault, streaming: bool) -> bool:
    """Faults that replace the answer; True when the request has been dealt with."""
    if fault.kind == "drop" and not streaming:
        _drop_before_any_byte(handler)
        return True
    if fault.kind in ("429", "529", "500") or (fault.kind == "streamerror" and not streaming):
        handler._send(_status_fault(fault), None)
        return True
    if fault.kind == "echokey":
        handler._send(_echo_key(handler), None)
        return True
    if fault.kind == "hang":
        handler.emulator.stopping.wait(fault.arg)  # interruptible by Emulator.close()
        handler.close_connection = True
        return True
    return False


def _status_fault(fault: Fault) -> Response:
    if fault.kind == "429":
        failure = ApiFailure(429, "Number of request tokens has exceeded your rate limit.")
        return Response(429, failure, headers=(("retry-after", f"{fault.arg:g}"),))
    if fault.kind in ("529", "streamerror"):
        return Response(529, ApiFailure(529, "Overloaded"))
    return Response(500, ApiFailure(500, "Internal server error"))


def _echo_key(handler: _Handler) -> Response:
    """A hostile server that repeats the caller's key in its error message and request id."""
    credential = handler.headers.get("x-api-key") or handler.headers.get("authorization") or ""
    failure = ApiFailure(401, f"invalid x-api-key: {credential}")
    return Response(401, failure, request_id=credential)


def _write_stream(
    handler: _Handler, response: Response, request_id: str, fault: Fault | None
) -> None:
    """SSE over chunked encoding, so a dropped connection is visible to the client."""
    handler._head(200, request_id, "text/event-stream; charset=utf-8", ())
    handler.send_header("transfer-encoding", "chunked")
    handler.send_header("cache-control", "no-cache")
    handler.end_headers()
    frames = list(response.events)
    if fault is not None and fault.kind == "malformed":
        frames[1] = b'event: content_block_start\ndata: {"type": "content_block_st\n\n'
    if fault is not None and fault.kind == "drop":
        frames = frames[: int(fault.arg)]
    if fault is not None and fault.kind == "streamerror":  # as the API does mid-stream
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        frames = [*frames[: int(fault.arg)], encode_event("error", error)]
    handler.wfile.write(b"".join(b"%x\r\n%s\r\n" % (len(f), f) for f in frames))
    if fault is not None and fault.kind == "drop":
        handler.close_connection = True
        _shut(handler.connection)
        return
    handler.wfile.write(b"0\r\n\r\n")


def _drop_before_any_byte(handler: _Handler) -> None:
    handler.close_connection = True
    _shut(handler.connection)


def build_model(script: Path | Script | None, placeholder: str) -> Model:
    """The scripted model for a script (file or object); the default policy otherwise."""
    from agentctl.emulator.model import ScriptedModel
    from agentctl.emulator.policy import DefaultPolicy
    from agentctl.emulator.script import load_script

    if isinstance(script, Path):
        script = load_script(script)
    if script is None:
        return DefaultPolicy(placeholder)
    return ScriptedModel(script)


@contextmanager
def running(
    *,
    script: Path | Script | None = None,
    faults: str | FaultPlan | None = None,
    port: int = 0,
    clock: Callable[[], float] = time.monotonic,
    model: Model | None = None,
    engine: ContextEngine | None = None,
    keep_requests: int | None = None,
    keep_bytes: int | None = None,
    server_model: ServerModel = DEFAULT_SERVER_MODEL,
    web: Path | Corpus | None = None,
    pause_after: int = PAUSE_AFTER,
    context_window: int | None = None,
    batch_timing: BatchTiming | None = None,
    batch_faults: BatchFaults | None = None,
) -> Iterator[Emulator]:
    """Start an emulator on a background thread for the duration of the block, playing the
    server rules of `server_model` (trigger basis, keep counting, placeholder, ...).

    `web`: the corpus (folder or JSON file) web_search and web_fetch answer from; None: the
    built-in one. `pause_after`: server tool continuations in one response before pause_turn.
    `context_window`: the window enforced for every model (default: the script's
    `context_window`, else each model's own from context.prices).
    `batch_timing`, `batch_faults`: when a Message Batch ends, which requests in it fail.
    """
    plan = parse_faults(faults) if isinstance(faults, str) else (faults or FaultPlan())
    if isinstance(script, Path):
        from agentctl.emulator.script import load_script  # a bad script fails here, not later

        script = load_script(script)
    if isinstance(web, Path):
        from agentctl.emulator.corpus import load_corpus

        web = load_corpus(web)  # a bad corpus too
    corpus = web
    window = context_window or (script.context_window if script else None)

    def build() -> tuple[MessagesService, BatchesService]:
        from agentctl.emulator.batches import BatchesService
        from agentctl.emulator.context_engine import default_engine
        from agentctl.emulator.service import MessagesService

        service = MessagesService(
            engine or default_engine(clock, server_model),
            model or build_model(script, server_model.placeholder),
            corpus,  # None: the built-in one
            pause_after,
            window,
        )
        return service, BatchesService(service, batch_timing, batch_faults, clock)

    emulator = Emulator(build, plan, port, keep_requests, keep_bytes)
    emulator.start()
    try:
        yield emulator
    finally:
        emulator.close()
