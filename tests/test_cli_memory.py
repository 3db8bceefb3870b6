"""`agentctl memory ...`: CliRunner for behaviour, real subprocesses for exit codes and pipes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.cli.memory import call_line, memory_path
from agentctl.memory.journal import read_entries
from agentctl.memory.store import MemoryStore

AGENTCTL = [sys.executable, "-m", "agentctl"]


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["memory", *args], input=stdin)
    return result.exit_code, result.stdout


def fail(*args: str) -> tuple[int, str]:
    """Exit code and stderr of a command expected to fail (stdout must stay empty), without
    the `memory root: ...` line that names the folder."""
    result = CliRunner().invoke(app, ["memory", *args])
    assert result.stdout == ""
    return result.exit_code, without_root_line(result.stderr)


def without_root_line(stderr: str) -> str:
    """stderr after the first line, which must say which memory folder is used."""
    first, _, rest = stderr.partition("\n")
    assert first.startswith("memory root: /"), stderr
    return rest


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = MemoryStore(tmp_path / "mem")
    store.execute({"command": "create", "path": "/memories/notes.md", "file_text": "a\nb\nc\n"})
    store.execute({"command": "create", "path": "/memories/proj/todo.md", "file_text": "x"})
    return store.root


def test_memory_path_forms() -> None:
    assert memory_path("notes.md") == "/memories/notes.md"
    assert memory_path("./a/b.md") == "/memories/a/b.md"
    assert memory_path("") == memory_path(".") == "/memories"
    assert memory_path("/memories/x") == "/memories/x"
    assert memory_path("/etc/passwd") == "/etc/passwd"  # refused later by the store


@pytest.mark.dates
def test_view_not_a_tty_is_the_models_text(root: Path) -> None:
    code, out = run("view", "--root", str(root))
    assert code == 0
    assert out == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n4K\t/memories\n6B\t/memories/notes.md\n4K\t/memories/proj/\n"
        "1B\t/memories/proj/todo.md\n"
    )


@pytest.mark.dates
def test_view_file_with_lines(root: Path) -> None:
    code, out = run("view", "notes.md", "--lines", "2:", "--root", str(root))
    assert code == 0
    assert (
        out == "Here's the content of /memories/notes.md with line numbers:\n     2\tb\n"
        "     3\tc\n     4\t\n"
    )
    code, out = run("view", "notes.md", "--lines", "two", "--root", str(root))
    assert code == 2


@pytest.mark.dates
def test_rich_tree_rendering(root: Path) -> None:
    from rich.console import Console

    from agentctl.render.memory_tree import listing_tree

    text = MemoryStore(root).execute({"command": "view", "path": "/memories"})
    console = Console(width=100, record=True, color_system=None)
    console.print(listing_tree(text))
    assert console.export_text().splitlines() == [
        "/memories  4K",
        "├── notes.md  6B",
        "└── proj/  4K",
        "    └── todo.md  1B",
    ]


@pytest.mark.dates
def test_cat_rm_mv_and_log(root: Path) -> None:
    assert run("cat", "/memories/notes.md", "--root", str(root)) == (0, "a\nb\nc\n")
    code, out = run("mv", "notes.md", "archive/notes.md", "--root", str(root))
    assert (code, out) == (
        0,
        "Successfully renamed /memories/notes.md to /memories/archive/notes.md\n",
    )
    assert run("rm", "proj", "--root", str(root)) == (0, "Successfully deleted /memories/proj\n")
    code, out = run("log", "--root", str(root))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 4
    assert "delete" in lines[0] and "/memories/proj" in lines[0]  # newest first
    assert "rename" in lines[1] and "-> /memories/archive/notes.md" in lines[1]
    code, out = run("log", "--json", "-n", "1", "--root", str(root))
    record = json.loads(out)
    assert record["command"] == "delete" and record["session"] == "cli"


@pytest.mark.dates
def test_recount_sees_a_file_rewritten_in_place(root: Path) -> None:
    with (root / "notes.md").open("a") as f:  # in place: the saved tally cannot notice
        f.write("1234567890")
    assert run("recount", "--root", str(root)) == (0, "2 files, 17 bytes\n")
    profile = root.parent / "p.toml"
    profile.write_text(f'[memory]\nroot = "{root}"\nmax_total_bytes = 20\n')
    code, out = run("call", "--profile", str(profile), stdin=CREATE_4_BYTES)
    assert code == 0 and "would hold 21 bytes, over the limit of 20" in out


CREATE_4_BYTES = '{"command": "create", "path": "/memories/n.md", "file_text": "abcd"}\n'


@pytest.mark.dates
def test_errors_are_one_line_exit_2(root: Path) -> None:
    assert fail("cat", "missing.md", "--root", str(root)) == (
        2,
        "agentctl: The path /memories/missing.md does not exist. Please provide a valid path.\n",
    )
    assert fail("view", "/memories/../x", "--root", str(root)) == (
        2,
        "agentctl: Path /memories/../x would escape /memories directory\n",
    )


@pytest.mark.dates
def test_call_processes_every_line(root: Path) -> None:
    stdin = "\n".join(
        [
            '{"command": "create", "path": "/memories/c.md", "file_text": "hi"}',
            "not json",
            "[1, 2]",
            "",
            '{"command": "nope"}',
            '{"command": "view", "path": "/memories/c.md"}',
        ]
    )
    code, out = run("call", "--root", str(root), "--session", "s9", stdin=stdin)
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [a["ok"] for a in answers] == [True, False, False, False, True]
    assert answers[1]["error"].startswith("line 2: not JSON")
    assert answers[2]["error"] == "line 3: expected a JSON object, got list"
    assert answers[3]["error"] == "Unknown command: nope"
    assert answers[4]["result"].endswith("     1\thi")
    assert read_entries(root)[-1]["session"] == "s9"


@pytest.mark.dates
def test_call_line_missing_fields_and_bad_bytes(root: Path) -> None:
    answer = call_line(MemoryStore(root), '{"command": "view"}', 1)
    assert answer == {"ok": False, "error": "Missing required field `path` for the view command"}
    assert call_line(MemoryStore(root), b'{"path": "\xff"}', 7) == {
        "ok": False,
        "error": "line 7: not UTF-8",
    }


@pytest.mark.slow
def test_export_to_stdout_is_a_tar(root: Path) -> None:
    done = subprocess.run(
        [*AGENTCTL, "memory", "export", "-", "--root", str(root)], capture_output=True, check=True
    )
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        member = tar.extractfile("memories/notes.md")
        assert member is not None and member.read() == b"a\nb\nc\n"
    assert without_root_line(done.stderr.decode()) == "Exported 2 files\n"


@pytest.mark.slow
def test_call_answers_unicode_as_utf8(root: Path) -> None:
    line = '{"command": "create", "path": "/memories/ü.md", "file_text": "é"}\n'
    done = subprocess.run(
        [*AGENTCTL, "memory", "call", "--root", str(root)],
        input=line.encode(),
        capture_output=True,
        check=True,
        env={**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii"},
    )
    assert json.loads(done.stdout.decode("utf-8"))["result"].endswith("/memories/ü.md")


@pytest.mark.slow
def test_edit_with_a_real_editor(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "ed.py"
    script.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().upper() + 'edited\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    code, _ = run("edit", "notes.md", "--root", str(root))
    assert code == 0
    assert (root / "notes.md").read_text() == "A\nB\nC\nedited\n"
    code, _ = run("edit", "new/file.md", "--root", str(root))
    assert (root / "new" / "file.md").read_text() == "edited\n"
    monkeypatch.setenv("EDITOR", "false")
    code, _ = run("edit", "notes.md", "--root", str(root))
    assert code == 2
    assert (root / "notes.md").read_text() == "A\nB\nC\nedited\n"


@pytest.mark.dates
def test_export_import_round_trip(root: Path, tmp_path: Path) -> None:
    archive = tmp_path / "m.tar.gz"
    assert run("export", str(archive), "--root", str(root))[0] == 0
    with tarfile.open(archive) as tar:
        names = sorted(tar.getnames())
    assert names == ["memories/notes.md", "memories/proj", "memories/proj/todo.md"]
    other = tmp_path / "other"
    assert run("import", str(archive), "--root", str(other))[0] == 0
    assert (other / "proj" / "todo.md").read_text() == "x"
    code, _ = run("import", str(archive), "--root", str(other))
    assert code == 2  # exists; --replace needed
    assert run("import", str(archive), "--replace", "--root", str(other))[0] == 0


def _tar(path: Path, members: list[tarfile.TarInfo]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for info in members:
            data = b"pwned" if info.isfile() else None
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


@pytest.mark.parametrize(
    "member",
    [
        "memories/../escape.txt",
        "/memories/abs.txt",
        "memories/a/../../escape.txt",
        "other/x.txt",
        "memories/.agentctl-journal.jsonl",
        "memories/a\\..\\b",
        "symlink",
        "hardlink",
    ],
)
@pytest.mark.dates
def test_import_refuses_hostile_archives(root: Path, tmp_path: Path, member: str) -> None:
    good = tarfile.TarInfo("memories/good.txt")
    if member == "symlink":
        bad = tarfile.TarInfo("memories/link")
        bad.type, bad.linkname = tarfile.SYMTYPE, "/etc/passwd"
    elif member == "hardlink":
        bad = tarfile.TarInfo("memories/hl")
        bad.type, bad.linkname = tarfile.LNKTYPE, "memories/good.txt"
    else:
        bad = tarfile.TarInfo(member)
    archive = tmp_path / "bad.tar.gz"
    _tar(archive, [good, bad])
    before = sorted(p.name for p in root.rglob("*"))
    code, err = fail("import", str(archive), "--root", str(root))
    assert code == 2 and err.startswith(f"agentctl: {archive}: ") and "\n" not in err[:-1]
    assert sorted(p.name for p in root.rglob("*")) == before  # nothing imported, not even good
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.dates
def test_clear_needs_yes_without_a_tty(root: Path) -> None:
    code, _ = run("clear", "--root", str(root))
    assert code == 2 and (root / "notes.md").exists()
    assert run("clear", "--yes", "--root", str(root))[0] == 0
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == []


@pytest.mark.dates
def test_default_root_comes_from_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run("call", stdin='{"command":"create","path":"/memories/p.md","file_text":"p"}\n')
    assert code == 0 and json.loads(out)["ok"] is True
    assert (tmp_path / "memory" / "p.md").read_text() == "p"


# -- real processes ----------------------------------------------------------------------


@pytest.mark.slow
def test_subprocess_call_streams_and_exit_codes(root: Path) -> None:
    proc = subprocess.Popen(
        [*AGENTCTL, "memory", "call", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write('{"command": "view", "path": "/memories/notes.md"}\n')
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())  # answered before stdin is closed: flushed
    assert first["ok"] is True and first["result"].startswith("Here's the content")
    proc.stdin.write("garbage\n")
    proc.stdin.close()
    second = json.loads(proc.stdout.readline())
    assert second["ok"] is False
    assert proc.wait(30) == 0
    done = subprocess.run(
        [*AGENTCTL, "memory", "cat", "nope", "--root", str(root)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert without_root_line(done.stderr).strip() == (
        "agentctl: The path /memories/nope does not exist. Please provide a valid path."
    )


@pytest.mark.slow
def test_subprocess_view_pipes_raw_text_and_stays_light(root: Path) -> None:
    code = (
        "import sys\n"
        f"sys.argv = ['agentctl', 'memory', 'view', '--root', {str(root)!r}]\n"
        "from agentctl.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('anthropic', 'httpx', 'mcp') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    env = {**os.environ, "COLUMNS": "80"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.startswith("Here're the files and directories up to 2 levels deep in /memories")
    assert out.endswith("HEAVY=\n")
