"""What you type wins: defaults < ambient profile < task front matter < --profile < --set, flags.

Each layer sets only the keys it names; a command-line layer that overrides a front-matter key
says so in one line; presets are named like files (`--profile balanced`).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.agent.task import read_task
from agentctl.cli.main import app
from agentctl.errors import ConfigError
from agentctl.profile.loader import Overrides, resolve_profile
from agentctl.profile.preset import preset_names, presets_dir
from agentctl.profile.settings import Profile
from agentctl.runner import plan_new

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def task(tmp_path: Path, front: str) -> Path:
    return write(tmp_path / "task" / "task.md", f"+++\n{front}\n+++\nSummarise.\n")


AMBIENT = 'model = "claude-opus-5-5"\nmax_turns = 40\nmax_tokens = 1000\n[cache]\nttl = "1h"\n'
FRONT = "max_turns = 30\nmax_tokens = 2000\n[context_editing.tool_uses]\nkeep = 6\ntrigger = 60000"
TYPED = "max_tokens = 3000\n[context_editing.tool_uses]\ntrigger = 30000\n"


@pytest.mark.dates
def test_each_layer_sets_only_the_keys_it_names(tmp_path: Path) -> None:
    write(tmp_path / "agentctl.toml", AMBIENT)
    typed = write(tmp_path / "typed.toml", TYPED)
    more = Overrides(sets=("context_editing.tool_uses.keep=2",), values={"max_turns": 5})
    plan = plan_new(read_task(str(task(tmp_path, FRONT)), io.StringIO()), typed, more)
    profile = plan.profile
    assert profile.cache.ttl == "1h" and profile.model == "claude-opus-5-5"  # ambient only
    assert profile.max_tokens == 3000  # --profile over front matter over ambient
    assert profile.context_editing.tool_uses.trigger == 30000  # --profile over front matter
    assert profile.context_editing.tool_uses.keep == 2  # --set over front matter
    assert profile.max_turns == 5  # a flag over all
    default = Profile().context_editing.tool_uses.clear_at_least
    assert profile.context_editing.tool_uses.clear_at_least == default  # no layer names it


@pytest.mark.dates
def test_front_matter_sits_above_the_ambient_profile(tmp_path: Path) -> None:
    write(tmp_path / "agentctl.toml", AMBIENT)
    plan = plan_new(read_task(str(task(tmp_path, FRONT)), io.StringIO()))
    assert (plan.profile.max_turns, plan.profile.max_tokens) == (30, 2000)
    assert plan.profile.model == "claude-opus-5-5"
    assert not any("overrides the task's front matter" in w for w in plan.warnings)


@pytest.mark.dates
def test_overriding_front_matter_is_said_in_one_line(tmp_path: Path) -> None:
    typed = write(tmp_path / "typed.toml", TYPED)
    more = Overrides(values={"max_turns": 5}, origins={"max_turns": "--max-turns 5"})
    plan = plan_new(read_task(str(task(tmp_path, FRONT)), io.StringIO()), typed, more)
    (note,) = [w for w in plan.warnings if "front matter" in w]
    assert note == (
        "the command line overrides the task's front matter: --max-turns 5: max_turns; "
        f"--profile {typed}: max_tokens, context_editing.tool_uses.trigger"
    )


@pytest.mark.dates
def test_an_equal_value_is_no_override(tmp_path: Path) -> None:
    typed = write(tmp_path / "typed.toml", "max_turns = 30\n")
    plan = plan_new(read_task(str(task(tmp_path, FRONT)), io.StringIO()), typed)
    assert not any("front matter" in w for w in plan.warnings)


@pytest.mark.dates
def test_run_prints_the_override_line_on_stderr(tmp_path: Path) -> None:
    path = task(tmp_path, "max_turns = 30")
    (path.parent / "workspace").mkdir()
    # No key: the run stops (exit 2) right after the plan, whose warnings are printed first.
    env = {"ANTHROPIC_API_KEY": ""}
    args = ["run", str(path), "--quiet", "--max-turns", "1", "--set", "max_tokens=9"]
    quiet = CliRunner().invoke(app, args, env=env)
    assert quiet.exit_code == 2 and "front matter" not in quiet.stderr  # --quiet: errors only
    loud = CliRunner().invoke(app, [a for a in args if a != "--quiet"], env=env)
    assert loud.exit_code == 2
    lines = [line for line in loud.stderr.splitlines() if "front matter" in line]
    assert lines == [
        "agentctl: warning: the command line overrides the task's front matter: "
        "--max-turns 1: max_turns"
    ]


@pytest.mark.dates
def test_paths_in_each_file_are_relative_to_that_file(tmp_path: Path) -> None:
    write(tmp_path / "agentctl.toml", '[memory]\nroot = "notes"\n')
    typed = write(tmp_path / "cfg" / "typed.toml", '[tools]\nworkspace_root = "src"\n')
    profile, _ = resolve_profile(typed)
    assert profile.memory.root == tmp_path / "notes"
    assert profile.tools.workspace_root == tmp_path / "cfg" / "src"


def test_an_error_names_the_layer_that_wrote_the_key(tmp_path: Path) -> None:
    write(tmp_path / "agentctl.toml", "max_turnz = 3\n")
    typed = write(tmp_path / "typed.toml", "max_turns = 3\n")
    with pytest.raises(ConfigError) as ambient:
        resolve_profile(typed)
    assert str(ambient.value).startswith("profile agentctl.toml: max_turnz: ")
    write(tmp_path / "agentctl.toml", "max_turns = 3\n")
    write(typed, "max_turns = 0\n")
    with pytest.raises(ConfigError) as chosen:
        resolve_profile(typed, extra={"max_turns": 0})
    assert str(chosen.value).startswith(f"profile {typed}: max_turns: ")  # not the front matter


@pytest.mark.dates
def test_a_preset_name_is_a_profile(tmp_path: Path) -> None:
    assert preset_names() == ["aggressive", "api-defaults", "balanced", "no-editing"]
    profile, _ = resolve_profile("balanced")
    assert profile.source == str(presets_dir() / "balanced.toml")
    assert profile.context_editing.tool_uses.strategy == "batched"
    assert resolve_profile("no-editing.toml")[0].context_editing.tool_uses.enabled is False


@pytest.mark.dates
def test_an_existing_file_wins_over_the_preset_of_that_name(tmp_path: Path) -> None:
    write(tmp_path / "balanced", "max_turns = 7\n")
    profile, _ = resolve_profile("balanced")
    assert (profile.source, profile.max_turns) == ("balanced", 7)


@pytest.mark.dates
def test_a_name_that_is_neither_lists_the_presets(monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(app, ["profile", "show", "balance"])
    assert result.exit_code == 2
    assert result.stderr == (
        "agentctl: profile balance: no such file and no such preset (presets: aggressive, "
        "api-defaults, balanced, no-editing; or run `agentctl profile init balance`)\n"
    )
    monkeypatch.setenv("AGENTCTL_PROFILE", "aggressive")
    shown = CliRunner().invoke(app, ["profile", "check"])
    assert shown.stdout == f"ok: {presets_dir() / 'aggressive.toml'} (0 warnings)\n"


def test_profile_show_names_the_layer_of_each_key(tmp_path: Path) -> None:
    from agentctl.profile.show import origin_of, profile_origins

    write(tmp_path / "agentctl.toml", AMBIENT)
    typed = write(tmp_path / "typed.toml", TYPED)
    origins = profile_origins(typed, ["max_turns=2"])
    assert origin_of("cache.ttl", origins) == "ambient"
    assert origin_of("max_tokens", origins) == "file"
    assert origin_of("max_turns", origins) == "--set"
    assert origin_of("context_editing.tool_uses.keep", origins) == "default"
    assert presets_dir() == REPO / "configs"  # a checkout reads the root's configs/
