"""Runs under injected API faults (seeded, up to 30% of requests): finish or stop cleanly, resume.

Every run either ends with the full answer or exits 1 with one line naming how to resume; the
resume against a fault-free emulator completes it; in every case the memory store is intact
(no temp file, journal replays to the tree, every workspace file noted exactly once).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import Result

from agentctl.emulator import running

from .helpers import (
    assert_store_consistent,
    expected_facts,
    invoke,
    make_workspace,
    ndjson,
    notes_text,
    only_session,
)

FILES = 4
KEY = "test-key"
# (id, fault spec, api.max_retries). max_retries=1 makes some runs give up (and resume).
CASES = [
    ("429-retry-after", "rate=0.3:429:0.05,seed=1", 4),
    ("529-500", "rate=0.3:529|500,seed=2", 4),
    ("hang", "rate=0.2:hang:5,seed=8", 2),
    ("drop", "rate=0.3:drop|drop:1|drop:5,seed=6", 4),
    ("malformed", "rate=0.3:malformed,seed=5", 4),
    ("streamerror", "rate=0.3:streamerror|streamerror:1,seed=6", 4),
    ("mix-gives-up-1", "rate=0.3:429:0.05|529|500|drop|malformed,seed=11", 0),
    ("mix-gives-up-2", "rate=0.3:429:0.05|529|500|hang:5|drop|malformed,seed=12", 0),
    ("mix-gives-up-3", "rate=0.3:529|drop|malformed|streamerror,seed=13", 0),
    ("hang-gives-up", "hang:5@5", 0),
]


def run_with_faults(
    task: Path, spec: str, retries: int, mp: pytest.MonkeyPatch
) -> tuple[Result, int]:
    """The run's result and how many requests the emulator received."""
    with running(faults=spec) as emu:
        mp.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        mp.setenv("ANTHROPIC_API_KEY", KEY)
        result = invoke(
            "run", str(task), "--json", "--quiet", "--set", f"api.max_retries={retries}",
            "--set", "api.timeout_s=1",
        )  # fmt: skip
        return result, len(emu.requests)


def resume_fault_free(session: str, mp: pytest.MonkeyPatch) -> Result:
    with running() as emu:
        mp.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        return invoke("run", "--resume", session, "--json", "--quiet")


def assert_clean_stop(result: Result) -> None:
    """Exit 1, one line on stderr naming the API error and how to resume, no traceback."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    # --json --quiet: the plain renderer's error line is the only stderr output.
    assert len(lines) == 1 and lines[0].startswith("error (api): API "), lines
    assert "agentctl run --resume" in lines[0] and "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "retries"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fault_run_finishes_or_stops_cleanly_then_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, retries: int
) -> None:
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, FILES)
    result, requests = run_with_faults(task, spec, retries, monkeypatch)
    turns = [e for e in ndjson(result.stdout) if e["event"] == "turn"]
    assert requests > len(turns)  # faults were injected (and answered by a retry or a stop)
    if retries == 0:  # no retry allowed: these seeds hit a fault before the end
        assert result.exit_code == 1
    assert_store_consistent(tmp_path / "mem")
    if result.exit_code != 0:
        assert_clean_stop(result)
        result = resume_fault_free(only_session(), monkeypatch)
    assert result.exit_code == 0, result.output
    answer = ndjson(result.stdout)[-1]
    assert answer["event"] == "result" and answer["stop_reason"] == "end_turn"
    for fact in expected_facts(FILES):
        assert fact in answer["text"]
    assert_store_consistent(tmp_path / "mem")
    notes = notes_text(tmp_path / "mem")
    # every file noted once: no edit lost, none doubled by a retry or the resume
    assert [notes.count(f"note{i}.txt:") for i in range(FILES)] == [1] * FILES
