"""Task files: front matter, stdin, and the errors that name the file and key."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agentctl.agent.task import default_workspace, read_task
from agentctl.errors import ConfigError, UsageError


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "task.md"
    path.write_text(text)
    return str(path)


def test_front_matter_overrides_and_paths_relative_to_the_task(tmp_path: Path) -> None:
    task = read_task(
        write(
            tmp_path,
            '+++\nmodel = "claude-opus-5-5"\nworkspace = "files"\n'
            '[memory]\nroot = "mem"\n+++\n# Do\nit\n',
        ),
        io.StringIO(),
    )
    assert task.prompt == "# Do\nit"
    assert task.overrides == {"model": "claude-opus-5-5", "memory": {"root": str(tmp_path / "mem")}}
    assert task.workspace == tmp_path / "files"


def test_plain_markdown_and_stdin(tmp_path: Path) -> None:
    assert read_task(write(tmp_path, "just do it\n"), io.StringIO()).overrides == {}
    task = read_task("-", io.StringIO("+++\nmax_turns = 3\n+++\nfrom stdin"))
    assert (task.prompt, task.source, task.overrides) == ("from stdin", "<stdin>", {"max_turns": 3})


def test_default_workspace_is_the_task_folders_workspace_dir(tmp_path: Path) -> None:
    path = write(tmp_path, "x")
    assert default_workspace(read_task(path, io.StringIO())) is None
    (tmp_path / "workspace").mkdir()
    assert default_workspace(read_task(path, io.StringIO())) == tmp_path / "workspace"


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("+++\nmax_turns = \n+++\nx", ConfigError, "front matter: invalid TOML"),
        ("+++\nmax_turn = 3\n+++\nx", ConfigError, "front matter: max_turn"),
        ('+++\nmax_turns = "many"\n+++\nx', ConfigError, "front matter: max_turns"),
        ("+++\nmodel = 'x'\nbody without end", ConfigError, "never closed"),
        ("+++\n+++\n   \n", UsageError, "prompt is empty"),
    ],
)
def test_bad_tasks_name_the_file_and_key(
    tmp_path: Path, text: str, error: type[Exception], message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(error, match=message) as info:
        read_task(path, io.StringIO())
    assert str(info.value).startswith(f"task {path}")


def test_missing_task_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        read_task(str(tmp_path / "nope.md"), io.StringIO())
    with pytest.raises(UsageError, match="is a directory"):
        read_task(str(tmp_path), io.StringIO())
