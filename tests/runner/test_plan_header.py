"""A transcript's header is what it records about the Plan (`Plan.header`), and a resume reads
the Plan's own fields back from it (`from_header`): one map, both ways."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agentctl.agent.task import parse_task
from agentctl.profile.settings import Profile
from agentctl.runner import plan_new
from agentctl.runner.plan import HEADER_FIELDS, from_header
from agentctl.sessions.transcript import BATCH_PRICE, SessionHeader, to_json


@pytest.fixture
def plan_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ws").mkdir()
    return tmp_path


def test_the_header_records_the_plan_and_reads_back(plan_in: Path) -> None:
    task = parse_task("Read the notes.\n", str(plan_in / "task.md"), plan_in)
    plan = plan_new(task, Profile(max_turns=7), workspace=plan_in / "ws", offline=True)
    plan = dataclasses.replace(plan, script=plan_in / "s.toml", forked_from="x", forked_at=2)
    head = plan.header()
    assert (head.task, head.workspace, head.emulator_script) == (
        "Read the notes.",
        str(plan_in / "ws"),
        str(plan_in / "s.toml"),
    )
    assert (head.cwd, head.model, head.profile["max_turns"]) == (
        str(plan_in),
        plan.profile.model,
        7,
    )
    # Through the file's JSON and back: the same Plan fields.
    back = SessionHeader.from_fields(json.loads(json.dumps(to_json(head))))
    assert from_header(back) == {attr: getattr(plan, attr) for attr in HEADER_FIELDS.values()}


def test_a_batch_priced_plan_says_so(plan_in: Path) -> None:
    task = parse_task("hi\n", str(plan_in / "task.md"), plan_in)
    plan = dataclasses.replace(plan_new(task), batch_price=True)
    assert plan.header().pricing == BATCH_PRICE


def test_the_header_masks_mcp_secrets(plan_in: Path) -> None:
    (plan_in / "p.toml").write_text(
        '[mcp.servers.files]\ncommand = ["python", "s.py"]\nenv = { TOKEN = "sekrit" }\n'
    )
    task = parse_task("hi\n", str(plan_in / "task.md"), plan_in)
    head = plan_new(task, plan_in / "p.toml").header()
    assert "sekrit" not in json.dumps(to_json(head))
    assert head.profile["mcp"]["servers"]["files"]["env"]["TOKEN"] != "sekrit"
