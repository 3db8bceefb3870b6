"""A raw stdio MCP server that misbehaves on purpose (JSON-RPC lines written by hand, not the
SDK's server): HOSTILE=pages answers tools/list with one more page forever; HOSTILE=stderr
writes HOSTILE_MB megabytes to stderr, then a last line, then the largest size its stderr file
had to the file HOSTILE_DONE."""

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


def main() -> None:
    mode = os.environ.get("HOSTILE", "")
    if mode == "stderr":
        threading.Thread(target=flood_stderr, daemon=True).start()
    for line in sys.stdin:
        request = json.loads(line)
        method, message_id = request.get("method"), request.get("id")
        if method == "initialize":
            reply(message_id, {"protocolVersion": request["params"]["protocolVersion"],
                               "capabilities": {"tools": {}},
                               "serverInfo": {"name": "hostile", "version": "1"}})  # fmt: skip
        elif method == "tools/list":
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
