"""The probe's calibration reaches every part of a run: the plan resolves it once into its
server model (batched clearing counts tool uses by it, the emulator plays it, the transcript
records its spec), unless the profile names its own; the profile itself is left as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.agent.task import parse_task
from agentctl.cli.main import app
from agentctl.context.calibration import save_calibration
from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    PRESETS,
    ServerModel,
    parse_server_model,
)
from agentctl.home import sessions_dir
from agentctl.runner import plan_new
from agentctl.runner.plan import Plan
from agentctl.sessions.transcript import read_records

CUSTOM = ServerModel("custom", "edited", 40, "[gone, really]", 2)


@pytest.mark.parametrize("model", [*PRESETS.values(), CUSTOM], ids=lambda m: m.name)
def test_a_spec_reads_back_to_the_same_rules(model: ServerModel) -> None:
    back = parse_server_model(model.spec())
    assert (back.trigger_basis, back.min_result_tokens, back.placeholder, back.thinking_keep) == (
        model.trigger_basis,
        model.min_result_tokens,
        model.placeholder,
        model.thinking_keep,
    )
    assert back.name == model.name  # presets by name; other rules read back as "custom"


def plan_for(tmp_path: Path, front: str = "") -> Plan:
    task = parse_task(f"{front}Read the notes.\n", str(tmp_path / "task.md"), tmp_path)
    return plan_new(task)


def recorded_spec(plan: Plan) -> str:
    spec = plan.profile_record()["context_editing"]["server_model"]
    assert isinstance(spec, str)
    return spec


@pytest.mark.dates
def test_without_a_calibration_the_default_plays_and_nothing_is_written(tmp_path: Path) -> None:
    plan = plan_for(tmp_path)
    assert (plan.server.model, plan.server.source) == (DEFAULT_SERVER_MODEL, "default")
    assert recorded_spec(plan) == plan.profile.context_editing.server_model == ""


@pytest.mark.parametrize("model", [PRESETS["edited-large"], CUSTOM], ids=lambda m: m.name)
@pytest.mark.dates
def test_the_calibration_is_the_plans_server_model_and_recorded(
    tmp_path: Path, model: ServerModel
) -> None:
    path = save_calibration(model, {})
    plan = plan_for(tmp_path)
    assert plan.server.source == f"calibration {path}"
    assert plan.server.model.spec() == model.spec()
    assert plan.profile.context_editing.server_model == ""  # the profile as written
    assert recorded_spec(plan) == model.spec()  # what a resume or replay plays again


@pytest.mark.dates
def test_a_profiles_own_server_model_wins_over_the_calibration(tmp_path: Path) -> None:
    save_calibration(PRESETS["edited-large"], {})
    front = '+++\n[context_editing]\nserver_model = "edited"\n+++\n'
    plan = plan_for(tmp_path, front)
    assert plan.server.model == PRESETS["edited"] and recorded_spec(plan) == "edited"
    assert not plan.server.source.startswith("calibration")  # the profile names it


@pytest.mark.slow
def test_an_offline_run_names_the_calibration_and_records_its_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_calibration(PRESETS["unedited-large"], {})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "task.md").write_text("Say what the notes say.\n")
    (tmp_path / "notes.md").write_text("The notes.\n")
    result = CliRunner().invoke(app, ["run", "task.md", "--offline", "--json"])
    assert result.exit_code == 0, result.stderr
    assert "server model unedited-large" in result.stderr and "(from calibration " in result.stderr
    (path,) = sessions_dir().glob("*.jsonl")
    header = read_records(path)[0]
    assert header["profile"]["context_editing"]["server_model"] == "unedited-large"
    assert json.loads(result.stdout.splitlines()[-1])["event"] == "result"
