"""Shared checks for the reliability suite: workspaces, runs, and memory-store consistency."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.memory.journal import read_entries
from agentctl.sessions.transcript import read_records

M = "/memories"
TMP_MARK = ".agentctl-tmp-"
# Commands whose journal entry carries the file's full size after the write.
SIZED = {"create", "str_replace", "insert", "edit"}


def make_workspace(base: Path, files: int = 4, memory: str = "mem") -> Path:
    """A task file and a workspace of `files` notes, each with one FINDING; returns the task."""
    ws = base / "workspace"
    ws.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (ws / f"note{i}.txt").write_text(f"FINDING {i}: the value is {1000 + i * 7}\nfiller\n")
    task = base / "task.md"
    task.write_text(f'+++\n[memory]\nroot = "{memory}"\n+++\nCollect every FINDING line.\n')
    return task


@contextmanager
def emulator_process(cwd: Path, faults: str) -> Iterator[tuple[str, list[str]]]:
    """`agentctl emulator serve --faults FAULTS` as a subprocess.

    Yields its base URL and a list that holds the server's stderr once it has stopped.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentctl", "emulator", "serve", "--faults", faults],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
    )  # fmt: skip
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    stderr: list[str] = []
    try:
        yield url, stderr
    finally:
        proc.terminate()
        stderr.append(proc.communicate(timeout=30)[1])


def expected_facts(files: int) -> list[str]:
    """The facts a complete answer must contain."""
    return [f"FINDING {i}: the value is {1000 + i * 7}" for i in range(files)]


def invoke(*args: str, input: str | None = None) -> Result:
    """`agentctl ARGS` in-process (CliRunner keeps stderr apart)."""
    return CliRunner().invoke(app, list(args), input=input)


def transcript_files() -> list[Path]:
    return sorted(sessions_dir().glob("*.jsonl"))


def only_session() -> str:
    """The id of the one session recorded under AGENTCTL_HOME."""
    files = transcript_files()
    assert len(files) == 1, files
    return str(read_records(files[0])[0]["session"])


def last_result(session: str) -> dict[str, Any] | None:
    """The last `result` event of a session's transcript, if the run finished."""
    path = sessions_dir() / f"{session}.jsonl"
    found = None
    for record in read_records(path):
        if record["type"] == "event" and record["event"]["event"] == "result":
            found = record["event"]
    return found


@dataclass(frozen=True)
class Tree:
    """The regular files under a memory root (agentctl's own files left out): path -> size."""

    files: dict[str, int]
    temp_files: list[str]


def scan(root: Path) -> Tree:
    files: dict[str, int] = {}
    temps: list[str] = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".agentctl")]  # the history's blobs
        for name in names:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if name.startswith(TMP_MARK):
                temps.append(rel)
            elif not name.startswith(".agentctl"):
                files[f"{M}/{rel}"] = full.lstat().st_size
    return Tree(files, temps)


def replay_journal(entries: list[dict[str, Any]]) -> dict[str, int]:
    """The file set (path -> size) the journal's mutating entries produce, from an empty root."""
    tree: dict[str, int] = {}
    for entry in entries:
        command, path = entry["command"], entry["path"]
        if command in SIZED:
            tree[path] = int(entry["bytes"])
        elif command == "delete":
            tree = {p: s for p, s in tree.items() if not _under(p, path)}
        elif command == "rename":
            tree = {_moved(p, path, entry["new_path"]): s for p, s in tree.items()}
        elif command == "clear":
            tree = {}
        elif command == "import":  # every file it wrote, with its size
            tree.update({p: int(s) for p, s in entry["files"].items()})
        elif command == "recover":  # an interrupted change: what it left under its paths
            gone = [p for p in (path, entry.get("new_path")) if p]
            tree = {p: s for p, s in tree.items() if not any(_under(p, g) for g in gone)}
            tree.update({p: int(s) for p, s in entry["files"].items()})
        else:
            raise AssertionError(f"journal entry not accounted for: {entry}")
    return tree


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def _moved(path: str, old: str, new: str) -> str:
    return new + path[len(old) :] if _under(path, old) else path


def assert_store_consistent(root: Path, *, killed: bool = False) -> dict[str, int]:
    """No temp file left, every file UTF-8, and the journal replays to exactly the tree.

    `killed`, right after a kill -9: a temp file of the dead writer may remain (the next store
    to write sweeps it). The change in flight is journaled all the same (its intent line comes
    first, and reading settles it from the disk), so the match is exact then too.
    """
    tree = scan(root)
    assert killed or tree.temp_files == [], f"temp files left behind: {tree.temp_files}"
    for path in tree.files:
        (root / path.removeprefix(M + "/")).read_bytes().decode("utf-8")
    replayed = replay_journal(read_entries(root))
    differ = {
        p for p in replayed.keys() | tree.files.keys() if replayed.get(p) != tree.files.get(p)
    }
    assert not differ, f"journal and tree differ at {sorted(differ)}"
    return tree.files


def notes_text(root: Path) -> str:
    """All memory files' text, concatenated (the default policy keeps one notes file)."""
    return "".join(p.read_text() for p in sorted(root.rglob("*.md")))


def private_mode_problems(top: Path) -> list[str]:
    """Every file or directory below `top` whose mode lets group or others in."""
    bad = []
    for dirpath, dirs, names in os.walk(top):
        for name in dirs + names:
            full = Path(dirpath) / name
            mode = stat.S_IMODE(full.lstat().st_mode)
            if mode & 0o077:
                bad.append(f"{full.relative_to(top)} {oct(mode)}")
    return bad


def ndjson(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded server on 127.0.0.1 with `handler` (hostile servers of the tests); its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
