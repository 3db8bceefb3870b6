"""A real MCP server (the `mcp` SDK's MCPServer, stdio) whose tool starts a daemon: a process
that leaves the server's process group and session (setsid) and, forked twice, is no longer
the child of anything the server knows. For the launcher's tests (test_mcp_reaper.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("daemons", log_level="CRITICAL")
# setsid(), fork again and let the middle exit (the grandchild is orphaned), ignore SIGTERM,
# write the grandchild's pid to argv[1], then wait forever: only SIGKILL ends it.
DAEMON = (
    "import os, signal, sys, threading\n"
    "os.setsid()\n"
    "if os.fork():\n"
    "    os._exit(0)\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "with open(sys.argv[1] + '.tmp', 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "threading.Event().wait()\n"
)


@server.tool()
def daemon(pid_file: str) -> str:
    """Start the daemon; answer once it has written its pid to `pid_file`."""
    middle = subprocess.Popen([sys.executable, "-c", DAEMON, pid_file], stdin=subprocess.DEVNULL)
    middle.wait()
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file):
        if time.monotonic() > deadline:
            return "no pid file"
        time.sleep(0.01)
    return "started"


@server.tool()
def hang(gate: str) -> str:
    """Create the file `gate`, then never answer."""
    open(gate, "w").close()
    threading.Event().wait()
    return "never"


if __name__ == "__main__":
    server.run("stdio")
