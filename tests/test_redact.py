"""agentctl.redact: the one function that keeps credentials out of output and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentctl.redact import REDACTED, redact, redact_json
from agentctl.render.ndjson import event_line
from agentctl.sessions.transcript import TranscriptWriter, read_records
from agentctl.types import ErrorEvent

KEY = "sk-ant-api03-Abc_def-0123456789xyz"
TOKEN = "a-bearer-token-without-a-known-shape"


def test_key_shaped_tokens_are_redacted_with_or_without_configuration() -> None:
    text = f"invalid x-api-key: {KEY}; request id Bearer {KEY}."
    assert redact(text) == f"invalid x-api-key: {REDACTED}; request id Bearer {REDACTED}."


def test_configured_credentials_are_redacted_whatever_their_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    assert redact(f"echo {TOKEN}!") == f"echo {REDACTED}!"
    assert redact("given: short-1", secrets=["short-1x"]) == "given: short-1"
    assert redact("given: passed-in-secret", secrets=["passed-in-secret"]) == f"given: {REDACTED}"


def test_ordinary_text_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "short")  # too short to be a real key: not replaced
    text = "export ANTHROPIC_API_KEY=sk-ant-... (a short sentence)"
    assert redact(text) == text


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_no_key_survives_anywhere_in_text(around: str) -> None:
    assert KEY not in redact(around + KEY + around)


def test_json_data_keeps_its_shape() -> None:
    data = {"content": [{"type": "text", "text": f"key {KEY}"}], "n": 1}
    assert redact_json(data) == {"content": [{"type": "text", "text": f"key {REDACTED}"}], "n": 1}
    clean = {"a": "b"}
    assert redact_json(clean) is clean


@pytest.mark.dates
def test_transcripts_and_ndjson_are_guarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", TOKEN)
    path = tmp_path / "s.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write("tool_result", content=f"a workspace file said {TOKEN} and {KEY}")
    raw = path.read_text()
    assert TOKEN not in raw and KEY not in raw
    assert read_records(path)[0]["content"] == f"a workspace file said {REDACTED} and {REDACTED}"
    line = event_line(ErrorEvent("api", f"echoed {TOKEN}"))
    assert line is not None and json.loads(line)["message"] == f"echoed {REDACTED}"
