"""`agentctl example list|copy` and `profile init --preset`: the shipped files, for anyone."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.profile.preset import examples_dir, presets_dir


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_example_list_names_each_example_with_its_heading() -> None:
    code, out, _ = invoke("example", "list")
    assert code == 0
    assert "research\tKestrel outage\n" in out
    assert [line.split("\t")[0] for line in out.splitlines()] == sorted(
        p.parent.name for p in examples_dir().glob("*/task.md")
    )


def test_example_copy_copies_the_task_and_workspace_but_no_memory(tmp_path: Path) -> None:
    source = examples_dir() / "memory-carryover"
    left = source / "memory"
    made = not left.exists()
    left.mkdir(exist_ok=True)
    try:
        code, out, _ = invoke("example", "copy", "memory-carryover", "mc")
    finally:
        if made:
            left.rmdir()
    assert code == 0 and out.startswith("copied example memory-carryover to mc;")
    assert (tmp_path / "mc" / "task.md").read_bytes() == (source / "task.md").read_bytes()
    assert sorted(p.name for p in (tmp_path / "mc" / "workspace").iterdir()) == sorted(
        p.name for p in (source / "workspace").iterdir()
    )
    assert not (tmp_path / "mc" / "memory").exists()


def test_example_copy_refuses_an_existing_folder_and_an_unknown_name(tmp_path: Path) -> None:
    (tmp_path / "research").mkdir()
    assert invoke("example", "copy", "research") == (
        2, "", "agentctl: research: already exists (give a new folder)\n"
    )  # fmt: skip
    code, _, err = invoke("example", "copy", "reserch")
    assert code == 2
    assert err == (
        "agentctl: example reserch: no such example"
        " (examples: mcp, memory-carryover, project-log, research, structured)\n"
    )


def test_profile_init_preset_writes_the_preset(tmp_path: Path) -> None:
    code, out, _ = invoke("profile", "init", "--preset", "aggressive", "mine.toml")
    assert (code, out) == (0, "wrote mine.toml (preset aggressive)\n")
    expected = (presets_dir() / "aggressive.toml").read_bytes()
    assert (tmp_path / "mine.toml").read_bytes() == expected
    assert invoke("profile", "init", "--preset", "aggressive", "mine.toml")[0] == 2  # exists
    code, _, err = invoke("profile", "init", "--preset", "fast")
    assert code == 2 and err == (
        "agentctl: --preset fast: no such preset "
        "(presets: aggressive, api-defaults, balanced, no-editing)\n"
    )
    assert not (tmp_path / "agentctl.toml").exists()


def test_example_copy_all_writes_every_example_and_the_scripts(tmp_path: Path) -> None:
    code, out, _ = invoke("example", "copy", "--all")
    shipped = sorted(p.name for p in examples_dir().iterdir() if p.is_dir() and p.name[0] != "_")
    assert (code, out) == (0, f"copied every example to examples: {', '.join(shipped)}\n")
    assert "scripts" in shipped  # no task of its own: docs/emulator.md names its files
    assert (tmp_path / "examples" / "scripts" / "every-stop-reason.toml").is_file()
    assert (tmp_path / "examples" / "research" / "workspace" / "logs").is_dir()
    assert not list((tmp_path / "examples").glob("*/memory"))
    assert invoke("example", "copy", "--all") == (
        2, "", "agentctl: examples: already exists (give a new folder)\n"
    )  # fmt: skip
    assert invoke("example", "copy", "--all", "ex")[:2] == (
        0,
        f"copied every example to ex: {', '.join(shipped)}\n",
    )
    assert invoke("example", "copy", "--all", "a", "b") == (
        2, "", "agentctl: --all takes one folder (DIR), not an example name\n"
    )  # fmt: skip
    code, _, err = invoke("example", "copy")
    assert code == 2 and err.startswith("agentctl: give an example NAME or --all (examples: mcp,")


def test_example_list_shows_the_first_line_of_a_task_without_a_heading() -> None:
    code, out, _ = invoke("example", "list")
    assert code == 0
    assert "structured\tRead the contract notes in the workspace and report…\n" in out
    assert all(line.split("\t")[1] for line in out.splitlines())
    assert max(len(line.expandtabs()) for line in out.splitlines()) <= 80


def test_a_checkout_path_to_a_preset_names_the_preset_where_there_is_none() -> None:
    code, _, err = invoke("profile", "show", "configs/aggressive.toml")
    assert code == 2 and err == (
        "agentctl: profile configs/aggressive.toml: no such file; aggressive is a preset: give"
        " its name (aggressive), or write the file with"
        " `agentctl profile init --preset aggressive configs/aggressive.toml`\n"
    )
    assert invoke("profile", "init", "--preset", "aggressive", "configs/aggressive.toml")[0] == 0
    assert invoke("profile", "show", "configs/aggressive.toml")[0] == 0


def test_a_missing_example_task_names_the_copy_that_puts_it_there(tmp_path: Path) -> None:
    """Installed from a wheel there is no examples/: the README's line names the fix."""
    code, _, err = invoke("run", "examples/research/task.md", "--offline")
    assert code == 2 and err == (
        "agentctl: task examples/research/task.md: no such file (the shipped example:"
        " `agentctl example copy research examples/research` puts it there)\n"
    )
    (tmp_path / "examples" / "research").mkdir(parents=True)  # a folder of one's own: no hint
    code, _, err = invoke("run", "examples/research/task.md", "--offline")
    assert code == 2 and err.endswith("no such file (give a Markdown file, or - to read stdin)\n")
    code, _, err = invoke("run", "examples/research/notes.md", "--offline")
    assert code == 2 and "example copy" not in err
