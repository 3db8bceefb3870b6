"""Bad input everywhere: each gets one clear line on stderr, a documented exit code, no traceback.

Subprocesses (real exit codes, real stderr) for configuration and file problems; the run loop
in-process against servers answering garbage; a full memory (tiny max_total_bytes) that the
model is told about while the run goes on.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentctl.sessions.transcript import list_sessions, read_records

from .helpers import (
    assert_store_consistent,
    expected_facts,
    invoke,
    make_workspace,
    ndjson,
    transcript_files,
)

AGENTCTL = [sys.executable, "-m", "agentctl"]

# name -> (files to write, argv after `agentctl`, exit code, a phrase the message must hold)
Setup = Callable[[Path], None]


def write(name: str, data: str | bytes) -> Setup:
    def setup(base: Path) -> None:
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return setup


def mkdir(name: str) -> Setup:
    return lambda base: (base / name).mkdir(parents=True, exist_ok=True)


TASK = write("task.md", "Collect every FINDING line.\n")
CASES: list[tuple[str, list[Setup], list[str], int, str]] = [
    ("profile-bad-toml", [TASK, write("p.toml", "max_turns = [\n")],
     ["run", "task.md", "--offline", "--profile", "p.toml"], 2, "profile p.toml: invalid TOML"),
    ("profile-bad-type", [TASK, write("p.toml", 'max_turns = "x"\n')],
     ["run", "task.md", "--offline", "--profile", "p.toml"], 2, "max_turns: expected an integer"),
    ("profile-unknown-key", [TASK, write("p.toml", "[context_editing.tool_uses]\nkepp = 3\n")],
     ["profile", "check", "p.toml"], 2, "kepp"),
    ("profile-is-a-directory", [TASK, mkdir("p.toml")],
     ["run", "task.md", "--offline", "--profile", "p.toml"], 2, "profile p.toml: not a file"),
    ("profile-missing", [TASK], ["run", "task.md", "--profile", "nope.toml"], 2, "nope.toml"),
    ("front-matter-bad-toml", [write("t.md", "+++\nmax_turns = \n+++\nhi\n")],
     ["run", "t.md", "--offline"], 2, "task t.md: front matter: invalid TOML"),
    ("front-matter-unclosed", [write("t.md", "+++\nmax_turns = 3\nhi\n")],
     ["run", "t.md", "--offline"], 2, "never closed"),
    ("front-matter-unknown-key", [write("t.md", "+++\nmax_turn = 3\n+++\nhi\n")],
     ["run", "t.md", "--offline"], 2, "did you mean 'max_turns'"),
    ("front-matter-bad-value",
     [write("t.md", "+++\n[context_editing.tool_uses]\nkeep = -4\n+++\nhi\n")],
     ["run", "t.md", "--offline"], 2, "keep"),
    ("task-not-utf8", [write("t.md", b"\xff\xfe\x00bad")], ["run", "t.md", "--offline"], 2,
     "cannot read it as UTF-8"),
    # Tests run as root, so chmod 000 would not stop a read: a directory stands in for it.
    ("task-is-a-directory", [mkdir("t.md")], ["run", "t.md", "--offline"], 2, "is a directory"),
    ("task-missing", [], ["run", "nope.md", "--offline"], 2, "nope.md"),
    ("task-empty", [write("t.md", "+++\nmax_turns = 3\n+++\n")], ["run", "t.md", "--offline"], 2,
     "the prompt is empty"),
    ("workspace-missing", [TASK], ["run", "task.md", "--offline", "--workspace", "nowhere"], 2,
     "nowhere"),
    ("memory-root-is-a-file", [TASK, write("rootfile", "x")],
     ["run", "task.md", "--offline", "--set", "memory.root=rootfile"], 2, "not a directory"),
    ("memory-view-root-is-a-file", [write("rootfile", "x")],
     ["memory", "view", "--root", "rootfile"], 2, "not a directory"),
    ("memory-root-under-a-file", [write("rootfile", "x")],
     ["memory", "view", "--root", "rootfile/m"], 2, "no such folder"),
    ("memory-import-garbage", [write("g.tar.gz", "garbage")],
     ["memory", "import", "g.tar.gz", "--root", "m"], 2, "not a readable tar archive"),
    ("memory-cat-missing-root", [], ["memory", "cat", "nope.md", "--root", "m"], 2,
     "no such folder"),
    ("memory-cat-missing", [write("m/a.md", "a")], ["memory", "cat", "nope.md", "--root", "m"], 2,
     "does not exist"),
    ("set-unknown-key", [TASK], ["run", "task.md", "--offline", "--set", "nope=1"], 2,
     "nope: unknown key"),
    ("set-bad-value", [TASK], ["run", "task.md", "--offline", "--set", "max_turns=-1"], 2,
     "must be an integer >= 1"),
    ("resume-unknown-session", [], ["run", "--resume", "nonexist"], 2, "session nonexist"),
    ("emulator-bad-faults", [], ["emulator", "serve", "--faults", "rate=7:500"], 2, "rate=7:500"),
    ("emulator-bad-script", [write("s.toml", "[[turn]]\nbogus = 1\n")],
     ["emulator", "serve", "--script", "s.toml"], 2, "s.toml"),
]  # fmt: skip


def assert_one_clear_line(stderr: str, phrase: str, prefix: str = "agentctl: ") -> None:
    assert "Traceback" not in stderr, stderr
    # `agentctl memory ...` names the folder it opened first (issue 13 #2): not an error line
    lines = [line for line in stderr.splitlines() if line.strip()]
    lines = lines[1:] if lines and lines[0].startswith("memory root: /") else lines
    assert len(lines) == 1 and lines[0].startswith(prefix), stderr
    assert phrase in lines[0], lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(("setups", "argv", "code", "phrase"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_bad_input_gets_one_line_and_its_exit_code(
    tmp_path: Path, setups: list[Setup], argv: list[str], code: int, phrase: str
) -> None:
    for setup in setups:
        setup(tmp_path)
    done = subprocess.run(
        [*AGENTCTL, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    assert_one_clear_line(done.stderr, phrase)


@pytest.mark.dates
def test_corrupt_transcript_lines_are_skipped_and_resume_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 3)
    first = invoke("run", str(task), "--offline", "--max-turns", "3", "--quiet")
    assert first.exit_code == 3
    (path,) = transcript_files()
    with path.open("a") as f:
        f.write('{"v": 1, "type": "mess')  # a record cut by a crash
    resumed = invoke("run", "--resume", "last", "--json", "--quiet", "--max-turns", "40")
    assert resumed.exit_code == 0, resumed.output
    assert all(fact in ndjson(resumed.stdout)[-1]["text"] for fact in expected_facts(3))
    path.write_text("not json at all\n")
    broken = invoke("run", "--resume", "last")
    assert broken.exit_code == 2 and "Traceback" not in broken.output
    assert broken.stderr.startswith("agentctl: ") and len(broken.stderr.splitlines()) == 1


@pytest.mark.dates
def test_full_memory_is_told_to_the_model_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk, simulated by a tiny memory.max_total_bytes: every over-limit write is an
    # is_error tool result naming the limit, nothing partial is written, the run still answers.
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 3)
    result = invoke("run", str(task), "--offline", "--json", "--quiet",
                    "--set", "memory.max_total_bytes=120")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert all(fact in ndjson(result.stdout)[-1]["text"] for fact in expected_facts(3))
    refused = [
        r["content"] for r in read_records(transcript_files()[0])
        if r["type"] == "tool_result" and r["name"] == "memory" and r["is_error"]
    ]  # fmt: skip
    assert refused and all("over the limit" in str(c) and "nothing was written" in str(c)
                           for c in refused)  # fmt: skip
    files = assert_store_consistent(tmp_path / "mem")
    assert sum(files.values()) <= 120


class Garbage(http.server.BaseHTTPRequestHandler):
    """Answers every POST with the class's canned status, content type and body."""

    status, ctype, body = 200, "text/html", b"<html>oops</html>"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(self.status)
        self.send_header("content-type", self.ctype)
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def garbage_server(status: int, ctype: str, body: bytes) -> Iterator[str]:
    handler = type("H", (Garbage,), {"status": status, "ctype": ctype, "body": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


GARBAGE = [
    ("html-200", 200, "text/html", b"<html>oops</html>"),
    ("json-wrong-shape", 200, "application/json", b'{"hello": "world"}'),
    ("sse-nonsense", 200, "text/event-stream", b"event: what\ndata: {not json\n\n"),
    ("empty-200", 200, "text/event-stream", b""),
    ("html-502", 502, "text/html", b"<html>Bad Gateway</html>"),
    ("json-400-odd", 400, "application/json", json.dumps({"error": 5}).encode()),
    ("binary", 200, "application/octet-stream", os.urandom(64)),
]


@pytest.mark.parametrize(("status", "ctype", "body"), [g[1:] for g in GARBAGE],
                         ids=[g[0] for g in GARBAGE])  # fmt: skip
@pytest.mark.slow
def test_a_server_answering_garbage_is_one_api_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, ctype: str, body: bytes
) -> None:
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 2)
    with garbage_server(status, ctype, body) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke("run", str(task), "--quiet", "--set", "api.max_retries=1")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    # A run reports its stop through the renderer: `error (api): ...` (docs/run.md)
    assert_one_clear_line(result.stderr, "API ", prefix="error (api): ")
    # No answer ever came: nothing to continue, so no session is recorded and none offered.
    assert "--resume" not in result.stderr
    assert list_sessions() == []
