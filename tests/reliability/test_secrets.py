"""A server that echoes the key: real `agentctl run` processes never show or write it.

`agentctl emulator serve --faults echokey@2,echokey@4` answers each run's second request with a
401 whose message and request-id header repeat the credential the request carried (the first
is answered, so the run has a transcript for the error to be recorded in). One run uses an
`sk-ant-`-shaped ANTHROPIC_API_KEY, the other an ANTHROPIC_AUTH_TOKEN of no known shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import emulator_process, make_workspace

AGENTCTL = [sys.executable, "-m", "agentctl"]
KEY = "sk-ant-api03-ECHOED-key-must-not-leak-0123456789"
TOKEN = "echoed-bearer-token-of-no-known-shape-5mX"


@pytest.fixture
def echoing_server(tmp_path: Path) -> Iterator[str]:
    with emulator_process(tmp_path, "echokey@2,echokey@4") as (url, stderr):
        yield url
    assert KEY not in stderr[0] and TOKEN not in stderr[0]


def files_containing(top: Path, secret: str) -> list[str]:
    return [
        str(path.relative_to(top))
        for path in top.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("env_name", "secret"), [("ANTHROPIC_API_KEY", KEY),
                                                  ("ANTHROPIC_AUTH_TOKEN", TOKEN)])  # fmt: skip
def test_an_echoed_key_is_in_no_output_and_no_file(
    tmp_path: Path, echoing_server: str, env_name: str, secret: str
) -> None:
    home = tmp_path / "home"
    task = make_workspace(tmp_path, 2)
    env = {**os.environ, "AGENTCTL_HOME": str(home), "ANTHROPIC_BASE_URL": echoing_server,
           env_name: secret}  # fmt: skip
    stdout = {}
    for argv in (["--json"], []):
        done = subprocess.run(
            [*AGENTCTL, "run", str(task), "--set", "api.max_retries=0", *argv],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert "API error 401 (authentication_error: invalid x-api-key: " in done.stderr
        assert "[REDACTED]" in done.stderr
        assert secret not in done.stdout + done.stderr
        stdout[bool(argv)] = done.stdout
    events = [json.loads(line) for line in stdout[True].splitlines()]
    assert [e for e in events if e["event"] == "error" and "[REDACTED]" in e["message"]]
    transcripts = list((home / "sessions").glob("*.jsonl"))
    assert len(transcripts) == 2
    assert any("[REDACTED]" in t.read_text() for t in transcripts)
    assert files_containing(tmp_path, secret) == []
