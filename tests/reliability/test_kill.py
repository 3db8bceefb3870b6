"""kill -9 of a run subprocess at seeded random points, then `--resume`: it finishes, memory holds.

The kill lands after a random number of requests plus a random delay of up to 60 ms, so it hits
the wait for a response, the tool calls (memory writes) and the transcript appends alike.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentctl.emulator import Emulator, running
from agentctl.home import sessions_dir

from .helpers import (
    assert_store_consistent,
    expected_facts,
    invoke,
    last_result,
    make_workspace,
    ndjson,
    notes_text,
    only_session,
    scan,
)

FILES = 8  # about 13 turns


def wait_for_requests(emu: Emulator, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while len(emu.requests) < count and proc.poll() is None:
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.002)


def start_run(task: Path, base_url: str) -> subprocess.Popen[str]:
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key"}
    return subprocess.Popen(
        [sys.executable, "-m", "agentctl", "run", str(task), "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_kill_9_then_resume_finishes_with_memory_consistent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.chdir(tmp_path)
    draw = random.Random(seed)
    task = make_workspace(tmp_path, FILES)
    with running() as emu:
        proc = start_run(task, emu.base_url)
        wait_for_requests(emu, draw.randint(2, 12), proc)
        time.sleep(draw.uniform(0, 0.06))
        proc.send_signal(signal.SIGKILL)
        _out, err = proc.communicate(timeout=20)
        # A fast machine may finish the last turns before the kill: then the run ended well.
        assert proc.returncode in (-signal.SIGKILL, 0), err
        assert_store_consistent(tmp_path / "mem", killed=True)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        session = only_session()
        finished = last_result(session)  # the kill may land after the answer was recorded
        assert finished is not None or proc.returncode != 0
        resumed = invoke("run", "--resume", session, "--json", "--quiet")
    if finished is not None:
        assert resumed.exit_code == 2 and "already finished" in resumed.stderr
        answer = finished
    else:
        assert resumed.exit_code == 0, resumed.output
        answer = ndjson(resumed.stdout)[-1]
    assert answer["event"] == "result"
    for fact in expected_facts(FILES):
        assert fact in answer["text"]
    # The resumed run's writes sweep the temp file; a change cut before its journal line
    # stays unjournaled unless a later write to the same file records its size again.
    files = assert_store_consistent(tmp_path / "mem", killed=True)
    assert scan(tmp_path / "mem").temp_files == [] and len(files) == 1
    notes = notes_text(tmp_path / "mem")
    assert [notes.count(f"note{i}.txt:") for i in range(FILES)] == [1] * FILES


def cut_after_memory_result(path: Path, turn: int) -> None:
    """Keep the transcript up to turn `turn`'s memory result: a kill while read_file ran."""
    kept = []
    for line in path.read_text().splitlines(keepends=True):
        kept.append(line)
        record = json.loads(line)
        if record["type"] == "tool_result" and record["turn"] == turn:
            assert record["name"] == "memory"
            break
    path.write_text("".join(kept))


@pytest.mark.dates
def test_kill_during_a_read_then_resume_still_finds_that_files_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Deterministic form of a kill -9 landing between a memory write and the read_file of the
    # same turn: the resumed run gets an is_error "interrupted ... call it again" result.
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, FILES)
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        first = invoke("run", str(task), "--max-turns", "5", "--quiet")
        assert first.exit_code == 3, first.output
        session = only_session()
        cut_after_memory_result(sessions_dir() / f"{session}.jsonl", 5)
        resumed = invoke("run", "--resume", session, "--json", "--quiet", "--max-turns", "40")
    assert resumed.exit_code == 0, resumed.output
    assert_store_consistent(tmp_path / "mem")
    text = ndjson(resumed.stdout)[-1]["text"]
    assert [fact in text for fact in expected_facts(FILES)] == [True] * FILES, text
