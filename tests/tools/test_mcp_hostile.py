"""MCP servers that try to exhaust agentctl (issue 20): endless tools/list pages end in a
clean one-line error; a flood on stderr keeps a bounded file."""

from __future__ import annotations

import contextlib
import http.server
import json
import sys
import threading
from pathlib import Path

import pytest

from agentctl.profile.settings import McpServer
from agentctl.tools.mcp_bridge import LoopThread, ServerConnection
from tests.tools.mcp_harness import invoke, wait_for

pytestmark = pytest.mark.slow  # each starts a server process

SERVER = Path(__file__).with_name("hostile_mcp.py")


def hostile_profile(folder: Path, env: dict[str, str]) -> Path:
    command = json.dumps([sys.executable, str(SERVER)])
    table = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
    path = folder / "agentctl.toml"
    path.write_text(f"[mcp.servers.bad]\ncommand = {command}\nenv = {{ {table} }}\n")
    return path


def test_endless_tools_list_pages_are_one_line(tmp_path: Path) -> None:
    """Before the fix agentctl followed `nextCursor` until the start timeout (30 s), its
    memory growing with every page (past 2 GB with large pages)."""
    profile = hostile_profile(tmp_path, {"HOSTILE": "pages"})
    result = invoke("mcp", "list", "--profile", str(profile), "--json")
    assert result.exit_code == 2, result.output
    [status] = json.loads(result.stdout)
    assert "more than 100 pages of tools/list" in status["error"]


def test_a_servers_stderr_file_is_kept_to_a_bounded_tail(tmp_path: Path) -> None:
    """Before the fix a server's stderr went to a temporary file with no limit (all of it
    kept for the 2 kB of tail ever shown); now the file is cut back to its tail as it grows."""
    done = tmp_path / "done"
    env = {"HOSTILE": "stderr", "HOSTILE_MB": "300", "HOSTILE_DONE": str(done)}
    server = McpServer(command=(sys.executable, str(SERVER)), env=env, cwd=tmp_path)
    loop = LoopThread()
    connection = ServerConnection("bad", server, loop)
    try:
        connection.start()
        wait_for(lambda: done.exists() and done.read_text() != "", 60)
        # the last line is kept (a line cut back while being written may run into it)
        assert connection.stderr_tail(lines=1).endswith("last words")
    finally:
        connection.stop()
        loop.close()
    # 300 MB written: all of it kept before; 13-16 MB at the most since (the file is cut back
    # every few ms while it grows)
    assert int(done.read_text()) < 100_000_000


class HugeAnswers(http.server.BaseHTTPRequestHandler):
    """A streamable HTTP MCP server by hand: tools/list answers 20 MB of valid JSON."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "id" not in request:
            self.send_response(202)
            self.end_headers()
            return
        if request["method"] == "initialize":
            result = {"protocolVersion": request["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "huge", "version": "1"}}  # fmt: skip
            self.answer(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            return
        head = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}})
        pad = 20_000_000
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(head) + pad + 9))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(head[:-1].encode() + b', "p": "')
            for _ in range(pad // 100_000):
                self.wfile.write(b"x" * 100_000)
            self.wfile.write(b'"}')

    def answer(self, body: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


def test_a_streamable_http_answer_is_read_up_to_a_bound(tmp_path: Path) -> None:
    """Before the fix the SDK read a JSON answer whole (600 MB sent: 800 MB RSS; endless:
    MemoryError); now an answer past 16 MiB fails the request."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HugeAnswers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        profile = tmp_path / "agentctl.toml"
        url = f"http://127.0.0.1:{server.server_port}/mcp"
        profile.write_text(f'[mcp.servers.huge]\nurl = "{url}"\n')
        result = invoke("mcp", "list", "--profile", str(profile), "--json")
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 2, result.output
    [status] = json.loads(result.stdout)
    assert "an answer of more than 16777216 bytes" in status["error"]


def test_floods_of_progress_and_list_changed_cost_little_and_print_nothing(
    tmp_path: Path,
) -> None:
    """Each call brings 5,000 progress notifications (escape sequences in their message) and
    5,000 tools/list_changed: the server is listed once more per turn, not 5,000 times, and
    no escape sequence reaches the status line."""
    from agentctl import ProgressEvent, run

    from .mcp_harness import records, tool_results, write_task

    profile = hostile_profile(tmp_path, {"HOSTILE": "chatty"})
    task = write_task(tmp_path, [("mcp__bad__t0", {})], [("mcp__bad__t0", {})])
    shown: list[str] = []
    result = run(
        task,
        profile=profile,
        offline=True,
        on_event=lambda e: shown.extend(
            [e.message] if isinstance(e, ProgressEvent) and e.kind == "tool_progress" else []
        ),
    )
    assert result.stop_reason == "end_turn"
    assert [r["content"] for r in tool_results(records())] == ["listed 1", "listed 2"]
    assert shown and all(line.isprintable() for line in shown)
    assert shown[-1] == "?[2J?]0;pwned?step 4999"
