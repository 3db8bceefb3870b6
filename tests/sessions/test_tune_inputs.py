"""tune searches clear_tool_inputs: the session's tools whose inputs pile up (never the memory
tool's notes), the grid key, and a replay of inputs clearing that a live run reproduces."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.errors import UsageError
from agentctl.profile.settings import ClearToolUses, ContextEditing
from agentctl.render.sessions_view import tuning_view
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.report import tuning
from agentctl.sessions.simulate import Simulation, recorded_run, simulate
from agentctl.sessions.transcript import Transcript, load_session
from agentctl.sessions.tune import (
    Candidate,
    Setting,
    default_inputs,
    hides_notes,
    parse_grid,
    piling_tools,
    ranked,
    setting_key,
    settings_json,
    settings_label,
)
from agentctl.types import Turn, Usage
from tests.sessions.conftest import _run, install, scripted_task

# Long paths make read_file's inputs pile up (~130 tokens a call); list_files' are short.
DEEP = "/".join(
    f"section-{i}-of-the-quarterly-archive-with-a-long-descriptive-name" for i in range(6)
)
TURNS = 10

PROFILE = """\
model = "claude-sonnet-5"
max_tokens = 4096
[context_editing.tool_uses]
trigger = 9000
keep = 2
clear_at_least = 0
[tools]
memory = true
workspace = true
"""


def _script() -> str:
    turns = ['[[turn]]\n[[turn.tool_use]]\nname = "list_files"\ninput = { path = "." }\n']
    for i in range(1, TURNS + 1):
        turns.append(
            f'[[turn]]\n[[turn.tool_use]]\nname = "read_file"\n'
            f'input = {{ path = "{DEEP}/report-{i}.txt" }}\n'
            f'[[turn.tool_use]]\nname = "memory"\n'
            f'input = {{ command = "create", path = "/memories/r{i}.md", '
            f'file_text = "report {i}: {i * 41} units" }}\n'
        )
    return "".join(turns) + 'final_text = "Every report is read."\n'


def _task(root: Path) -> Path:
    line = "report {i}: the count for district {i} is {n} units, audited in March.\n"
    files = {f"{DEEP}/report-{i}.txt": line.format(i=i, n=i * 41) * 90 for i in range(1, TURNS + 1)}
    return scripted_task(root, files, _script(), "Read every report.")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The scripted task run offline as recorded, and again with read_file's inputs cleared."""
    base = tmp_path_factory.mktemp("inputs")
    profile = base / "profile.toml"
    profile.write_text(PROFILE)
    saved = os.getcwd()
    found: dict[str, Path] = {}
    try:
        for name, extra in (
            ("recorded", ()),
            ("inputs", ("--set", 'context_editing.tool_uses.clear_tool_inputs=["read_file"]')),
        ):
            root = base / name
            task = _task(root)
            os.chdir(root)  # memory and workspace resolve from the task folder
            found[name] = _run(base / f"home-{name}", task, profile, *extra)
    finally:
        os.chdir(saved)
    return found


@pytest.fixture
def recorded(_isolated_env: Path, runs: dict[str, Path]) -> Iterator[Transcript]:
    install(_isolated_env, runs["recorded"])
    yield load_session(runs["recorded"].stem)


def test_the_grid_takes_false_true_and_tool_names() -> None:
    grid = parse_grid("clear_tool_inputs=false, Read_File+grep+grep ,true;keep=1")
    assert grid == {"clear_tool_inputs": ("false", "Read_File+grep", "true"), "keep": (1,)}
    assert parse_grid("clear_tool_inputs") == {"clear_tool_inputs": ()}
    for bad in ("clear_tool_inputs=read+", "clear_tool_inputs=a b"):
        with pytest.raises(UsageError, match="clear_tool_inputs"):
            parse_grid(bad)


@pytest.mark.slow
@pytest.mark.dates
def test_the_tools_that_pile_up_inputs_leave_out_the_memory_tool(recorded: Transcript) -> None:
    """memory's calls carry more input tokens than list_files' one and are still not offered;
    list_files' 3 tokens do not pile up."""
    tools = ClearToolUses()
    assert piling_tools(recorded, tools) == ("read_file",)
    assert default_inputs(recorded, tools) == ("false", "read_file")
    assert piling_tools(recorded, dataclasses.replace(tools, exclude_tools=("read_file",))) == ()


@pytest.mark.slow
@pytest.mark.dates
def test_tune_offers_and_picks_clearing_read_files_inputs(recorded: Transcript) -> None:
    result = tuning(recorded, None)
    inputs = {c.editing.tool_uses.clear_tool_inputs for c in result.ranked}
    assert inputs == {False, ("read_file",)}  # never the memory tool's notes
    assert not any(c.hides_notes for c in result.ranked)
    winner = result.winner
    assert winner.editing.tool_uses.clear_tool_inputs == ("read_file",)
    same = [
        c
        for c in result.ranked
        if c.setting
        == dataclasses.replace(
            winner.setting,
            editing=dataclasses.replace(
                winner.editing,
                tool_uses=dataclasses.replace(winner.editing.tool_uses, clear_tool_inputs=False),
            ),
        )
    ]
    assert len(same) == 1 and same[0].cost > winner.cost  # clearing the inputs is what saves
    data = json.loads(json.dumps(result.to_json()))
    assert data["winner"]["settings"]["clear_tool_inputs"] == ["read_file"]
    assert data["grid"] == {"trigger": list(result.grid["trigger"]), "keep": [1, 2, 3, 4, 6],
                            "clear_at_least": [0, 10_000]}  # fmt: skip
    console = Console(width=140, record=True, color_system=None)
    for part in tuning_view(result, 3):
        console.print(part)
    assert "clear_tool_inputs=read_file" in console.export_text()


@pytest.mark.slow
@pytest.mark.dates
def test_a_grid_naming_the_memory_tool_marks_what_hides_the_notes(recorded: Transcript) -> None:
    result = tuning(recorded, "trigger=9000;keep=2;clear_tool_inputs=false,memory,read_file")
    marked = {settings_label(c.setting): c.hides_notes for c in result.ranked}
    assert not marked[
        "trigger=9000 keep=2 clear_at_least=0 low_water=0 clear_tool_inputs=read_file"
    ]
    hidden = next(c for c in result.ranked if c.hides_notes)
    assert hidden.to_json()["hides_notes"] is True
    assert hides_notes(hidden.setting, memory_on=False) is False  # no memory tool: no notes
    console = Console(width=160, record=True, color_system=None)
    for part in tuning_view(result, len(result.ranked)):
        console.print(part)
    text = console.export_text()
    assert "clear_tool_inputs=memory (hides notes)" in text
    assert "the notes the model wrote" in text


@pytest.mark.slow
@pytest.mark.dates
def test_the_replay_of_inputs_clearing_equals_a_live_run_of_it(
    recorded: Transcript, runs: dict[str, Path], _isolated_env: Path
) -> None:
    install(_isolated_env, runs["inputs"])
    live = load_session(runs["inputs"].stem)
    profile = session_profile(recorded)
    tools = dataclasses.replace(profile.context_editing.tool_uses, clear_tool_inputs=("read_file",))
    other = dataclasses.replace(
        profile, context_editing=dataclasses.replace(profile.context_editing, tool_uses=tools)
    )
    replayed = simulate(recorded, ReplaySettings.from_profile(other), other)
    ran = recorded_run(live, session_profile(live))
    assert [t.usage for t in replayed.turns] == [t.usage for t in ran.turns]
    assert [t.applied_edits for t in replayed.turns] == [t.applied_edits for t in ran.turns]
    assert replayed.cost_usd == ran.cost_usd
    plain = recorded_run(recorded, profile)
    assert ran.usage.prompt_tokens < plain.usage.prompt_tokens  # the inputs were cleared


@pytest.mark.slow
@pytest.mark.dates
def test_the_cli_shows_the_pick_and_the_json_carries_it(recorded: Transcript) -> None:
    grid = "trigger=9000;keep=2;clear_tool_inputs=false,read_file"
    out = CliRunner().invoke(app, ["tune", recorded.id, "--grid", grid, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["winner"]["settings"]["clear_tool_inputs"] == ["read_file"]
    assert data["recorded"]["settings"]["clear_tool_inputs"] is False
    assert {c["settings"].get("clear_tool_inputs") == ["read_file"] for c in data["ranked"]} == {
        True,
        False,
    }


def test_settings_json_carries_clear_tool_inputs_only_while_clearing() -> None:
    on = Setting(ContextEditing(ClearToolUses(clear_tool_inputs=True)))
    assert settings_json(on)["clear_tool_inputs"] is True
    assert settings_label(on).endswith("clear_tool_inputs=true")
    off = Setting(ContextEditing(ClearToolUses(enabled=False, clear_tool_inputs=True)))
    assert "clear_tool_inputs" not in settings_json(off)


GRID = "trigger=3000,9000;keep=1,2,4;clear_at_least=0,5k;clear_tool_inputs=false,read_file"


@pytest.mark.slow
@pytest.mark.dates
def test_tokens_within_picks_the_fewest_tokens_under_the_cost_limit(recorded: Transcript) -> None:
    by_cost = tuning(recorded, GRID)
    result = tuning(recorded, GRID, within=0.9)
    assert result.reference is not None
    plain = result.reference.to_json()["settings"]
    assert plain["clear_tool_uses"] is False and "compaction_trigger" not in plain
    limit = round(0.9 * result.reference.cost, 9)
    inside = [c for c in result.ranked if round(c.cost, 9) <= limit]
    tokens = [c.simulation.usage.prompt_tokens for c in inside]
    assert inside == result.ranked[: len(inside)] and tokens == sorted(tokens)
    assert result.winner.simulation.usage.prompt_tokens == min(
        c.simulation.usage.prompt_tokens for c in by_cost.ranked if round(c.cost, 9) <= limit
    )
    objective = json.loads(json.dumps(result.to_json()))["objective"]
    assert objective["rank"] == "prompt_tokens" and objective["within"] == 0.9
    assert objective["limit_usd"] == limit and objective["winner_within"] is True
    assert by_cost.to_json()["objective"] == {"rank": "cost"}


@pytest.mark.slow
@pytest.mark.dates
def test_tokens_within_a_limit_nothing_meets_ranks_by_cost(recorded: Transcript) -> None:
    by_cost = tuning(recorded, GRID)
    result = tuning(recorded, GRID, within=0.01)
    assert [setting_key(c.setting) for c in result.ranked] == [
        setting_key(c.setting) for c in by_cost.ranked
    ]
    assert result.to_json()["objective"]["winner_within"] is False


@pytest.mark.slow
@pytest.mark.dates
def test_the_cli_takes_tokens_within(recorded: Transcript) -> None:
    args = ["tune", recorded.id, "--grid", GRID, "--tokens-within", "0.9"]
    out = CliRunner().invoke(app, args, env={"COLUMNS": "160"})
    assert out.exit_code == 0, out.output
    assert "ranked by prompt tokens among settings costing at most 0.9x no editing" in out.stdout
    assert "fewest tokens within the cost limit" in out.stdout
    bad = CliRunner().invoke(app, ["tune", recorded.id, "--tokens-within", "0"])
    assert bad.exit_code == 2 and "--tokens-within 0: expected a ratio above 0" in bad.output


def _candidate(name: str, cost: float, tokens: int) -> Candidate:
    usage = Usage(input_tokens=tokens)
    sim = Simulation(name, (Turn(1, "end_turn", usage, ()),), (cost,))
    trigger = ClearToolUses(trigger=1000 + len(name))
    return Candidate(Setting(ContextEditing(trigger)), sim, recorded=name == "recorded")


def test_a_cost_limit_puts_the_fewest_tokens_under_it_first() -> None:
    found = [
        _candidate("recorded", 2.0, 900),
        _candidate("cheap", 1.0, 500),
        _candidate("lean", 1.2, 400),
        _candidate("leanest", 1.9, 300),
        _candidate("dear", 3.0, 100),
    ]
    names = [c.simulation.label for c in ranked(found)]
    assert names == ["cheap", "lean", "leanest", "recorded", "dear"]
    names = [c.simulation.label for c in ranked(found, limit=1.5)]
    assert names == ["lean", "cheap", "leanest", "recorded", "dear"]
    names = [c.simulation.label for c in ranked(found, limit=3.0)]
    assert names == ["dear", "leanest", "lean", "cheap", "recorded"]
    assert ranked(found, limit=0.5) == ranked(found)
