"""A relay in front of the emulator that stands for "another server": it forwards every request
and renames the emulator's message ids (`msg_emu...`), so the probe cannot tell it is the
emulator. Real HTTP both ways."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def relay(upstream: str) -> Iterator[str]:
    """A base URL that forwards to `upstream` with the emulator's ids renamed."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            ask = urllib.request.Request(upstream + self.path, body, headers, method="POST")
            try:
                with urllib.request.urlopen(ask, timeout=60) as answer:
                    status, got, content = answer.status, answer.headers, answer.read()
            except urllib.error.HTTPError as err:
                status, got, content = err.code, err.headers, err.read()
            data = content.replace(b"msg_emu", b"msg_01x")
            self.send_response(status)
            for name in ("content-type", "request-id"):
                if got.get(name):
                    self.send_header(name, got[name])
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
