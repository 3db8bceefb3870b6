"""A raw stdio MCP server that misbehaves on purpose (JSON-RPC lines written by hand, not the
SDK's server): HOSTILE=pages answers tools/list with one more page forever; HOSTILE=stderr
writes HOSTILE_MB megabytes to stderr, then a last line, then the largest size its stderr file
had to the file HOSTILE_DONE; HOSTILE=chatty floods notifications around each call."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path


def flood_stderr() -> None:
    chunk = b"x" * 65_535 + b"\n"
    peak = 0
    for _ in range(int(os.environ["HOSTILE_MB"]) * 16):
        os.write(2, chunk)
        peak = max(peak, os.fstat(2).st_size)
    time.sleep(0.5)  # a last line written while the file is being cut back may be lost
    os.write(2, b"last words\n")
    Path(os.environ["HOSTILE_DONE"]).write_text(str(peak))


def reply(message_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def notify(method: str, params: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}) + "\n")


def chatter(request: dict[str, object], lists: int) -> None:
    """HOSTILE=chatty: 5,000 progress notifications with escape sequences in their message
    and 5,000 tools/list_changed before each answer, which says how often tools/list came."""
    meta = (request.get("params") or {}).get("_meta") or {}  # type: ignore[union-attr]
    for i in range(5_000):
        message = f"\x1b[2J\x1b]0;pwned\x07step {i}"
        notify(
            "notifications/progress",
            {"progressToken": meta.get("progressToken"), "progress": i, "message": message},
        )
        notify("notifications/tools/list_changed", {})
    reply(request["id"], {"content": [{"type": "text", "text": f"listed {lists}"}]})


def main() -> None:
    mode = os.environ.get("HOSTILE", "")
    lists = 0
    if mode == "stderr":
        threading.Thread(target=flood_stderr, daemon=True).start()
    for line in sys.stdin:
        request = json.loads(line)
        method, message_id = request.get("method"), request.get("id")
        if method == "initialize":
            reply(message_id, {"protocolVersion": request["params"]["protocolVersion"],
                               "capabilities": {"tools": {"listChanged": True}},
                               "serverInfo": {"name": "hostile", "version": "1"}})  # fmt: skip
        elif method == "tools/call" and mode == "chatty":
            chatter(request, lists)
        elif method == "tools/list":
            lists += 1
            cursor = int((request.get("params") or {}).get("cursor") or 0)
            tool = {"name": f"t{cursor}", "inputSchema": {"type": "object"}}
            page: dict[str, object] = {"tools": [tool]}
            if mode == "pages":
                page["nextCursor"] = str(cursor + 1)
            reply(message_id, page)
        elif message_id is not None:
            reply(message_id, {})


if __name__ == "__main__":
    main()
