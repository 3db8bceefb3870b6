"""`agentctl run -p`, `--continue`, `--fork`, `--input-format ndjson` end to end: CliRunner, the
real SDK and the emulator over HTTP (`--offline`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import TranscriptWriter, read_records

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
TASK = "Summarise the findings about the cache hit ratio."


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    for i, city in enumerate(["Oslo", "Lima"]):
        (tmp_path / "ws" / f"note{i}.txt").write_text(
            f"Finding {i}: the cache hit ratio rose to {50 + i}% in {city}\n"
            f"latency fell by {i} ms\n"
        )


def invoke(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, list(args), input=input)


def run(*args: str, input: str | None = None) -> Any:
    return invoke("run", *args, input=input)


START = ("--offline", "--workspace", "ws", "--set", "memory.root=mem", "-q")


def files() -> list[Path]:
    return sorted(sessions_dir().glob("*.jsonl"))


def events(stdout: str, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [e for e in lines if e["event"] == kind]


@pytest.mark.slow
@pytest.mark.dates
def test_inline_prompt_then_follow_ups_keep_one_session_that_replays_as_one(
    tmp_path: Path,
) -> None:
    first = run("-p", TASK, *START)
    assert first.exit_code == 0, first.output
    assert "Finding 1: the cache hit ratio rose to 51%" in first.stdout
    (path,) = files()
    records = read_records(path)
    assert records[0]["task_source"] == "<prompt>" and records[0]["task"] == TASK
    turns_before = max(r["turn"] for r in records if r["type"] == "response")

    follow = run("-c", "-p", "Which note says the latency fell?", "--json")
    assert follow.exit_code == 0, follow.output
    (result,) = events(follow.stdout, "result")
    assert result["session"] == path.stem and result["text"].startswith("You asked: Which note")
    assert "latency fell by 1 ms" not in result["text"]  # the notes keep cache lines only
    turns = events(follow.stdout, "turn")
    assert turns[0]["turn"] == turns_before + 1  # numbering goes on

    again = run("--continue", path.stem[:12], "-", "-q", input="And the highest ratio?\n")
    assert again.exit_code == 0, again.output
    assert "51% in Lima" in again.stdout
    assert files() == [path]  # one transcript
    records = read_records(path)
    follow_ups = [r for r in records if r["type"] == "follow_up"]
    assert [r["text"] for r in follow_ups] == [
        "Which note says the latency fell?",
        "And the highest ratio?",
    ]
    assert [r["type"] for r in records].count("session") == 1

    stats = json.loads(invoke("stats", "last", "--json").stdout)
    answered = [r["turn"] for r in records if r["type"] == "response"]
    assert [t["turn"] for t in stats["turns"]] == answered == list(range(1, len(answered) + 1))
    replay = invoke("simulate", "last", "--profile", str(CONFIGS / "aggressive.toml"), "--json")
    assert json.loads(replay.stdout)["replay_matches_recording"] is True
    assert len(json.loads(replay.stdout)["turns"]) == len(answered)
    listed = json.loads(invoke("sessions", "list", "--json").stdout)
    assert listed[0]["follow_ups"] == 2 and listed[0]["turns"] == len(answered)
    shown = invoke("sessions", "show", "last")
    assert "user turns" in shown.stdout and "And the highest ratio?" in shown.stdout
    starts = [r["from_turn"] + 1 for r in follow_ups]
    for turn in starts:
        assert f"\n{turn} " in shown.stdout


@pytest.mark.slow
@pytest.mark.dates
def test_continue_refuses_unknown_running_and_unfinished_sessions() -> None:
    assert run("-c", "-p", "hello", "--offline").exit_code == 2  # no sessions yet
    nope = run("--continue", "nosuchsession", "-p", "hello", "--offline")
    assert nope.exit_code == 2 and "nosuchsession" in nope.stderr

    cut = run("-p", TASK, *START, "--max-turns", "2")
    assert cut.exit_code == 3, cut.output
    unfinished = run("-c", "-p", "hello", "--offline")
    assert unfinished.exit_code == 2
    assert "did not finish" in unfinished.stderr and "--resume" in unfinished.stderr

    resumed = run("--resume", "last", "--max-turns", "30", "-q")
    assert resumed.exit_code == 0, resumed.output
    (path,) = files()
    size = path.stat().st_size
    with TranscriptWriter(path):  # a run holds the session
        busy = run("-c", "-p", "hello", "--offline", "--json")
    assert busy.exit_code == 2 and "still running" in busy.stderr
    assert events(busy.stdout, "error")[0]["kind"] == "usage"
    assert path.stat().st_size == size

    # after --resume, a follow-up keeps turn numbers, cost and the ledger right
    follow = run("-c", "-p", "Which ratio rose most?", "--offline", "--json")
    assert follow.exit_code == 0, follow.output
    records = read_records(path)
    answered = [r["turn"] for r in records if r["type"] == "response"]
    assert answered == list(range(1, len(answered) + 1))
    (row,) = json.loads(invoke("sessions", "list", "--json").stdout)
    stats = json.loads(invoke("stats", "last", "--json").stdout)
    assert [t["turn"] for t in stats["turns"]] == answered
    assert row["cost_usd"] == pytest.approx(stats["totals"]["cost_usd"], abs=1e-5)
    (result,) = events(follow.stdout, "result")
    assert 0 < result["totals"]["cost_usd"] < row["cost_usd"]  # the follow-up's turns only


@pytest.mark.slow
@pytest.mark.dates
def test_fork_at_a_turn_leaves_the_original_byte_identical() -> None:
    first = run("-p", TASK, *START)
    assert first.exit_code == 0, first.output
    (original,) = files()
    before = original.read_bytes()
    fork = run("--fork", f"{original.stem}@3", "-p", "What about latency?", "--offline", "--json")
    assert fork.exit_code == 0, fork.output
    assert original.read_bytes() == before
    (new,) = [p for p in files() if p != original]
    header = read_records(new)[0]
    assert (header["forked_from"], header["forked_at"]) == (original.stem, 3)
    turns = events(fork.stdout, "turn")
    assert turns[0]["turn"] == 4
    (result,) = events(fork.stdout, "result")
    assert result["text"].startswith("You asked: What about latency?")
    rows = json.loads(invoke("sessions", "list", "--json").stdout)
    forked = next(r for r in rows if r["session"] == new.stem)
    assert (forked["forked_from"], forked["forked_at"]) == (original.stem, 3)
    table = invoke("sessions", "list").stdout
    assert "from" in table and f"{original.stem}@3" in table
    shown = invoke("sessions", "show", new.stem).stdout
    assert f"forked from session {original.stem}" in shown.replace("\n", " ").replace("  ", " ")

    fork_turns = [r["turn"] for r in read_records(new) if r["type"] == "response"]
    follow = run("--continue", new.stem, "-p", "Which note was about Lima?", "--json")
    assert follow.exit_code == 0, follow.output
    assert events(follow.stdout, "turn")[0]["turn"] == fork_turns[-1] + 1
    replay = invoke("simulate", new.stem, "--profile", str(CONFIGS / "aggressive.toml"), "--json")
    data = json.loads(replay.stdout)
    assert data["replay_matches_recording"] is True and data["turns"][0]["turn"] == 4

    last = read_records(original)
    final_turn = max(r["turn"] for r in last if r["type"] == "response")
    needs_prompt = run("--fork", f"{original.stem}@{final_turn}", "--offline")
    assert needs_prompt.exit_code == 2 and "-p" in needs_prompt.stderr
    for bad in ("99", "0", "x", ""):
        refused = run("--fork", f"{original.stem}@{bad}", "-p", "hi", "--offline")
        assert refused.exit_code == 2, (bad, refused.output)
    unknown = run("--fork", "nosuchsession@2", "-p", "hi", "--offline")
    assert unknown.exit_code == 2 and "nosuchsession" in unknown.stderr
    assert original.read_bytes() == before and len(files()) == 2


@pytest.mark.slow
@pytest.mark.dates
def test_ndjson_stdin_answers_each_line_in_one_session() -> None:
    lines = [
        {"text": TASK},
        {"text": "Which note was about Lima?"},
        {"text": "And which note was about Oslo?"},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    result = run("-", "--input-format", "ndjson", *START, "--json", input=stdin + "\n")
    assert result.exit_code == 0, result.output
    results = events(result.stdout, "result")
    assert len(results) == 3
    assert len({r["session"] for r in results}) == 1 and len(files()) == 1
    assert "note1.txt" in results[1]["text"] and "note0.txt" not in results[1]["text"]
    assert "note0.txt" in results[2]["text"] and "note1.txt" not in results[2]["text"]
    records = read_records(files()[0])
    follow_ups = [r for r in records if r["type"] == "follow_up"]
    assert [r["new_client"] for r in follow_ups] == [False, False]  # one emulator throughout
    assert sum(r["turns"] for r in results) == len([r for r in records if r["type"] == "response"])


@pytest.mark.slow
@pytest.mark.dates
def test_ndjson_bad_line_names_its_number() -> None:
    stdin = json.dumps({"text": "Say hello."}) + "\n\n" + '{"txt": "no"}\n'
    result = run("-", "--input-format", "ndjson", "--offline", "-q", "--json", input=stdin)
    assert result.exit_code == 2
    assert "stdin line 3" in result.stderr and '"text"' in result.stderr
    assert len(events(result.stdout, "result")) == 1
    assert events(result.stdout, "error")[-1]["message"].startswith("stdin line 3")
    broken = run("-", "--input-format", "ndjson", "--offline", "-q", input="{not json\n")
    assert broken.exit_code == 2 and "stdin line 1: not JSON" in broken.stderr
    assert files() == [] or len(files()) == 1


@pytest.mark.parametrize("stdin", ["", "\n  \n"])
def test_ndjson_stdin_without_a_user_turn_is_a_usage_error(stdin: str) -> None:
    """It exited 0 without a word (`run -` with an empty stdin is exit 2): now the same usage
    error, as one line and an NDJSON error event, and no session is written."""
    result = run("-", "--input-format", "ndjson", *START, "--json", input=stdin)
    assert result.exit_code == 2, result.output
    assert result.stderr == 'agentctl: stdin: no user turn (one {"text": ...} a line)\n'
    assert events(result.stdout, "error")[-1]["kind"] == "usage"
    assert files() == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["task.md", "-p", "hi"], "not both"),
        (["--resume", "last", "-p", "hi"], "--continue"),
        (["-c", "--fork", "x", "-p", "hi"], "give one"),
        (["task.md", "--input-format", "ndjson"], "give - as TASK"),
        (["-", "--input-format", "yaml"], "text or ndjson"),
        (["-", "--input-format", "ndjson", "--resume", "last"], "finish it first"),
        (["--continue", "last", "--profile", "p.toml", "-p", "hi"], "recorded profile"),
        (["-c", "task.md"], "-p TEXT"),
    ],
)
def test_flags_that_do_not_go_together_are_usage_errors(args: list[str], says: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert says in result.stderr


@pytest.mark.slow
@pytest.mark.dates
def test_a_prompt_naming_a_file_is_text_not_the_file(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("Do something else entirely.\n")
    result = run("-p", "secret.md", "--offline", "-q", "--set", "tools.workspace=false")
    assert result.exit_code == 0, result.output
    (path,) = files()
    assert read_records(path)[0]["task"] == "secret.md"


@pytest.mark.slow
@pytest.mark.dates
def test_a_follow_up_after_clearing_reaches_the_notes_and_says_what_the_ledger_covers() -> None:
    clearing = [
        "--set", "context_editing.tool_uses.trigger=1200",
        "--set", "context_editing.tool_uses.keep=1",
        "--set", "context_editing.tool_uses.clear_at_least=1",
    ]  # fmt: skip
    first = run("-p", TASK, "--offline", "--workspace", "ws", "--set", "memory.root=mem", *clearing)
    assert first.exit_code == 0, first.output
    assert "cache accounting per edit" in first.stderr  # something was cleared
    follow = run("-c", "-p", "Which note was about Lima?", "--offline")
    assert follow.exit_code == 0, follow.output
    assert "From my notes" in follow.stdout and "note1.txt" in follow.stdout
    assert "note0.txt" not in follow.stdout
    assert "continued at turn" in follow.stderr and "the whole session" in follow.stderr
    (path,) = files()
    (follow_up,) = [r for r in read_records(path) if r["type"] == "follow_up"]
    views = [
        r
        for r in read_records(path)
        if r["type"] == "tool_result"
        and r["turn"] > follow_up["from_turn"]
        and r["input"].get("command") == "view"
    ]
    assert views  # it read its notes in memory again


def test_the_from_column_shows_only_with_a_fork_and_gives_way_before_the_task() -> None:
    from rich.console import Console

    from agentctl.render.sessions_view import sessions_table
    from agentctl.sessions.catalog import SessionSummary
    from agentctl.types import Totals, Usage

    plain = SessionSummary(
        "20261204-100000-aaaaaa",
        0.0,
        "A task",
        "",
        "claude-x",
        3,
        "end_turn",
        Totals(Usage(input_tokens=12345, output_tokens=10), cost_usd=0.0123),
    )
    fork = dataclasses.replace(
        plain, id="20261204-110000-bbbbbb", forked_from=plain.id, forked_at=2
    )

    def text(rows: list[SessionSummary], width: int) -> str:
        console = Console(width=width, record=True, color_system=None)
        console.print(sessions_table(rows, width))
        return console.export_text()

    assert " from " not in text([plain], 160)
    wide = text([fork, plain], 160)
    assert " from " in wide and f"{plain.id}@2" in wide
    narrow = text([fork, plain], 80)
    assert " from " not in narrow and "$0.0123" in narrow and "A task" in narrow
