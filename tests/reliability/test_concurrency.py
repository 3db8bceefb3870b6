"""Eight processes on one memory root at once: no lost update, no corrupt file, journal complete.

Each `agentctl memory call` process inserts its own lines into one shared file, bumps its own
counter line in another shared file with str_replace, creates and renames its own files, and
views; then every acknowledged change must be on disk exactly once and in the journal.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentctl.memory.journal import read_entries
from agentctl.memory.store import MemoryStore
from agentctl.sessions.transcript import read_records

from .helpers import assert_store_consistent, expected_facts, make_workspace, transcript_files

M = "/memories"
WORKERS = 8
ROUNDS = 25
AGENTCTL = [sys.executable, "-m", "agentctl"]


def worker_commands(w: int) -> list[dict[str, Any]]:
    cmds: list[dict[str, Any]] = []
    for i in range(ROUNDS):
        cmds += [
            {"command": "insert", "path": f"{M}/shared.md", "insert_line": 0,
             "insert_text": f"w{w}-{i}\n"},
            {"command": "str_replace", "path": f"{M}/counters.md", "old_str": f"w{w}:{i}\n",
             "new_str": f"w{w}:{i + 1}\n"},
            {"command": "view", "path": f"{M}/shared.md"},
        ]  # fmt: skip
        if i % 5 == 0:
            cmds += [
                {"command": "create", "path": f"{M}/w{w}/n{i}.md", "file_text": f"{w} {i}\n"},
                {"command": "rename", "old_path": f"{M}/w{w}/n{i}.md",
                 "new_path": f"{M}/done/w{w}-n{i}.md"},
            ]  # fmt: skip
    return cmds


def start_worker(root: Path, w: int, commands: Path) -> subprocess.Popen[str]:
    with commands.open() as stdin:
        return subprocess.Popen(
            [*AGENTCTL, "memory", "call", "--root", str(root), "--session", f"w{w}"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.mark.slow
def test_eight_memory_call_processes_lose_no_update(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = MemoryStore(root, session="setup")
    store.execute({"command": "create", "path": f"{M}/shared.md", "file_text": ""})
    counters = "".join(f"w{w}:0\n" for w in range(WORKERS))
    store.execute({"command": "create", "path": f"{M}/counters.md", "file_text": counters})
    inputs = [worker_commands(w) for w in range(WORKERS)]
    files = [tmp_path / f"w{w}.jsonl" for w in range(WORKERS)]
    for path, cmds in zip(files, inputs, strict=True):
        path.write_text("".join(json.dumps(c) + "\n" for c in cmds))
    procs = [start_worker(root, w, files[w]) for w in range(WORKERS)]
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "Traceback" not in err, err
        answers.append([json.loads(line) for line in out.splitlines()])
    for cmds, outs in zip(inputs, answers, strict=True):
        assert len(outs) == len(cmds)
        assert all(o["ok"] for o in outs), [o for o in outs if not o["ok"]][:3]
    shared = (root / "shared.md").read_text().splitlines()
    expected = [f"w{w}-{i}" for w in range(WORKERS) for i in range(ROUNDS)]
    assert Counter(shared) == Counter(expected)  # every acknowledged insert, exactly once
    assert (root / "counters.md").read_text() == "".join(f"w{w}:{ROUNDS}\n" for w in range(WORKERS))
    tree = assert_store_consistent(root)
    assert len(tree) == 2 + WORKERS * len(range(0, ROUNDS, 5))
    sessions = Counter(e["session"] for e in read_entries(root))
    mutating = sum(1 for c in inputs[0] if c["command"] != "view")
    assert sessions == {"setup": 2, **{f"w{w}": mutating for w in range(WORKERS)}}
    order = [e["session"] for e in read_entries(root)]
    switches = sum(a != b for a, b in itertools.pairwise(order))
    assert switches > 2 * WORKERS  # the processes really ran interleaved
    assert not os.listdir(root / "w0")  # renamed away; the directory stays


def acknowledged_lines(records: list[dict[str, Any]]) -> Counter[str]:
    """Lines each successful memory create / str_replace of a transcript added (net)."""
    added: Counter[str] = Counter()
    for r in records:
        if r["type"] != "tool_result" or r["name"] != "memory" or r["is_error"]:
            continue
        cmd = r["input"]
        if cmd["command"] == "create":
            added.update(cmd["file_text"].splitlines())
        elif cmd["command"] == "str_replace":
            added.update(cmd["new_str"].splitlines())
            added.subtract(cmd["old_str"].splitlines())
    return added


@pytest.mark.slow
def test_eight_offline_runs_share_one_notes_file_and_lose_nothing(tmp_path: Path) -> None:
    # Same task text = same notes file: eight agents append to it at once (hostile on purpose).
    files = 8
    make_workspace(tmp_path, files)
    tasks = []
    for a in range(WORKERS):
        (tmp_path / f"a{a}").mkdir()
        tasks.append(tmp_path / f"a{a}" / "task.md")
        tasks[-1].write_text(
            f'+++\nworkspace = "{tmp_path / "workspace"}"\n[memory]\nroot = "{tmp_path / "mem"}"\n'
            "+++\nCollect every FINDING line.\n"
        )
    procs = [
        # The tasks name a shared memory root outside their folders: --trust-task says it's ok.
        subprocess.Popen([*AGENTCTL, "run", str(t), "--offline", "--quiet", "--trust-task"],
                         text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for t in tasks
    ]  # fmt: skip
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0 and err == "", err
        assert all(fact in out for fact in expected_facts(files)), out
    assert_store_consistent(tmp_path / "mem")
    (notes,) = (tmp_path / "mem").glob("*.md")
    acked: Counter[str] = Counter()
    for path in transcript_files():
        acked.update(acknowledged_lines(read_records(path)))
    assert len(transcript_files()) == WORKERS
    # Every acknowledged edit is in the file, each as many times as it was acknowledged.
    assert +acked == Counter(notes.read_text().splitlines())
