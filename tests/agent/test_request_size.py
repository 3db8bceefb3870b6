"""A request over the API's size limit is never sent, and a 413 names the remedy: neither
suggests `--resume`, which would send the same request again."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentctl
from agentctl.agent.client import AnthropicClient
from agentctl.agent.request import build_request
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.wire import MAX_REQUEST_BYTES, WireLimits
from agentctl.emulator import Script, ScriptTurn, ToolCall, running
from agentctl.errors import EXIT_LIMIT, ApiError, RequestTooLargeError
from agentctl.profile.settings import Profile

READS = Script(
    tuple(ScriptTurn(tool_calls=(ToolCall("read_file", {"path": "big.txt"}),)) for _ in range(6))
)


def client(url: str, limit: int) -> AnthropicClient:
    retry = RetryPolicy(max_retries=2, base_delay=0.001, sleep=lambda s: None)
    wire = WireLimits(max_request_bytes=limit)
    return AnthropicClient(api_key="k", base_url=url, timeout_s=20, retry=retry, wire=wire)


def test_the_limit_is_the_apis() -> None:
    assert MAX_REQUEST_BYTES == 32 * 2**20


def test_a_run_stops_before_sending_a_request_over_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "ws"
    work.mkdir()
    (work / "big.txt").write_text("lorem ipsum dolor\n" * 600)  # ~11 kB a read
    profile = tmp_path / "p.toml"
    profile.write_text("max_turns = 20\n[context_editing.tool_uses]\nenabled = false\n")
    with running(script=READS) as emu:
        with pytest.raises(RequestTooLargeError) as caught:
            agentctl.run("read", profile=profile, workspace=work,
                         client=client(emu.base_url, 40_000))  # fmt: skip
        sizes = [r.size for r in emu.requests if r.path == "/v1/messages"]
    message = str(caught.value)
    assert caught.value.exit_code == EXIT_LIMIT
    assert "request not sent" in message and "api.threads = true" in message
    assert "continue with" not in message  # no resume into the same wall
    assert sizes and max(sizes) <= 40_000 and len(sizes) < 6  # the big one never left


def test_a_413_names_the_remedy_and_is_not_retried() -> None:
    big = "x" * (MAX_REQUEST_BYTES + 1000)
    request = build_request(Profile(), [{"role": "user", "content": big}], [])
    with running() as emu:
        api = client(emu.base_url, 2 * MAX_REQUEST_BYTES)  # let it go, to meet the server's
        with pytest.raises(ApiError) as caught:
            list(api.stream(request))
        attempts = len(emu.requests)
    assert caught.value.status == 413 and attempts == 1
    assert "the request is over the API's size limit" in str(caught.value)
    assert "api.threads = true" in str(caught.value)


def test_a_413_from_the_server_gets_no_resume_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "ws"
    work.mkdir()
    (work / "big.txt").write_text("lorem ipsum dolor\n" * 600)
    profile = tmp_path / "p.toml"
    profile.write_text("max_turns = 20\n")
    with running(script=READS) as emu:
        emu.max_body_bytes = 40_000  # stands for the API's 32 MB (the client lets it go)
        with pytest.raises(ApiError) as caught:
            agentctl.run("read", profile=profile, workspace=work,
                         client=client(emu.base_url, 10 * MAX_REQUEST_BYTES))  # fmt: skip
    assert caught.value.status == 413
    assert "--resume would send the same request again" in str(caught.value)
    assert "continue with: agentctl run --resume" not in str(caught.value)
