"""`--server-model all`: simulate and tune report their figures under every server model."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.context.server_model import PRESETS, SERVER_MODELS
from agentctl.profile.loader import resolve_profile
from agentctl.profile.settings import ContextEditing
from agentctl.sessions.across import ModelTuning, robust_choice
from agentctl.sessions.report import tuning, what_if
from agentctl.sessions.simulate import Simulation
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import Candidate, Setting
from agentctl.types import Turn, Usage

from .conftest import REPO

AGGRESSIVE = str(REPO / "configs" / "aggressive.toml")
GRID = "trigger=20000;keep=1,4"
# At aggressive.toml's own 20,000 the research run clears alike under both trigger bases; at
# 30,000 they differ (the edited prompt stays under it on some turns).
SETS = ("context_editing.tool_uses.trigger=30000",)
NAMES = [m.name for m in SERVER_MODELS]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.dates
def test_simulate_all_replays_the_profile_under_every_preset(research: Transcript) -> None:
    every = what_if(research, AGGRESSIVE, SETS, "all")
    assert [row.model for row in every.by_model] == list(SERVER_MODELS)
    assert every.server_model.model.name == "default"  # the usual output: the resolved model
    for row in every.by_model:
        alone = what_if(research, AGGRESSIVE, SETS, row.model.name)
        assert row.simulated.turns == alone.simulated.turns
        assert row.cost_vs_recorded == pytest.approx(
            alone.simulated.cost_usd / alone.recorded.cost_usd
        )
    default, unedited = every.by_model[0], every.by_model[1]
    # (aggressive.toml's keep 2 leaves the edited prompt above its trigger: there the two bases
    # agree; the recorded settings, keep 4 from 60k, tell them apart)
    assert default.replayed.cleared_input_tokens != unedited.replayed.cleared_input_tokens
    # the run was recorded under the unedited trigger basis: only there is it exact
    assert unedited.replay_exact and not default.replay_exact
    assert not what_if(research, AGGRESSIVE).by_model  # one model unless asked


@pytest.mark.dates
def test_tune_all_sweeps_every_preset_and_picks_the_minimax_candidate(research: Transcript) -> None:
    every = tuning(research, GRID, "all")
    assert [t.model for t in every.by_model] == list(SERVER_MODELS)
    for row in every.by_model:
        alone = tuning(research, GRID, row.model.name)
        assert row.winner.editing == alone.winner.editing
        assert row.winner.cost == alone.winner.cost
        assert row.recorded.cost == alone.recorded.cost
    assert every.robust is not None
    worst = {c.label(): max(t.cost_of(c.editing) for t in every.by_model) for c in every.ranked}
    assert every.robust.worst[1] == pytest.approx(min(worst.values()))
    assert every.robust.worst[1] == pytest.approx(worst[every.robust.label()])
    assert tuning(research, GRID).robust is None


def _candidate(editing: ContextEditing, cost: float, recorded: bool = False) -> Candidate:
    turn = Turn(1, "end_turn", Usage(input_tokens=10))
    return Candidate(Setting(editing), Simulation("x", (turn,), (cost,)), recorded)


def test_the_robust_choice_is_the_cheapest_worst_case_not_any_models_winner() -> None:
    base = ContextEditing()
    a, b, c = (
        dataclasses.replace(base, tool_uses=dataclasses.replace(base.tool_uses, keep=k))
        for k in (1, 2, 3)
    )
    # a wins under the first model, c under the second; b is never best, but its worst is least
    first = ModelTuning(PRESETS["unedited"], (_candidate(a, 1.0), _candidate(b, 2.0),
                                              _candidate(c, 5.0, recorded=True)))  # fmt: skip
    second = ModelTuning(PRESETS["edited"], (_candidate(c, 1.0, recorded=True),
                                             _candidate(b, 2.5), _candidate(a, 4.0)))  # fmt: skip
    robust = robust_choice([first, second])
    assert robust.editing == b
    assert robust.costs == (("unedited", 2.0), ("edited", 2.5))
    assert robust.worst == ("edited", 2.5) and not robust.recorded
    # equal worst cases: the lower mean decides
    third = ModelTuning(PRESETS["edited"], (_candidate(a, 2.5), _candidate(b, 2.5),
                                            _candidate(c, 9.0, recorded=True)))  # fmt: skip
    assert robust_choice([first, third]).editing == a


def _json(*args: str) -> tuple[dict[str, Any], str, str]:
    code, out, err = invoke(*args, "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data, out, err


@pytest.mark.dates
def test_simulate_all_json_and_table(research: Transcript) -> None:
    data, _, err = _json("simulate", research.id, "--profile", AGGRESSIVE, "--server-model", "all")
    assert "server model default" in err and "and under every server model: " in err
    rows = data["server_models"]
    assert [r["server_model"]["name"] for r in rows] == NAMES
    recorded = data["totals"]["recorded"]["cost_usd"]
    for row in rows:
        assert row["cost_vs_recorded"] == pytest.approx(row["cost_usd"] / recorded, abs=1e-5)
        assert row["prompt_tokens"] > 0 and 0 < row["peak_prompt"] <= row["prompt_tokens"]
    assert rows[0]["prompt_tokens"] == data["totals"]["simulated"]["input_tokens"] + (
        data["totals"]["simulated"]["cache_read_input_tokens"]
        + data["totals"]["simulated"]["cache_creation_input_tokens"]
    )
    assert [r["replay_matches_recording"] for r in rows][:2] == [False, True]
    code, out, _ = invoke("simulate", research.id, "--profile", AGGRESSIVE, "--server-model", "all")
    assert code == 0
    assert "aggressive.toml under every server model" in out
    assert "is exact only under the server model the run was recorded under" in out
    line = next(x for x in out.splitlines() if x.startswith("default "))
    assert line.split()[-1] == "differs" and line.split()[-2].endswith("x")
    assert "server_models" not in _json("simulate", research.id, "--profile", AGGRESSIVE)[0]


@pytest.mark.dates
def test_tune_all_json_table_and_write(research: Transcript, tmp_path: Path) -> None:
    target = tmp_path / "robust.toml"
    args = ("tune", research.id, "--grid", GRID, "--server-model", "all")
    data, _, err = _json(*args, "--write", str(target))
    assert "and under every server model: " in err
    assert [m["server_model"]["name"] for m in data["server_models"]] == NAMES
    robust = data["robust"]
    assert set(robust["cost_usd"]) == set(NAMES)
    assert robust["worst_cost_usd"] == max(robust["cost_usd"].values())
    for model in data["server_models"]:
        name = model["server_model"]["name"]
        assert model["winner"]["cost_usd"] <= robust["cost_usd"][name] + 1e-9
        assert model["winner"]["cost_usd"] <= model["recorded"]["cost_usd"] + 1e-9
    written = resolve_profile(target)[0].context_editing.tool_uses
    assert (written.trigger, written.keep) == (robust["settings"]["trigger"],
                                               robust["settings"]["keep"])  # fmt: skip
    code, out, _ = invoke(*args)
    assert code == 0 and "best settings under every server model" in out
    assert "robust choice: " in out and "highest cost over the server models is lowest" in out


@pytest.mark.parametrize("spec", ["all,edited", "al", "all,min_result_tokens=5"])
@pytest.mark.dates
def test_a_bad_spec_still_exits_2(research: Transcript, spec: str) -> None:
    for command in (("tune", research.id), ("simulate", research.id, "--profile", AGGRESSIVE)):
        code, _, err = invoke(*command, "--server-model", spec)
        assert code == 2 and "--server-model: server model" in err, err


@pytest.mark.dates
def test_python_api_gives_what_the_cli_prints(research: Transcript) -> None:
    sim = agentctl.simulate(research.id, AGGRESSIVE, server_model="all")
    cli, _, _ = _json("simulate", research.id, "--profile", AGGRESSIVE, "--server-model", "all")
    assert sim.to_json() == cli
    tuned = agentctl.tune(research.id, grid=GRID, server_model="all")
    cli, _, _ = _json("tune", research.id, "--grid", GRID, "--server-model", "all")
    assert tuned.to_json() == cli


@pytest.mark.dates
def test_the_python_docs_example_runs(
    research: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (REPO / "docs" / "python.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "tune(" in b]
    monkeypatch.chdir(REPO)  # the example's relative profile path
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "docs/python.md", "exec"), {})
    costs, labels = out.getvalue().splitlines()
    assert all(f"('{name}', " in costs for name in NAMES)
    assert labels.count("trigger=") == 2
