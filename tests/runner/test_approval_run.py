"""Approval rules in real runs: the SDK against the emulator over HTTP, from Python and the CLI.

What the model is told (the is_error tool_result the emulator receives), what is counted (the
`denied` flag, `tool_denials`) and where (RunResult, NDJSON, the transcript)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.emulator import Emulator, Script, ScriptTurn, ToolCall, running
from agentctl.home import sessions_dir
from agentctl.sessions.transcript import read_records
from agentctl.tools.approval import DENIED, Answer, ApprovalRequest

VIEW = ToolCall("memory", {"command": "view", "path": "/memories"})
DELETE = ToolCall("memory", {"command": "delete", "path": "/memories/old.md"})
READ = ToolCall("read_file", {"path": "notes.txt"})
SCRIPT = Script((ScriptTurn(text="Looking.", tool_calls=(VIEW, DELETE, READ)),), "All done.")
PROFILE = """\
[memory]
root = "mem"
[approval]
deny = ["memory:delete"]
ask = ["read_file"]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the notes\n")
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "old.md").write_text("keep me\n")
    (tmp_path / "profile.toml").write_text(PROFILE)
    (tmp_path / "task.md").write_text("Tidy the notes.\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return tmp_path


def results_in_order(emu: Emulator) -> list[dict[str, Any]]:
    body = emu.requests[-1].body
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def run(folder: Path, emu: Emulator, **kwargs: Any) -> agentctl.RunResult:
    return agentctl.run(
        folder / "task.md", profile=folder / "profile.toml", workspace=folder / "ws", **kwargs
    )


def test_without_anyone_to_ask_deny_and_ask_both_refuse_and_the_model_is_told(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running(script=SCRIPT) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = run(folder, emu)
        view, delete, read = results_in_order(emu)
    assert "is_error" not in view and "old.md" in str(view["content"])
    assert delete["is_error"] is True
    assert delete["content"] == f'{DENIED}memory:delete is refused (deny pattern "memory:delete")'
    assert read["is_error"] is True and str(read["content"]).startswith(
        f'{DENIED}read_file needs the user\'s yes (ask pattern "read_file") and nobody can be'
    )
    assert (folder / "mem" / "old.md").exists()  # the refused delete never ran
    calls = result.turns[0].tool_calls
    assert [(c.name, c.is_error, c.denied) for c in calls] == [
        ("memory", False, False),
        ("memory", True, True),
        ("read_file", True, True),
    ]
    assert result.totals.tool_denials == 2 and result.totals.tool_failures == 0
    assert any("nobody can be asked" in w for w in result.warnings)


def test_the_callback_answers_the_asks_and_always_stops_the_asking(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    again = ToolCall("read_file", {"path": "notes.txt", "offset": 1})
    script = Script(
        (
            ScriptTurn(tool_calls=(READ, DELETE)),
            ScriptTurn(tool_calls=(READ, again)),
        ),
        "All done.",
    )
    (folder / "profile.toml").write_text(
        '[memory]\nroot = "mem"\n[approval]\nask = ["read_file", "memory:delete"]\n'
    )
    asked: list[ApprovalRequest] = []
    answers: list[Answer] = [True, False, "always"]

    def approve(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return answers.pop(0)

    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = run(folder, emu, approve=approve)
        results = results_in_order(emu)
    assert [(r.name, r.command, r.label, r.turn) for r in asked] == [
        ("read_file", None, "read_file", 1),
        ("memory", "delete", "memory:delete", 1),
        ("read_file", None, "read_file", 2),
    ]
    assert asked[1].input == {"command": "delete", "path": "/memories/old.md"}
    assert [bool(r.get("is_error")) for r in results] == [False, True, False, False]
    assert "the notes" in str(results[0]["content"])
    assert results[1]["content"] == (
        f'{DENIED}the user refused this memory:delete call (ask pattern "memory:delete")'
    )
    assert result.totals.tool_denials == 1
    assert not any("nobody can be asked" in w for w in result.warnings)


def test_a_session_asks_its_callback_on_every_user_turn(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    def approve(request: ApprovalRequest) -> Answer:
        asked.append(request.turn)
        return False

    script = Script(
        (ScriptTurn(tool_calls=(READ,)), ScriptTurn(text="Done."), ScriptTurn(tool_calls=(READ,))),
        "All done.",
    )
    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        with agentctl.Session(
            folder / "profile.toml", workspace=folder / "ws", approve=approve
        ) as chat:
            chat.send("Read the notes.")
            chat.send("Read them again.")
        denied = [r for r in results_in_order(emu) if r.get("is_error")]
    assert len(asked) == 2 and asked[0] < asked[1]  # one ask per user turn's read_file call
    assert len(denied) == 2 and chat.totals.tool_denials == 2


def test_front_matter_tightens_the_rules_for_its_task(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "profile.toml").write_text('[memory]\nroot = "mem"\n')
    (folder / "task.md").write_text('+++\n[approval]\ndeny = ["memory"]\n+++\nTidy.\n')
    with running(script=SCRIPT) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = run(folder, emu)
        view, delete, read = results_in_order(emu)
    assert view["content"] == f'{DENIED}memory:view is refused (deny pattern "memory")'
    assert delete["is_error"] is True and "is_error" not in read
    assert result.totals.tool_denials == 2


def test_front_matter_that_loosens_is_refused_before_anything_is_sent(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "task.md").write_text("+++\n[approval]\ndeny = []\n+++\nDelete it.\n")
    with running(script=SCRIPT) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        cli = CliRunner().invoke(app, ["run", "task.md", "--profile", "profile.toml"])
        assert emu.requests == []
    assert cli.exit_code == 2
    assert (
        "front matter: approval.deny: a task may not drop the profile's deny patterns"
        " ('memory:delete')" in cli.stderr
    )


def test_ndjson_and_transcript_carry_the_denials(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running(script=SCRIPT) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        args = ["run", "task.md", "--profile", "profile.toml", "--workspace", "ws", "--json"]
        cli = CliRunner().invoke(app, args)
    assert cli.exit_code == 0, cli.stderr
    events = [json.loads(line) for line in cli.stdout.splitlines()]
    (first, _) = [e for e in events if e["event"] == "turn"]
    assert [c.get("denied", False) for c in first["tool_calls"]] == [False, True, True]
    assert "denied" not in first["tool_calls"][0]  # only a denied call carries the flag
    assert [op.get("denied", False) for op in first["memory_ops"]] == [False, True]
    (result,) = [e for e in events if e["event"] == "result"]
    assert result["totals"]["tool_denials"] == 2
    assert "warning: approval: nobody can be asked" in cli.stderr
    assert "tool_denials=2" in cli.stderr  # the plain summary (stderr is no terminal)
    (path,) = sessions_dir().glob("*.jsonl")
    records = read_records(path)
    recorded = [r for r in records if r["type"] == "tool_result"]
    assert [(r["name"], r["is_error"], r["denied"]) for r in recorded] == [
        ("memory", False, False),
        ("memory", True, True),
        ("read_file", True, True),
    ]
    shown = CliRunner().invoke(app, ["sessions", "show", path.stem])
    assert shown.exit_code == 0, shown.stderr
    assert "memory:delete⊘, read_file⊘" in shown.stdout and "tool denials        2" in shown.stdout
    assert re.search(r"1 +delete +/memories/old.md +denied", shown.stdout)


def test_a_server_tool_the_rules_ask_for_is_not_offered(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "profile.toml").write_text(
        "[server_tools.web_search]\nenabled = true\n[server_tools.web_fetch]\nenabled = true\n"
        '[approval]\nask = ["web_search"]\n'
    )
    with running(script=Script((), "Nothing to do.")) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = run(folder, emu)
        names = [tool["name"] for tool in emu.requests[-1].body["tools"]]
    assert "web_search" not in names and "web_fetch" in names
    assert any("server tool web_search is not offered" in w for w in result.warnings)


def test_the_approval_example_of_the_docs_does_what_its_comments_say(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/tools.md's [approval] example, as written there: memory:view and read_file run
    unasked, another memory command is asked about, memory:delete is refused. (Its `ask` list
    once held `memory`, which asked about memory:view too, against its comment.)"""
    docs = (Path(__file__).parents[2] / "docs" / "tools.md").read_text()
    table = re.search(r"```toml\n(\[approval\]\n.*?)```", docs, re.S)
    assert table is not None
    (folder / "profile.toml").write_text('[memory]\nroot = "mem"\n' + table.group(1))
    create = ToolCall("memory", {"command": "create", "path": "/memories/n.md", "file_text": "x"})
    script = Script((ScriptTurn(tool_calls=(VIEW, READ, create, DELETE)),), "All done.")
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> Answer:
        asked.append(request.label)
        return True

    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = run(folder, emu, approve=approve)
    assert asked == ["memory:create"]
    assert [c.denied for c in result.turns[0].tool_calls] == [False, False, False, True]
