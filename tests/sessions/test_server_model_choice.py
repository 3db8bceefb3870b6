"""simulate and tune say which server model they replay under, take --server-model, and use
the probe's calibration when nothing else is chosen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.context.calibration import save_calibration
from agentctl.context.server_model import PRESETS
from agentctl.sessions.transcript import Transcript

from .conftest import REPO

AGGRESSIVE = str(REPO / "configs" / "aggressive.toml")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})
    return result.exit_code, result.stdout, result.stderr


def simulated(session: Transcript, *extra: str) -> tuple[dict[str, Any], str]:
    code, out, err = invoke("simulate", session.id, "--profile", AGGRESSIVE, "--json", *extra)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data, err


@pytest.mark.dates
def test_simulate_names_its_model_and_the_choice_changes_the_figures(research: Transcript) -> None:
    later = ("--set", "context_editing.tool_uses.trigger=60000")  # where the two bases differ
    default, err = simulated(research, *later)
    assert default["server_model"]["name"] == "default"
    assert default["server_model"]["source"] == "default"
    assert err.startswith("server model default: trigger vs the edited prompt")
    edited, err = simulated(research, *later, "--server-model", "unedited-basis")
    want = {**PRESETS["unedited-basis"].to_json(), "source": "--server-model"}
    assert edited["server_model"] == want
    assert "server model unedited-basis:" in err
    totals = [d["totals"]["simulated"] for d in (default, edited)]
    assert totals[0]["cleared_input_tokens"] != totals[1]["cleared_input_tokens"]
    assert default["totals"]["recorded"] == edited["totals"]["recorded"]  # what happened stays


@pytest.mark.dates
def test_the_calibration_is_used_when_nothing_else_is_chosen(research: Transcript) -> None:
    path = save_calibration(PRESETS["unedited-basis"], {})
    calibrated, err = simulated(research)
    assert calibrated["server_model"]["source"] == f"calibration {path}"
    assert f"(from calibration {path})" in err
    flagged, _ = simulated(research, "--server-model", "unedited-basis")
    assert calibrated["totals"]["simulated"] == flagged["totals"]["simulated"]
    profile_says, _ = simulated(research, "--set", "context_editing.server_model=default")
    assert profile_says["server_model"]["name"] == "default"  # the profile beats the file


@pytest.mark.dates
def test_tune_replays_every_candidate_under_the_chosen_model(research: Transcript) -> None:
    code, out, err = invoke("tune", research.id, "--grid", "keep=2,4", "--json")
    assert code == 0, err
    default = json.loads(out)
    # the recorded profile's model (the run was recorded under the unedited trigger basis)
    recorded = "unedited-basis"
    assert default["server_model"]["name"] == recorded and f"server model {recorded}" in err
    code, out, err = invoke(
        "tune", research.id, "--grid", "keep=2,4", "--json", "--server-model", "default"
    )
    assert code == 0, err
    large = json.loads(out)
    assert large["server_model"]["name"] == "default"
    costs = [[c["cost_usd"] for c in d["ranked"]] for d in (default, large)]
    assert costs[0] != costs[1]


@pytest.mark.dates
def test_a_bad_server_model_names_where_it_came_from(research: Transcript) -> None:
    code, _, err = invoke("tune", research.id, "--server-model", "nope")
    assert code == 2 and "--server-model: server model 'nope': unknown server model" in err
    code, _, err = invoke(
        "simulate",
        research.id,
        "--profile",
        AGGRESSIVE,
        "--set",
        "context_editing.server_model=edited,y",
    )
    assert code == 2 and "context_editing.server_model" in err and "'y': expected KEY=VALUE" in err
