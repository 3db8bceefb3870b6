"""`agentctl run` end to end: CliRunner + the emulator over real HTTP, and a few subprocesses."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from import_probe import loaded_by_command
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.emulator import running
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records
from agentctl.types import USAGE_TOKENS

SENTINEL_KEY = "sk-ant-SENTINEL-never-in-a-transcript-0123456789"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The default memory root is ./memory: never let a test write one into the repository.
    monkeypatch.chdir(tmp_path)


def make_task(tmp_path: Path, front: str = "", files: int = 3) -> Path:
    (tmp_path / "workspace").mkdir(exist_ok=True)
    for i in range(files):
        (tmp_path / "workspace" / f"note{i}.txt").write_text(
            f"Finding {i}: the cache hit ratio rose to {50 + i}%\nfiller line\n"
        )
    task = tmp_path / "task.md"
    head = f"+++\n{front}+++\n" if front else ""
    task.write_text(head + "Summarise the findings about the cache hit ratio.\n")
    return task


def invoke(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, ["run", *args], input=input)


def transcript(session: str = "") -> list[dict[str, Any]]:
    files = sorted(sessions_dir().glob(f"{session}*.jsonl"))
    assert len(files) == 1
    return read_records(files[0])


def events(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r["event"] for r in records if r["type"] == "event" and r["event"]["event"] == kind]


@pytest.mark.dates
def test_offline_run_uses_memory_and_workspace_and_answers(tmp_path: Path) -> None:
    task = make_task(tmp_path, front='[memory]\nroot = "mem"\n')
    result = invoke(str(task), "--offline")
    assert result.exit_code == 0, result.stderr
    assert "Finding 2: the cache hit ratio rose to 52%" in result.stdout
    notes = list((tmp_path / "mem").glob("*.md"))
    assert len(notes) == 1
    assert "note1.txt" in notes[0].read_text()  # the memory file on disk after the run
    records = transcript()
    ops = [op for t in events(records, "turn") for op in t["memory_ops"]]
    assert {"command": "create", "path": f"/memories/{notes[0].name}", "ok": True} in ops
    assert [r["type"] for r in records[:2]] == ["session", "message"]


@pytest.mark.dates
def test_transcript_is_private_and_holds_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(tmp_path)
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL_KEY)
        result = invoke(str(task), "--quiet")
    assert result.exit_code == 0, result.stderr
    (path,) = sessions_dir().glob("*.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert SENTINEL_KEY not in path.read_text()
    assert result.stderr == ""  # --quiet: nothing but errors


@pytest.mark.dates
def test_json_mode_prints_parseable_events(tmp_path: Path) -> None:
    result = invoke(str(make_task(tmp_path)), "--offline", "--json")
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["event"] == "start" and lines[0]["schema_version"] == 1
    assert lines[0]["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919"
    turns = [e for e in lines if e["event"] == "turn"]
    assert turns and all(
        set(t["usage"]) >= {"input_tokens", "cache_read_input_tokens"} for t in turns
    )
    assert lines[-1]["event"] == "result" and lines[-1]["turns"] == len(turns)
    assert "Finding 0" in lines[-1]["text"]
    assert lines[-1]["totals"]["output_tokens"] == sum(t["usage"]["output_tokens"] for t in turns)


@pytest.mark.dates
def test_stdin_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_task(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = invoke(
        "-", "--offline", "--workspace", "workspace", input="List what the notes say.\n"
    )
    assert result.exit_code == 0, result.stderr
    assert "note2.txt" in result.stdout


@pytest.mark.dates
def test_no_key_and_no_offline_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(str(make_task(tmp_path)))
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.stderr and "--offline" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
    assert not sessions_dir().exists() or not list(sessions_dir().iterdir())
    with_json = invoke(str(make_task(tmp_path)), "--json")
    assert with_json.exit_code == 2
    event = json.loads(with_json.stdout)
    assert event["event"] == "error" and event["kind"] == "usage"
    assert "ANTHROPIC_API_KEY" in event["message"]


@pytest.mark.parametrize(
    ("args", "front", "needle"),
    [
        (["--profile", "nope.toml"], "", "nope.toml"),
        (["--set", "max_turns=zero"], "", "max_turns"),
        (["--set", "novalue"], "", "KEY=VALUE"),
        ([], "max_turn = 3\n", "max_turn"),
        (["--workspace", "/nonexistent/dir"], "", "/nonexistent/dir"),
        (["--resume", "nosuchsession"], None, "nosuchsession"),
    ],
)
@pytest.mark.dates
def test_bad_inputs_exit_2_with_one_line(
    tmp_path: Path, args: list[str], front: str | None, needle: str
) -> None:
    task_args = [] if front is None else [str(make_task(tmp_path, front=front))]
    result = invoke(*task_args, *args, "--offline")
    assert result.exit_code == 2, result.output
    assert needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_task_file_exit_2(tmp_path: Path) -> None:
    result = invoke(str(tmp_path / "missing.md"), "--offline")
    assert result.exit_code == 2 and "missing.md: no such file" in result.stderr


SCRIPTS = {
    "stop_sequence": (
        '[[turn]]\ntext = "halt"\nstop_reason = "stop_sequence"\nstop_sequence = "###"\n'
    ),
    "refusal": '[[turn]]\ntext = "I cannot help with that."\nstop_reason = "refusal"\n',
    "pause_turn": (
        '[[turn]]\ntext = "working"\nstop_reason = "pause_turn"\n\n[[turn]]\ntext = "done"\n'
    ),
    "max_tokens": (
        '[[turn]]\nstop_reason = "max_tokens"\n'
        '[[turn.tool_use]]\nname = "memory"\ninput = {command = "view", path = "/memories"}\n'
    ),
    "end_turn": '[[turn]]\ntext = "all done"\n',
}


@pytest.mark.parametrize(
    ("name", "code", "stop"),
    [
        ("end_turn", 0, "end_turn"),
        ("stop_sequence", 0, "stop_sequence"),
        ("refusal", 0, "refusal"),
        ("pause_turn", 0, "end_turn"),
        ("max_tokens", 3, "max_tokens"),
    ],
)
@pytest.mark.dates
def test_every_stop_reason(tmp_path: Path, name: str, code: int, stop: str) -> None:
    (tmp_path / "script.toml").write_text(SCRIPTS[name])
    task = make_task(tmp_path, front='emulator_script = "script.toml"\n')
    result = invoke(str(task), "--offline", "--json")
    assert result.exit_code == code, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in lines if e["event"] == "turn"]
    assert turns[-1]["stop_reason"] == stop
    if code == 0:
        assert lines[-1]["event"] == "result" and lines[-1]["stop_reason"] == stop
    else:
        assert lines[-1] == {"event": "error", "kind": "limit", "message": lines[-1]["message"]}
        assert "max_tokens" in lines[-1]["message"] and "--resume" in lines[-1]["message"]


@pytest.mark.slow
def test_retries_injected_faults_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(tmp_path, files=1)
    with running(faults="429:0@1,drop@3,malformed@5") as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke(str(task), "--json")
        numbers = len(emu.requests)
    assert result.exit_code == 0, result.output
    turns = [json.loads(x) for x in result.stdout.splitlines() if '"turn"' in x]
    assert numbers == len(turns) + 3


@pytest.mark.dates
def test_api_error_after_retries_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with running(faults="429:0@1-20") as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke(str(make_task(tmp_path)), "--set", "api.max_retries=2")
    assert result.exit_code == 1
    assert "429" in result.stderr and "request id req_" in result.stderr


@pytest.mark.dates
def test_max_turns_stop_then_resume_finishes(tmp_path: Path) -> None:
    task = make_task(tmp_path, front='[memory]\nroot = "mem"\n')
    first = invoke(str(task), "--offline", "--max-turns", "3")
    assert first.exit_code == 3
    assert "max_turns=3" in first.stderr and "--resume" in first.stderr
    # The session's profile comes back with it (max_turns=3 again): raise it for the rest.
    second = invoke("--resume", "last", "--json", "--max-turns", "20")
    assert second.exit_code == 0, second.output
    lines = [json.loads(line) for line in second.stdout.splitlines()]
    assert next(e["turn"] for e in lines if e["event"] == "turn") == 4  # numbering continues
    assert "Finding 1" in lines[-1]["text"]
    records = transcript()
    assert [r["type"] for r in records].count("session") == 1
    assert any(r["type"] == "resume" for r in records)
    again = invoke("--resume", "last")
    assert again.exit_code == 2 and "already finished" in again.stderr


def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
@pytest.mark.slow
def test_interrupted_or_killed_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals
) -> None:
    task = make_task(tmp_path, front='[memory]\nroot = "mem"\n')
    with running(faults="hang:3600@4") as emu:  # until close(): the signal lands first
        env = {**os.environ, "ANTHROPIC_BASE_URL": emu.base_url, "ANTHROPIC_API_KEY": "test-key"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentctl", "run", str(task)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(emu.requests) >= 4)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=20)
        records = transcript()
        if sig != signal.SIGKILL:  # Ctrl-C, SIGTERM: a clean stop, recorded, with the resume
            assert proc.returncode == 130, err
            assert "interrupted" in err and "agentctl run --resume" in err
            assert "interrupted: interrupted" not in err  # the kind is not said twice
            assert events(records, "error")[-1]["kind"] == "interrupted"
        else:
            assert proc.returncode == -signal.SIGKILL
            assert records[-1]["type"] == "request"  # killed while waiting for turn 4
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        resumed = invoke("--resume", records[0]["session"][:12], "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert "Finding 2" in resumed.stdout
    notes = next((tmp_path / "mem").glob("*.md")).read_text()
    assert notes.count("note2.txt:") == 1  # memory consistent: no file noted twice


@pytest.mark.dates
def test_applied_edits_surface_unchanged_and_sum_in_totals(tmp_path: Path) -> None:
    task = make_task(tmp_path, files=8)
    for i in range(8):  # big enough files that a low trigger clears old reads
        with (tmp_path / "workspace" / f"note{i}.txt").open("a") as f:
            f.write("padding words for the context budget\n" * 120)
    sets = ["context_editing.tool_uses.trigger=3000", "context_editing.tool_uses.keep=1"]
    result = invoke(str(task), "--offline", "--json", *[a for s in sets for a in ("--set", s)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in lines if e["event"] == "turn"]
    responses = [r for r in transcript() if r["type"] == "response"]
    raw = [
        (r["message"].get("context_management") or {}).get("applied_edits", []) for r in responses
    ]
    assert [t["applied_edits"] for t in turns] == raw  # exactly as the API sent them
    cleared = [e for t in turns for e in t["applied_edits"]]
    assert len({t["turn"] for t in turns if t["applied_edits"]}) >= 2
    totals = lines[-1]["totals"]
    assert totals["cleared_input_tokens"] == sum(e["cleared_input_tokens"] for e in cleared) > 0
    assert totals["cleared_tool_uses"] == sum(e.get("cleared_tool_uses", 0) for e in cleared)


@pytest.mark.dates
def test_request_shape_as_the_emulator_received_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    front = (
        'system = "You are careful."\nmax_tokens = 4000\n'
        "[thinking]\nenabled = true\nbudget_tokens = 2000\n"
        "[context_editing.thinking]\nenabled = true\nkeep = 1\n"
    )
    task = make_task(tmp_path, front=front, files=1)
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke(str(task), "--quiet")
        received = [r for r in emu.requests if r.path == "/v1/messages"]
    assert result.exit_code == 0, result.output
    assert len(received) >= 3
    for req in received:
        body = req.body
        assert "context-management-2025-06-27" in req.headers["anthropic-beta"]
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
        assert [e["type"] for e in body["context_management"]["edits"]] == [
            "clear_thinking_20251015",
            "clear_tool_uses_20250919",
            "compact_20260112",
        ]
        assert [t["name"] for t in body["tools"]] == [
            "memory",
            "list_files",
            "read_file",
            "search_text",
        ]
        assert body["tools"][0] == {"type": "memory_20250818", "name": "memory"}
        marked = [t for t in body["tools"] if "cache_control" in t] + [
            b for b in body["system"] if "cache_control" in b
        ]
        last = body["messages"][-1]["content"]
        marked += [b for b in last if isinstance(last, list) and "cache_control" in b]
        assert len(marked) == 3 and body["tools"][-1] in marked
    # Later turns resend the history unedited: thinking blocks included.
    assistant = [m for m in received[-1].body["messages"] if m["role"] == "assistant"]
    assert any(b["type"] == "thinking" for m in assistant for b in m["content"])


@pytest.mark.dates
def test_flags_override_the_profile(tmp_path: Path) -> None:
    task = make_task(tmp_path, files=1)
    result = invoke(
        str(task), "--offline", "--json", "--model", "claude-opus-5-5", "--max-usd", "1e-9"
    )
    assert result.exit_code == 3, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["model"] == "claude-opus-5-5"
    assert lines[-1]["kind"] == "limit" and "limits.max_usd=1e-09" in lines[-1]["message"]
    assert len([e for e in lines if e["event"] == "turn"]) == 1


@pytest.mark.dates
def test_unknown_model_price_gives_null_cost(tmp_path: Path) -> None:
    result = invoke(
        str(make_task(tmp_path, files=1)), "--offline", "--json", "--model", "claude-x-9"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.splitlines()[-1])["totals"]["cost_usd"] is None


@pytest.mark.slow
@pytest.mark.dates
def test_subprocess_stdin_task_piped_stdout_is_the_raw_answer(tmp_path: Path) -> None:
    make_task(tmp_path, files=2)
    proc = subprocess.run(
        [sys.executable, "-m", "agentctl", "run", "-", "--offline", "--workspace", "workspace"],
        input="Summarise the findings about the cache hit ratio.\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n") and not proc.stdout.endswith("\n\n")
    assert "\x1b[" not in proc.stdout + proc.stderr  # not a terminal: no escape codes
    assert "Finding 1: the cache hit ratio rose to 51%" in proc.stdout
    assert proc.stderr.startswith("start  session=")  # plain lines on stderr


@pytest.mark.dates
def test_transcript_rebuilds_every_request_exactly_as_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentctl.sessions.catalog import session_profile
    from agentctl.sessions.replay import ReplaySettings, replay_request
    from agentctl.sessions.transcript import load_session

    task = make_task(tmp_path, front='system = "Be exact."\n', files=2)
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke(str(task), "--quiet")
        received = [r.body for r in emu.requests if r.path == "/v1/messages"]
    assert result.exit_code == 0, result.output
    # A replay under the run's own profile places the breakpoints as the run did.
    session = load_session("last")
    settings = ReplaySettings.from_profile(session_profile(session))
    assert [t.turn for t in session.turns] == list(range(1, len(received) + 1))
    for turn, got in zip(session.turns, received, strict=True):
        assert "context-management-2025-06-27" in turn.body["betas"]
        assert replay_request(turn, settings) == {k: v for k, v in got.items() if k != "stream"}


@pytest.mark.slow
def test_run_help_does_not_import_the_sdk() -> None:
    out, loaded = loaded_by_command(["run", "--help"], ["anthropic", "httpx2"])
    assert "Exit codes: 0 finished" in out
    assert loaded == []


@pytest.mark.dates
def test_a_bearer_token_works_instead_of_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", SENTINEL_KEY)
        result = invoke(str(make_task(tmp_path, files=1)), "--quiet")
        auth = {k.lower(): v for k, v in emu.requests[0].headers.items()}.get("authorization")
    assert result.exit_code == 0, result.output
    assert auth == "REDACTED"
    (path,) = sessions_dir().glob("*.jsonl")
    assert SENTINEL_KEY not in path.read_text()


@pytest.mark.dates
def test_the_run_ends_with_the_per_edit_cache_ledger_unless_quiet(tmp_path: Path) -> None:
    task = make_task(
        tmp_path,
        front='[memory]\nroot = "mem"\n[context_editing.tool_uses]\ntrigger = 1200\nkeep = 1\n'
        'clear_at_least = 1\nexclude_tools = ["memory"]\n',
        files=6,
    )
    loud = invoke(str(task), "--offline")
    assert loud.exit_code == 0, loud.output
    assert "cache accounting per edit: " in loud.stderr
    assert "the ledger: agentctl stats " in loud.stderr
    quiet = invoke(str(task), "--offline", "--quiet")
    assert quiet.exit_code == 0
    assert "cache accounting" not in quiet.stderr


def _ledger_counts(stderr: str) -> tuple[int, int]:
    """(paid off, did not) from the run's `cache accounting per edit` line."""
    line = next(x for x in stderr.splitlines() if x.startswith("cache accounting per edit: "))
    paid = int(line.split(", ")[1].split(" paid off")[0])
    lost = int(line.split(", ")[2].split(" did not")[0])
    return paid, lost


@pytest.mark.dates
def test_the_ledger_after_resume_covers_the_whole_session_and_agrees_with_stats(
    tmp_path: Path,
) -> None:
    task = make_task(
        tmp_path,
        front='[memory]\nroot = "mem"\n[context_editing.tool_uses]\ntrigger = 1200\nkeep = 1\n'
        'clear_at_least = 1\nexclude_tools = ["memory"]\n',
        files=6,
    )
    first = invoke(str(task), "--offline", "--max-turns", "5")
    assert first.exit_code == 3, first.output
    resumed = invoke("--resume", "last", "--max-turns", "50")
    assert resumed.exit_code == 0, resumed.output
    paid_lost = _ledger_counts(resumed.stderr)
    assert "resumed at turn 6: the table covers turns 6-" in resumed.stderr
    stats = CliRunner().invoke(app, ["stats", "last", "--json"])
    edits = json.loads(stats.stdout)["edits"]
    assert edits, "the run should clear something"
    paid = sum(1 for e in edits if e["net_usd"] >= 0)
    assert paid_lost == (paid, len(edits) - paid)


@pytest.mark.dates
def test_a_run_that_fails_before_its_first_answer_is_not_recorded(tmp_path: Path) -> None:
    task = make_task(tmp_path, front='[memory]\nroot = "mem"\n')
    good = invoke(str(task), "--offline")
    assert good.exit_code == 0, good.output
    (tmp_path / "not-a-dir").write_text("x")
    bad = invoke(str(task), "--offline", "--set", f"memory.root={tmp_path / 'not-a-dir'}")
    assert bad.exit_code == 2, bad.output
    assert "--resume" not in bad.stderr
    assert len(list(sessions_dir().glob("*.jsonl"))) == 1  # `last` is still the good run
    again = invoke("--resume", "last")
    assert again.exit_code == 2 and "already finished" in again.stderr


READ_BIG = '[[turn]]\ntext = "Reading the log."\n[[turn.tool_use]]\nname = "read_file"\n'
READ_BIG += 'input = {path = "big.txt"}\n'
LONG_ANSWER = f'[[turn]]\ntext = "{"summary word " * 400}"\n'


@pytest.mark.parametrize(
    ("turns", "code", "kind", "says"),
    [
        # ~800 output tokens where ~550 are left: the response stops at the window.
        (READ_BIG + LONG_ANSWER, 3, "limit", "exceeded the model's context window; lower"),
        # A second read pushes the next prompt past 6,000 tokens: the API's 400.
        (READ_BIG + READ_BIG, 1, "api", "tokens > 6000 maximum"),
    ],
)
@pytest.mark.dates
def test_the_context_window_ends_the_run_with_the_documented_code(
    tmp_path: Path, turns: str, code: int, kind: str, says: str
) -> None:
    (tmp_path / "script.toml").write_text("context_window = 6000\n" + turns)
    task = make_task(tmp_path, front='emulator_script = "script.toml"\n', files=0)
    (tmp_path / "workspace" / "big.txt").write_text("line of log text number\n" * 350)
    result = invoke(str(task), "--offline", "--json")
    assert result.exit_code == code, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["event"] == "error" and lines[-1]["kind"] == kind
    assert says in lines[-1]["message"]
    last = [e for e in lines if e["event"] == "turn"][-1]
    if code == 3:
        usage = last["usage"]
        prompt = sum(usage[k] for k in USAGE_TOKENS if k != "output_tokens")
        assert last["stop_reason"] == "model_context_window_exceeded"
        assert usage["output_tokens"] == 6000 - prompt
    else:
        assert "API error 400 (invalid_request_error: prompt is too long: " in lines[-1]["message"]


@pytest.mark.dates
def test_the_offline_window_can_be_set_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(tmp_path, files=1)
    monkeypatch.setenv("AGENTCTL_EMULATOR_CONTEXT_WINDOW", "500")
    small = invoke(str(task), "--offline")
    assert small.exit_code == 1
    assert "tokens > 500 maximum" in small.stderr
    monkeypatch.setenv("AGENTCTL_EMULATOR_CONTEXT_WINDOW", "lots")
    bad = invoke(str(task), "--offline")
    assert bad.exit_code == 2
    assert "$AGENTCTL_EMULATOR_CONTEXT_WINDOW: 'lots' is not a positive integer" in bad.stderr


@pytest.mark.slow
def test_resume_after_a_failed_request_reuses_its_turn_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = make_task(tmp_path, front='[memory]\nroot = "mem"\n')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with running(faults="429:0@3-40") as emu:  # turns 1 and 2 answer, request 3 fails
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        failed = invoke(str(task), "--set", "api.max_retries=0")
    assert failed.exit_code == 1
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        resumed = invoke("--resume", "last", "--json")
    assert resumed.exit_code == 0, resumed.output
    lines = [json.loads(line) for line in resumed.stdout.splitlines()]
    numbers = [e["turn"] for e in lines if e["event"] == "turn"]
    assert numbers[0] == 3 and numbers == list(range(3, 3 + len(numbers)))
    (path,) = sessions_dir().glob("*.jsonl")
    session = path.stem
    seen = CliRunner().invoke(app, ["sessions", "show", session, "--as-seen", "3"])
    assert seen.exit_code == 0, seen.output
    assert seen.stdout.startswith(f"# session {session}, turn 3: ")
