"""`agentctl memory ...` names its folder, never creates one to read, and guards `edit`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.memory.store import MemoryStore

READ_ONLY = [
    ["view"],
    ["cat", "a.md"],
    ["export", "-"],
    ["log"],
    ["rm", "a.md"],
    ["mv", "a.md", "b.md"],
    ["clear", "-y"],
]


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["memory", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda a: a[0])
def test_a_missing_root_is_reported_not_created(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "nope" / "mem"
    code, out, err = invoke(*args, "--root", str(missing))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"agentctl: memory root {missing}: no such folder (nothing to show); "
        "check memory.root in the profile (or --set memory.root=DIR; "
        "`agentctl memory` also takes --root)"
    ]
    assert not (tmp_path / "nope").exists()


@pytest.mark.dates
def test_every_command_says_which_folder_it_uses(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    MemoryStore(root).execute({"command": "create", "path": "/memories/a.md", "file_text": "a"})
    for args in (["view"], ["cat", "a.md"], ["log"]):
        code, _, err = invoke(*args, "--root", str(root))
        assert code == 0 and err.splitlines()[0] == f"memory root: {root} (--root)"


@pytest.mark.dates
def test_the_folder_named_for_a_profile_says_which_profile(tmp_path: Path) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text('[memory]\nroot = "notes"\n')
    (tmp_path / "notes").mkdir()
    code, _, err = invoke("view", "--profile", str(profile))
    assert code == 0
    assert err.splitlines()[0] == f"memory root: {tmp_path / 'notes'} (memory.root of {profile})"


@pytest.mark.dates
def test_clear_takes_y_like_sessions_rm(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    MemoryStore(root).execute({"command": "create", "path": "/memories/a.md", "file_text": "a"})
    code, _, err = invoke("clear", "-y", "--root", str(root))
    assert code == 0 and "Deleted 1 entries" in err
    assert not (root / "a.md").exists()


@pytest.mark.slow
def test_an_editor_that_does_not_exist_is_one_line_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    code, _, err = invoke("edit", "a.md", "--root", str(root), env={"EDITOR": "/nonexistent"})
    assert code == 2
    assert err.splitlines()[1:] == [
        "agentctl: editor '/nonexistent' cannot be started (No such file or directory); "
        "set VISUAL or EDITOR to an editor (e.g. EDITOR=nano)"
    ]


EDITOR_SCRIPT = """\
import json
import sys
from pathlib import Path
from agentctl.memory.store import MemoryStore

# While "the user" edits, an agent's str_replace lands on the same file.
MemoryStore(Path(sys.argv[1])).execute(
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "one", "new_str": "ONE"}
)
Path(sys.argv[2]).write_text("user's version\\n")
"""


@pytest.mark.slow
def test_edit_keeps_both_versions_when_the_file_changed_meanwhile(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = MemoryStore(root)
    store.execute({"command": "create", "path": "/memories/notes.md", "file_text": "one\n"})
    script = tmp_path / "editor.py"
    script.write_text(EDITOR_SCRIPT)
    editor = f"{sys.executable} {script} {root}"
    code, _, err = invoke("edit", "notes.md", "--root", str(root), env={"VISUAL": editor})
    assert code == 1
    assert err.splitlines()[1:] == [
        "agentctl: /memories/notes.md changed while the editor was open (an agent wrote to "
        "it?): it was left as it is now, and your version was saved as "
        "/memories/notes.edited.md"
    ]
    assert (root / "notes.md").read_text() == "ONE\n"
    assert (root / "notes.edited.md").read_text() == "user's version\n"


@pytest.mark.slow
def test_edit_saves_when_nothing_changed_meanwhile(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    MemoryStore(root).execute({"command": "create", "path": "/memories/n", "file_text": "1\n"})
    script = tmp_path / "editor.py"
    script.write_text("import sys; open(sys.argv[1], 'w').write('2\\n')\n")
    code, _, err = invoke(
        "edit", "n", "--root", str(root), env={"VISUAL": f"{sys.executable} {script}"}
    )
    assert (code, err.splitlines()[1:]) == (0, ["Saved /memories/n"])
    assert (root / "n").read_text() == "2\n"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs /sys")
def test_a_run_on_an_unwritable_memory_root_stops_before_it_starts(tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    task.write_text("Say hi.\n")
    args = ["run", str(task), "--offline", "--set", "memory.root=/sys/kernel"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "agentctl: memory root /sys/kernel: not writable (Permission denied); "
        "check memory.root in the profile (or --set memory.root=DIR; "
        "`agentctl memory` also takes --root)"
    ]


def test_call_answers_a_deeply_nested_line_and_goes_on(tmp_path: Path) -> None:
    lines = "[" * 100_000 + "]" * 100_000 + '\n{"command": "view", "path": "/memories"}\n'
    result = CliRunner().invoke(app, ["memory", "call", "--root", str(tmp_path)], input=lines)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0
    assert answers[0] == {"ok": False, "error": "line 1: JSON nested too deeply"}
    assert answers[1]["ok"] is True
