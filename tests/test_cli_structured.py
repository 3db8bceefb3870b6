"""`agentctl run --output-schema` and `--stream` end to end: CliRunner, the real SDK over HTTP,
the emulator (its received requests are what the assertions read)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.emulator import Emulator, Script, ScriptTurn, ToolCall, running

SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["summary", "count"],
    "additionalProperties": False,
}


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # ./memory is the default memory root


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("Finding: the cache hit ratio rose to 61%\n")
    (tmp_path / "task.md").write_text("Summarise the cache findings.\n")
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    return tmp_path


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Emulator]:
    script = getattr(request, "param", None)
    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield emu


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["run", "task.md", "--workspace", "ws", *args])


def sent(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.path == "/v1/messages"]


def test_the_format_is_sent_and_the_output_reaches_the_result_event(
    files: Path, emulator: Emulator
) -> None:
    result = invoke("--output-schema", "schema.json", "--json", "--quiet")
    assert result.exit_code == 0, result.output
    bodies = sent(emulator)
    assert len(bodies) >= 2  # tool turns and the answer: every request carries the format
    for body in bodies:
        assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    final = json.loads(result.stdout.splitlines()[-1])
    assert final["event"] == "result"
    assert final["output"] == json.loads(final["text"])
    assert "a.txt: Finding: the cache hit ratio rose to 61%" in final["output"]["summary"]
    assert final["output"]["count"] == 0


def test_without_json_stdout_is_the_json_answer(files: Path, emulator: Emulator) -> None:
    result = invoke("--output-schema", "schema.json", "--quiet")
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)) == {"summary", "count"}


def test_the_profile_key_names_the_schema_relative_to_the_profile(
    files: Path, emulator: Emulator
) -> None:
    (files / "conf").mkdir()
    (files / "schema.json").rename(files / "conf" / "answer.json")
    (files / "conf" / "p.toml").write_text('[output]\nschema = "answer.json"\n')
    result = invoke("--profile", "conf/p.toml", "--json", "--quiet")
    assert result.exit_code == 0, result.output
    assert sent(emulator)[0]["output_config"]["format"]["schema"] == SCHEMA
    assert "output" in json.loads(result.stdout.splitlines()[-1])


def test_no_schema_no_format_no_output(files: Path, emulator: Emulator) -> None:
    result = invoke("--json", "--quiet")
    assert result.exit_code == 0, result.output
    assert all("output_config" not in body for body in sent(emulator))
    assert "output" not in json.loads(result.stdout.splitlines()[-1])


WRONG = Script(turns=(ScriptTurn(text='{"summary": "ok", "count": "three"}'),))
PROSE = Script(turns=(ScriptTurn(text="Sure! The cache hit ratio rose."),))


@pytest.mark.parametrize(
    ("emulator", "words"),
    [
        (WRONG, "the answer does not match the output schema at $.count: 'three' is not of type"),
        (PROSE, "the answer is not JSON (line 1 column 1: Expecting value): 'Sure! The cache"),
    ],
    indirect=["emulator"],
)
def test_an_answer_that_does_not_match_is_exit_1_with_why_and_where(
    files: Path, emulator: Emulator, words: str
) -> None:
    result = invoke("--output-schema", "schema.json", "--json", "--quiet")
    assert result.exit_code == 1
    last = json.loads(result.stdout.splitlines()[-1])
    assert last == {"event": "error", "kind": "output", "message": last["message"]}
    assert words in last["message"]
    plain = invoke("--output-schema", "schema.json", "--quiet")
    assert plain.exit_code == 1
    assert words in plain.stderr
    assert plain.stdout == ""  # no answer printed for an answer that is not the output
    again = CliRunner().invoke(app, ["run", "--resume", "last"])
    assert again.exit_code == 2
    assert "finished with an answer that did not match its output schema" in again.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "cannot read: No such file or directory"),
        ('{"type": "objekt"}', "not a valid JSON Schema at $.type"),
        ("{,}", "not JSON (line 1 column 2"),
    ],
)
def test_a_bad_schema_file_is_exit_2_naming_it(
    files: Path, emulator: Emulator, content: str | None, words: str
) -> None:
    schema = files / "bad.json"
    if content is not None:
        schema.write_text(content)
    result = invoke("--output-schema", "bad.json")
    assert result.exit_code == 2
    assert f"output schema {schema}: " in result.stderr
    assert words in result.stderr
    assert sent(emulator) == []  # refused before any request


TALKER = Script(
    turns=(
        ScriptTurn(
            text="Reading a.txt first.", tool_calls=(ToolCall("read_file", {"path": "a.txt"}),)
        ),
        ScriptTurn(text="The cache hit ratio rose to 61%. " * 6),
    )
)


@pytest.mark.parametrize("emulator", [TALKER], indirect=True)
def test_stream_writes_each_turns_text_once(files: Path, emulator: Emulator) -> None:
    result = invoke("--stream", "--quiet")
    assert result.exit_code == 0, result.output
    answer = ("The cache hit ratio rose to 61%. " * 6).rstrip()
    assert result.stdout == f"Reading a.txt first.\n\n{answer} \n"
    assert result.stdout.count("The cache hit ratio") == 6  # not printed again at the end


@pytest.mark.parametrize("emulator", [TALKER], indirect=True)
def test_stream_keeps_the_table_on_stderr(files: Path, emulator: Emulator) -> None:
    result = invoke("--stream")
    assert result.exit_code == 0, result.output
    assert "turn 2  end_turn" in result.stderr
    assert "turn 2" not in result.stdout
    assert result.stdout.startswith("Reading a.txt first.\n\n")


@pytest.mark.parametrize("emulator", [TALKER], indirect=True)
def test_stream_ends_each_turns_text_before_the_row_of_the_turn(
    files: Path, emulator: Emulator
) -> None:
    """stdout and stderr on one terminal: the last line of a turn's text used to run into
    stderr's row of that turn (`...rose to 61%.turn 2  end_turn`)."""
    result = invoke("--stream")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "  in=" in line]
    assert [row.split("  ")[0] for row in rows] == ["turn 1", "turn 2"], rows
    answer = ("The cache hit ratio rose to 61%. " * 6).rstrip()
    assert result.stdout == f"Reading a.txt first.\n\n{answer} \n"  # a pipe's bytes unchanged


def test_stream_does_not_write_a_retried_answer_twice(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = "word " * 60  # several text deltas
    script = Script(turns=(ScriptTurn(text=answer),))
    # The first response is cut after 4 SSE events (message_start, block start, 2 deltas).
    with running(script=script, faults="drop:4@1") as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke("--stream", "--quiet", "--set", "api.max_retries=2")
        attempts = len(sent(emu))
    assert result.exit_code == 0, result.output
    assert attempts == 2
    assert result.stdout == answer.rstrip() + " \n"


def test_stream_with_json_is_refused(files: Path, emulator: Emulator) -> None:
    result = invoke("--stream", "--json")
    assert result.exit_code == 2
    assert "--stream writes the answer's text to stdout and --json writes NDJSON" in result.stderr
    assert sent(emulator) == []


@pytest.mark.parametrize("emulator", [TALKER], indirect=True)
def test_stream_with_a_schema_shows_the_text_then_the_check_fails(
    files: Path, emulator: Emulator
) -> None:
    # The TALKER's answer is prose: the stream shows it as it comes, then the check fails.
    result = invoke("--stream", "--quiet", "--output-schema", "schema.json")
    assert result.exit_code == 1
    assert result.stdout.count("The cache hit ratio rose to 61%.") == 6
    assert "the answer is not JSON" in result.stderr


def test_the_shipped_example_runs_offline(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "structured"
    shutil.copytree(example, tmp_path / "structured", ignore=shutil.ignore_patterns("memory"))
    result = CliRunner().invoke(app, ["run", "structured/task.md", "--offline", "--json", "-q"])
    assert result.exit_code == 0, result.output
    output = json.loads(result.stdout.splitlines()[-1])["output"]
    assert sorted(output) == ["confidence", "files_read", "summary"]
    assert "acme.txt: " in output["summary"] and "ledgerly.txt: " in output["summary"]


def test_a_task_may_not_name_a_schema_outside_its_folder(files: Path) -> None:
    (files / "sub").mkdir()
    (files / "sub" / "task.md").write_text('+++\n[output]\nschema = "../schema.json"\n+++\nGo.\n')
    result = CliRunner().invoke(app, ["run", "sub/task.md", "--offline"])
    assert result.exit_code == 2
    assert "output.schema" in result.stderr and "outside the task's folder" in result.stderr


def test_a_follow_up_keeps_the_sessions_schema(files: Path, emulator: Emulator) -> None:
    first = invoke("--output-schema", "schema.json", "--json", "--quiet")
    assert first.exit_code == 0, first.output
    before = len(sent(emulator))
    again = CliRunner().invoke(app, ["run", "-c", "-p", "Which file?", "--json", "--quiet"])
    assert again.exit_code == 0, again.output
    later = sent(emulator)[before:]
    assert later and all(b["output_config"]["format"]["schema"] == SCHEMA for b in later)
    result = json.loads(again.stdout.splitlines()[-1])
    assert set(result["output"]) == {"summary", "count"}


@pytest.mark.parametrize("emulator", [WRONG], indirect=True)
def test_a_follow_up_may_ask_again_after_an_answer_that_did_not_match(
    files: Path, emulator: Emulator
) -> None:
    wrong = invoke("--output-schema", "schema.json", "--quiet")
    assert wrong.exit_code == 1
    again = CliRunner().invoke(app, ["run", "-c", "-p", "As JSON, please.", "--json", "-q"])
    assert again.exit_code == 0, again.output
    last = sent(emulator)[-1]["messages"]
    assert last[-2]["content"][0]["text"] == '{"summary": "ok", "count": "three"}'
    assert set(json.loads(again.stdout.splitlines()[-1])["output"]) == {"summary", "count"}
