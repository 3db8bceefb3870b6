"""How a stdio MCP server is started: the program found first, then the reaper
(agentctl/tools/mcp_reaper.py) in front of it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl.profile.settings import McpServer
from agentctl.tools.mcp_process import REAPER, launch_argv, locate, reaper_works


def test_a_name_is_looked_up_on_path(tmp_path: Path) -> None:
    program = tmp_path / "serve"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    locate("serve", str(tmp_path), Path("/"))
    with pytest.raises(OSError) as caught:
        locate("serve", str(tmp_path / "elsewhere"), Path("/"))
    assert caught.value.errno == errno.ENOENT


def test_a_path_is_taken_from_the_servers_cwd(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    program = tmp_path / "bin" / "serve"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o644)
    with pytest.raises(OSError) as caught:
        locate("bin/serve", None, tmp_path)
    assert caught.value.errno == errno.EACCES  # there, but not executable
    program.chmod(0o755)
    locate("bin/serve", None, tmp_path)
    with pytest.raises(OSError) as caught:
        locate("bin/serve", None, tmp_path / "bin")
    assert caught.value.errno == errno.ENOENT


def test_on_linux_the_server_starts_under_the_reaper(tmp_path: Path) -> None:
    server = McpServer(command=(sys.executable, "server.py"), cwd=tmp_path)
    argv = launch_argv(server)
    if not reaper_works():
        assert argv == [sys.executable, "server.py"]
        return
    assert argv == [
        *(sys.executable, "-I", "-S", str(REAPER)),
        *(str(os.getpid()), "2.0", sys.executable, "server.py"),
    ]


@pytest.mark.slow
@pytest.mark.skipif(not reaper_works(), reason="the reaper needs pidfd (Linux)")
def test_the_reaper_says_why_a_program_cannot_run_and_exits_127(tmp_path: Path) -> None:
    argv = [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), "2", "/no/such/server"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert done.stderr == "cannot start '/no/such/server': No such file or directory\n"


@pytest.mark.slow
@pytest.mark.skipif(not reaper_works(), reason="the reaper needs pidfd (Linux)")
def test_the_reaper_starts_nothing_when_its_owner_is_not_its_parent(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = [sys.executable, "-I", "-S", str(REAPER), "1", "2", "touch", str(marker)]
    assert subprocess.run(argv, timeout=60).returncode == 1
    assert not marker.exists()
