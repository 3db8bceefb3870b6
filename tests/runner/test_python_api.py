"""The Python API: docs/python.md runs, real HTTP via ANTHROPIC_BASE_URL, the ScriptedClient."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

import agentctl
from agentctl.emulator import running
from agentctl.home import sessions_dir
from agentctl.testing import reply, tool_use

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "python.md"


def doc_examples() -> list[str]:
    return [block for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)]


@pytest.fixture
def repo_like(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder laid out like the repository root (the examples' relative paths)."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_the_docs_example_runs_offline(repo_like: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(doc_examples()[0], str(DOC), "exec"), {})
    printed = out.getvalue()
    assert "StartEvent(" in printed and "ResultEvent(" in printed
    (session,) = sessions_dir().glob("*.jsonl")
    assert session.stem in printed
    assert (repo_like / "memory").is_dir()  # default.toml: memory beside where you run


@pytest.mark.dates
def test_the_batch_example_runs_offline(repo_like: Path) -> None:
    rows = [("renewal", "renewal terms"), ("notice", "notice period")]
    (repo_like / "tasks.jsonl").write_text(
        "".join(
            f'{{"id": "{name}", "task": "Summarise the {what}.", '
            '"set": {"tools.workspace": false}}\n'
            for name, what in rows
        )
    )
    (example,) = [block for block in doc_examples() if "agentctl.run_batch(" in block]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, str(DOC), "exec"), {})
    first, *lines = out.getvalue().splitlines()
    assert first.startswith("runs/b1 2 $")
    memory = repo_like / "runs" / "b1" / "tasks"
    assert sorted(lines) == [
        f"{n} ok 2 {(memory / n / 'memory').resolve()}" for n in ("notice", "renewal")
    ]


@pytest.mark.dates
def test_the_scripted_client_example_runs(repo_like: Path) -> None:
    exec(compile(doc_examples()[-1], str(DOC), "exec"), {})
    assert not sessions_dir().exists() or not list(sessions_dir().glob("*.jsonl"))


@pytest.mark.dates
def test_run_against_a_real_http_server_via_anthropic_base_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task = tmp_path / "task.md"
    task.write_text("+++\nmax_turns = 30\n+++\nSummarise the notes in memory.\n")
    with running() as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = agentctl.run(task, memory_root=tmp_path / "mem", record=False)
        sent = [r for r in emulator.requests if r.path == "/v1/messages"]
    assert result.stop_reason == "end_turn" and result.text
    assert len(sent) == len(result.turns) >= 1
    assert sent[0].body["model"] == agentctl.Profile().model
    assert result.totals.usage.prompt_tokens == sum(t.usage.prompt_tokens for t in result.turns)


@pytest.mark.dates
def test_errors_are_the_documented_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(agentctl.ConfigError, match="override max_turns=0: max_turns"):
        agentctl.load_profile(overrides={"max_turns": 0})
    client = agentctl.ScriptedClient(
        reply(tool_use("memory", {"command": "view"}), stop="tool_use")
    )
    with pytest.raises(agentctl.ApiError, match="no more scripted replies"):
        agentctl.run("Go.", client=client, memory_root="mem", record=False)
    limited = agentctl.load_profile(overrides={"max_turns": 1})
    looping = agentctl.ScriptedClient(
        reply(tool_use("memory", {"command": "view"}), stop="tool_use")
    )
    with pytest.raises(agentctl.LimitError, match="max_turns=1"):
        agentctl.run("Go.", profile=limited, client=looping, memory_root="mem", record=False)


@pytest.mark.dates
def test_events_reach_on_event_and_the_result_holds_the_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[agentctl.Event] = []
    client = agentctl.ScriptedClient(
        reply(tool_use("memory", {"command": "view", "path": "/memories"}), stop="tool_use"),
        "done",
    )
    result = agentctl.run("Go.", client=client, memory_root="mem", on_event=seen.append)
    kinds = [type(e).__name__ for e in seen if not isinstance(e, agentctl.ProgressEvent)]
    assert kinds == ["StartEvent", "Turn", "Turn", "ResultEvent"]  # TurnEvent is Turn
    assert result.turns == tuple(e for e in seen if isinstance(e, agentctl.TurnEvent))
    assert (result.text, result.stop_reason) == ("done", "end_turn")
    assert (sessions_dir() / f"{result.session_id}.jsonl").is_file()


@pytest.mark.dates
def test_tool_failures_that_are_not_the_models_reach_the_result_and_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO where the memory journal goes: the create fails for a reason the model cannot
    fix; the run still ends (exit 0), and the result and the summary say so."""
    import os

    from agentctl.memory.journal import JOURNAL_NAME
    from agentctl.render.plain import format_summary_lines
    from agentctl.render.table import summary_rows

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mem").mkdir()
    os.mkfifo(tmp_path / "mem" / JOURNAL_NAME)
    create = {"command": "create", "path": "/memories/a.md", "file_text": "note"}
    view = {"command": "view", "path": "/memories"}
    client = agentctl.ScriptedClient(
        reply(tool_use("memory", view, "toolu_1"), stop="tool_use"),
        reply(tool_use("memory", create, "toolu_2"), stop="tool_use"),
        "done",
    )
    result = agentctl.run("Go.", client=client, memory_root="mem", record=False)
    assert result.turns[1].tool_calls[0].is_error
    assert result.totals.tool_failures == 1
    assert result.totals.to_json()["tool_failures"] == 1
    final = agentctl.ResultEvent(result.session_id, 3, "end_turn", "done", result.totals)
    rows = dict(summary_rows(final, result.turns))
    assert rows["tool failures"].startswith("1 tool call failed for a reason that is not")
    assert any("tool_failures=1:" in line for line in format_summary_lines(final, result.turns))
    clean = agentctl.run("Go.", client=agentctl.ScriptedClient("done"), record=False)
    assert clean.totals.tool_failures == 0
