"""Every figure a server sends is validated before it is counted, shown or recorded (issue 20):
`server_tool_use.*` and `cache_creation.*` like the token counts; and what agentctl records
from a reply it accepted can always be read back."""

from __future__ import annotations

import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_client_hostile import head, outcome, serve, sse

pytestmark = pytest.mark.slow  # a real server and the SDK per case


def frames(start_usage: dict[str, Any], final_usage: dict[str, Any]) -> bytes:
    start = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    return b"".join([
        sse("message_start", {"type": "message_start", "message": start}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}}),
        sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": "hi"}}),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse("message_delta", {"type": "message_delta", "usage": final_usage,
                              "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        sse("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


AGENTCTL = [sys.executable, "-m", "agentctl"]
BASE = {"input_tokens": 10, "output_tokens": 3}


@pytest.mark.parametrize(
    ("start", "final", "says"),
    [
        (
            {},
            {"server_tool_use": {"web_search_requests": -1000}},
            "usage.server_tool_use.web_search_requests = -1000 is not a count",
        ),
        (
            {},
            {"server_tool_use": {"web_search_requests": [1]}},
            "usage.server_tool_use.web_search_requests = [1] is not a count",
        ),
        (
            {},
            {"server_tool_use": {"web_fetch_requests": 1.5}},
            "usage.server_tool_use.web_fetch_requests = 1.5 is not a count",
        ),
        ({}, {"server_tool_use": [3]}, "usage.server_tool_use is not an object"),
        (
            {"cache_creation": {"ephemeral_1h_input_tokens": "lots"}},
            {},
            "usage.cache_creation.ephemeral_1h_input_tokens = 'lots' is not a count",
        ),
        (
            {"cache_creation": {"ephemeral_5m_input_tokens": -5}},
            {},
            "usage.cache_creation.ephemeral_5m_input_tokens = -5 is not a count",
        ),
        ({"cache_creation": 7}, {}, "usage.cache_creation is not an object"),
    ],
)
def test_every_usage_figure_is_validated(
    start: dict[str, Any], final: dict[str, Any], says: str
) -> None:
    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(frames({**BASE, **start}, {**BASE, **final}))

    with serve(answer) as (url, seen, _stop):
        err, sleeps = outcome(url)
    assert says in str(err)
    assert "\n" not in str(err)
    assert len(seen) == 1 and sleeps == []  # refused, not retried


def test_a_refused_figure_leaves_a_transcript_agentctl_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix `cache_creation.ephemeral_1h_input_tokens = "lots"` was accepted: the
    run exited 0 printing pydantic warnings even under --quiet, and `sessions show` then
    refused the transcript it had written. Now: refused, one line, no warning."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.chdir(tmp_path)
    task = tmp_path / "task.md"
    task.write_text("Say hi.\n")

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(frames({**BASE, "cache_creation": {"ephemeral_1h_input_tokens": "lots"}},
                             BASE))  # fmt: skip

    with serve(answer) as (url, _seen, _stop):
        done = subprocess.run(
            [*AGENTCTL, "run", str(task), "--quiet", "--set", f"api.base_url={url}",
             "--set", "api.max_retries=0"],
            capture_output=True, text=True, timeout=120, env=os.environ.copy(),
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "ephemeral_1h_input_tokens = 'lots' is not a count" in done.stderr
    assert "Traceback" not in done.stderr and "ydantic" not in done.stderr
    listed = subprocess.run([*AGENTCTL, "sessions", "list"], capture_output=True,
                            text=True, timeout=120, env=os.environ.copy())  # fmt: skip
    assert listed.returncode == 0, listed.stderr


def text_frames(text_json: bytes) -> bytes:
    """One end_turn answer whose text delta is `text_json` (raw JSON string, escapes kept)."""
    return frames(BASE, BASE).replace(b'"text": "hi"', b'"text": ' + text_json)


def run_against(answer: Any, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    task = tmp_path / "task.md"
    task.write_text("Say hi.\n")
    with serve(answer) as (url, _seen, _stop):
        return subprocess.run(
            [*AGENTCTL, "run", str(task), "--set", f"api.base_url={url}",
             "--set", "api.max_retries=0", *flags],
            capture_output=True, text=True, timeout=120, env=os.environ.copy(),
        )  # fmt: skip


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_a_lone_surrogate_in_the_answer_is_shown_and_recorded_safely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]
) -> None:
    """Before the fix: a UnicodeEncodeError traceback (stdout and the transcript are UTF-8)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.chdir(tmp_path)

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(text_frames(b'"caf\\ud800 ok \\udc80"'))

    done = run_against(answer, tmp_path, *flags)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    shown_text = done.stdout.replace("\\ufffd", "\ufffd")  # --json escapes non-ASCII
    assert "caf\ufffd ok \ufffd" in shown_text and "\\ud800" not in done.stdout
    shown = subprocess.run([*AGENTCTL, "sessions", "show", "last"], capture_output=True,
                           text=True, timeout=120, env=os.environ.copy())  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "caf\ufffd ok" in shown.stdout


def test_from_python_only_the_documented_exceptions_leave_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix `agentctl.run` raised a raw TypeError (a list in server_tool_use) and
    UnicodeEncodeError (a lone surrogate in the answer)."""
    import agentctl

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.chdir(tmp_path)
    replies = iter([
        frames(BASE, {**BASE, "server_tool_use": {"web_search_requests": [1]}}),
        text_frames(b'"caf\\ud800"'),
    ])  # fmt: skip

    def answer(h: BaseHTTPRequestHandler) -> None:
        head(h)
        h.wfile.write(next(replies))

    with serve(answer) as (url, _seen, _stop):
        profile = tmp_path / "p.toml"
        profile.write_text(f'[api]\nbase_url = "{url}"\nmax_retries = 0\n')
        with pytest.raises(agentctl.ApiError, match="web_search_requests = \\[1\\] is not a"):
            agentctl.run("Say hi.", profile=profile)
        assert agentctl.run("Say hi.", profile=profile).text == "caf\ufffd"
