"""`agentctl emulator check`: every recording shipped in tests/recordings/ reproduces, and a
recording the emulator does not reproduce is reported with exit 1 (real HTTP replays)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.emulator.fidelity import compare, parse_recording

RECORDINGS = sorted((Path(__file__).parent.parent / "recordings").glob("*.json"))


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["emulator", "check", *args])
    return result.exit_code, result.output


def test_every_shipped_recording_reproduces() -> None:
    code, out = check(*map(str, RECORDINGS))
    assert code == 0, out
    complete = [p for p in RECORDINGS if json.loads(p.read_text())["complete"]]
    assert f"{len(complete)} of {len(complete)} replayed exchanges match" in out
    assert len(complete) >= 8  # the pydantic-ai exchanges; vercel/ai's are responses only


def test_a_recording_the_emulator_does_not_reproduce_exits_1_naming_the_check(
    tmp_path: Path,
) -> None:
    recording = json.loads((RECORDINGS[0].parent / "pyd-memory-1.json").read_text())
    recording["response"]["usage"]["input_tokens"] = 3 * 1577
    del recording["response"]["context_management"]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(recording))
    code, out = check(str(path), "--json")
    assert code == 1
    [exchange] = json.loads(out)["exchanges"]
    failed = {f["check"] for f in exchange["findings"] if not f["ok"]}
    assert failed == {"usage.input_tokens", "context_management"}


@pytest.mark.parametrize(
    ("text", "message"),
    [("{", "not JSON"), ('{"complete": true}', "endpoint: missing"), ("[]", "a JSON object")],
)
def test_an_unreadable_recording_exits_2(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    code, out = check(str(path))
    assert code == 2 and message in out


def test_the_comparison_ignores_text_and_output_tokens_and_tolerates_estimates() -> None:
    recording = parse_recording((RECORDINGS[0].parent / "pyd-memory-2.json").read_text(), "m")
    reply = json.loads(json.dumps(recording["response"]))
    reply["content"][0]["text"] = "something else entirely"
    reply["usage"]["output_tokens"] = 999
    reply["usage"]["input_tokens"] = 1679 + 200  # 12% off: within the tolerance
    assert all(f.ok for f in compare(recording, 200, reply))
    reply["usage"]["input_tokens"] = 1679 + 300  # 18% off
    bad = [f.check for f in compare(recording, 200, reply) if not f.ok]
    assert bad == ["usage.input_tokens"]
    reply["usage"]["cache_read_input_tokens"] = 5
    assert "usage.cache_read_input_tokens" in [
        f.check for f in compare(recording, 200, reply) if not f.ok
    ]
