"""`agentctl sessions export --exchanges` end to end: offline runs exported as recordings and
replayed by `agentctl emulator check` (every exchange must match), no key in the export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.sessions.transcript import Transcript
from tests.runner import compaction_workload

from .conftest import PLAIN_PROFILE, _run, install

# Whole recorded runs replayed against a real emulator.
pytestmark = pytest.mark.slow

KEY = "test-planted-key-7f3a9c1e5b"  # not `sk-ant-` shaped: only the env value can catch it


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def export(session: str, target: Path) -> list[dict[str, object]]:
    code, out, err = invoke("sessions", "export", session, "--exchanges", str(target))
    assert code == 0 and out == "", err
    data: list[dict[str, object]] = json.loads(target.read_text())
    assert f"wrote {target} ({len(data)} exchanges)" in err
    return data


def check(target: Path, *extra: str) -> tuple[int, str]:
    code, out, err = invoke("emulator", "check", str(target), *extra)
    return code, out + err


def test_an_offline_run_exports_and_every_exchange_replays(
    research: Transcript, tmp_path: Path
) -> None:
    target = tmp_path / "research.json"
    data = export(research.id, target)
    assert len(data) == len(research.turns) >= 20
    first, last = data[0], data[-1]
    source = {"recorder": "agentctl 0.1.0", "session": research.id, "turn": 1, "segment": 0}
    assert first["source"] == source
    assert first["complete"] is True and first["endpoint"] == "/v1/messages"
    # the built-in default's threshold compaction brings its beta
    assert first["betas"] == ["context-management-2025-06-27", "compact-2026-01-12"]
    request = last["request"]
    assert isinstance(request, dict) and request["stream"] is True
    assert "betas" not in request and len(request["messages"]) == len(research.turns[-1].messages)
    # the run's breakpoint on the last message (the history does not keep it) is back
    assert "cache_control" in json.dumps(request["messages"][-1])
    assert any(json.dumps(e["response"]).count("clear_tool_uses") for e in data)
    code, out = check(target, "--server-model", "unedited-basis")
    n = len(research.turns)
    assert code == 0, out
    assert f"{n} of {n} replayed exchanges match; 0 skipped" in out
    assert f"{target}[0]: matches" in out


def test_a_thinking_run_replays(thinking: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "thinking.json"
    data = export(thinking.id, target)
    assert any(json.dumps(e["response"]).count("clear_thinking") for e in data)
    code, out = check(target)
    assert code == 0, out
    assert f"{len(data)} of {len(data)} replayed exchanges match" in out


def test_a_resumed_offline_run_differs_only_in_the_cold_cache_after_the_resume(
    resumed: Transcript, tmp_path: Path
) -> None:
    # The resume started a new emulator (a cold cache); one emulator replays it all warm.
    target = tmp_path / "resumed.json"
    data = export(resumed.id, target)
    segments = [e["source"]["segment"] for e in data]  # type: ignore[index]
    first = segments.index(1)
    assert segments == [0] * first + [1] * (len(data) - first) and first == 4
    code, out = check(target)
    assert code == 1
    assert f"{len(data) - 1} of {len(data)} replayed exchanges match" in out
    assert f"{target}[{first}]: DIFFERS" in out
    differing = [ln.split(":")[0].strip() for ln in out.splitlines() if ln.startswith("  ")]
    assert differing and all("cache" in name for name in differing), out
    ok, rest = tmp_path / "after.json", data[first:]
    ok.write_text(json.dumps(rest))
    code, out = check(ok)
    assert code == 0 and f"{len(rest)} of {len(rest)} replayed exchanges match" in out


def test_check_finds_a_changed_figure(research: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "changed.json"
    data = export(research.id, target)
    response = data[3]["response"]
    assert isinstance(response, dict)
    response["usage"]["cache_read_input_tokens"] *= 2
    target.write_text(json.dumps(data))
    code, out = check(target, "--server-model", "unedited-basis")
    assert code == 1
    assert f"{target}[3]: DIFFERS in" in out and "usage.cache_read_input_tokens" in out
    assert f"{len(data) - 1} of {len(data)} replayed exchanges match" in out


def test_python_api_writes_what_the_cli_writes(research: Transcript, tmp_path: Path) -> None:
    cli = export(research.id, tmp_path / "cli.json")
    mine = agentctl.export_exchanges(research.id, tmp_path / "api.json")
    assert mine == cli == json.loads((tmp_path / "api.json").read_text())


def test_no_key_or_auth_header_reaches_the_export(
    research: Transcript, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A transcript holding the key in a message and in auth headers of a request record
    # (written while the key was not in the environment, so the writer could not know it).
    path = research.path
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "request" and record["turn"] == 2:
            headers = {"x-api-key": KEY, "authorization": f"Bearer {KEY}"}
            record["request"]["extra_headers"] = headers
        if record["type"] == "message" and record["index"] == 0:
            record["message"]["content"] = f"my key is {KEY}"
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    code, out, err = invoke("sessions", "export", research.id, "--exchanges", "-")
    assert code == 0, err
    assert KEY not in out and "[REDACTED]" in out
    assert "x-api-key" not in out.lower() and "authorization" not in out.lower()
    assert len(json.loads(out)) == len(research.turns)


def test_a_run_with_a_key_in_the_environment(_isolated_env: Path, tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    (tmp_path / "script.toml").write_text(
        '[[turn]]\n[[turn.tool_use]]\nname = "read_file"\ninput = { path = "notes.txt" }\n'
        'final_text = "Hello."\n'
    )
    (tmp_path / "notes.txt").write_text("nothing here\n")
    task.write_text(f'+++\nemulator_script = "script.toml"\n+++\nSay hello. (Key: {KEY}.)\n')
    profile = tmp_path / "plain.toml"
    profile.write_text(PLAIN_PROFILE)
    home = tmp_path / "home"
    transcript = _run(
        home, task, profile, "--workspace", str(tmp_path), env={"ANTHROPIC_API_KEY": KEY}
    )
    install(_isolated_env, transcript)
    target = tmp_path / "out.json"
    data = export(transcript.stem, target)
    text = target.read_text()
    assert len(data) == 2 and KEY not in text and "x-api-key" not in text.lower()
    assert "Key: [REDACTED]" in text
    code, out = check(target)
    assert code == 0, out


def test_bad_usage_is_exit_2(research: Transcript, tmp_path: Path) -> None:
    code, _, err = invoke("sessions", "export", research.id, "--exchanges", "a", "-o", "b")
    assert code == 2 and "give one of them" in err
    for text, what in (("[]", "non-empty array"), ("[1]", "[0]: a recording is a JSON object")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        code, out = check(bad)
        assert code == 2 and what in out


@pytest.mark.parametrize("mode", ["paused", "on-demand"])
def test_compaction_runs_replay(
    mode: str, _isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past the API's minimum trigger: a server compaction that pauses the reply, or the
    # run's own compaction request (whose later requests start at the summary).
    profile, task = compaction_workload.setup(tmp_path, pause=mode == "paused")
    if mode == "on-demand":
        text = profile.read_text().replace("pause_after_compaction = false", "")
        profile.write_text(text + 'mode = "on-demand"\n')
    monkeypatch.chdir(tmp_path)
    transcript = _run(tmp_path / "home", task, profile)
    install(_isolated_env, transcript)
    target = tmp_path / "out.json"
    data = export(transcript.stem, target)
    stops = [e["response"]["stop_reason"] for e in data]  # type: ignore[index]
    assert "compaction" in stops
    after = data[stops.index("compaction") + 1]["request"]
    assert isinstance(after, dict)
    if mode == "on-demand":
        assert data[stops.index("compaction")]["request"]["compaction"] == {"type": "summarize"}  # type: ignore[index]
        assert after["messages"][0]["content"][0]["type"] == "compaction"
    code, out = check(target)
    assert code == 0, out
    assert f"{len(data)} of {len(data)} replayed exchanges match" in out
