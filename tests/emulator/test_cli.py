"""`agentctl emulator serve` as a real process: URL on stdout, Ctrl-C = 130, light imports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import make_client, request

AGENTCTL = str(Path(sys.executable).parent / "agentctl")


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [AGENTCTL, "emulator", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.slow
def test_serve_prints_url_serves_the_script_and_exits_130_on_ctrl_c(tmp_path: Path) -> None:
    script = tmp_path / "s.toml"
    script.write_text('final_text = "scripted hello"\n')
    process = _serve("--script", str(script))
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        message = make_client(url).beta.messages.create(**request())
        assert message.content[0].text == "scripted hello"  # type: ignore[union-attr]
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    assert err.startswith("server model default: ") and err.count("\n") == 1  # which rules


@pytest.mark.slow
def test_bad_script_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    script = tmp_path / "bad.toml"
    script.write_text('[[turn]]\nstop_reason = "done"\n')
    result = subprocess.run(
        [AGENTCTL, "emulator", "serve", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 2
    assert f"script {script}: turn.0.stop_reason: must be one of" in result.stderr


@pytest.mark.slow
def test_bad_faults_spec_is_a_usage_error() -> None:
    result = subprocess.run(
        [AGENTCTL, "emulator", "serve", "--faults", "teapot@1"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert result.returncode == 2
    assert "faults spec item 'teapot@1': unknown kind 'teapot'" in result.stderr


@pytest.mark.slow
def test_the_emulator_never_imports_anthropic() -> None:
    code = (
        "import sys\n"
        "import agentctl.cli.main, agentctl.emulator.server\n"
        "from agentctl.emulator.server import running\n"
        "with running() as emu: pass\n"
        "print(sorted(m for m in ('anthropic', 'httpx', 'httpx2') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


@pytest.mark.slow
def test_port_in_use_is_a_usage_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [AGENTCTL, "emulator", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert result.returncode == 2
    assert f"--port {port}: cannot listen on 127.0.0.1" in result.stderr


@pytest.mark.slow
def test_serve_takes_the_batch_rules() -> None:
    process = _serve("--batch-ready-after", "2", "--batch-faults", "b:expired")
    try:
        assert process.stdout is not None
        client = make_client(process.stdout.readline().strip())
        requests = [{"custom_id": name, "params": request()} for name in "ab"]
        batch = client.beta.messages.batches.create(requests=requests)  # type: ignore[arg-type]
        states = [client.beta.messages.batches.retrieve(batch.id) for _ in "12"]
        found = {r.custom_id: r.result.type for r in client.beta.messages.batches.results(batch.id)}
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert [s.processing_status for s in states] == ["in_progress", "ended"]
    assert found == {"a": "succeeded", "b": "expired"}
