"""The probe's calibration reaches every part of a run: the plan writes its rules into the
profile (so batched clearing counts tool uses by them, the emulator plays them and the
transcript records them), unless the profile names its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.agent.task import parse_task
from agentctl.cli.main import app
from agentctl.context.calibration import save_calibration
from agentctl.context.server_model import PRESETS, ServerModel, parse_server_model
from agentctl.home import sessions_dir
from agentctl.runner import plan_new
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


def plan_for(tmp_path: Path, front: str = "") -> tuple[str, str]:
    task = parse_task(f"{front}Read the notes.\n", str(tmp_path / "task.md"), tmp_path)
    plan = plan_new(task)
    assert plan.server is not None
    return plan.profile.context_editing.server_model, plan.server.source


@pytest.mark.dates
def test_without_a_calibration_the_default_plays_and_nothing_is_written(tmp_path: Path) -> None:
    assert plan_for(tmp_path) == ("", "default")


@pytest.mark.parametrize("model", [PRESETS["edited-large"], CUSTOM], ids=lambda m: m.name)
@pytest.mark.dates
def test_the_calibration_is_written_into_the_plans_profile(
    tmp_path: Path, model: ServerModel
) -> None:
    path = save_calibration(model, {})
    spec, source = plan_for(tmp_path)
    assert spec == model.spec()
    assert source == f"calibration {path}"


@pytest.mark.dates
def test_a_profiles_own_server_model_wins_over_the_calibration(tmp_path: Path) -> None:
    save_calibration(PRESETS["edited-large"], {})
    front = '+++\n[context_editing]\nserver_model = "edited"\n+++\n'
    spec, source = plan_for(tmp_path, front)
    assert spec == "edited"
    assert not source.startswith("calibration")  # the profile (with its front matter) names it


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
