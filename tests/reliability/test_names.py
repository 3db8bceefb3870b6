"""Names and nesting (issue 20): a file name that is not UTF-8 is shown and recorded safely,
whatever its bytes, and the folder stays usable (run, resume, sessions show)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.helpers import invoke, make_workspace, only_session, transcript_files

LATIN1 = os.fsdecode(b"caf\xe9.txt")  # a Latin-1 name: b"caf\xe9.txt" on disk


@pytest.mark.parametrize("where", ["workspace", "mem"])
@pytest.mark.dates
def test_a_name_that_is_not_utf8_is_recorded_safely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Before the fix: a UnicodeEncodeError traceback when the transcript was written (and
    again on every resume); the folder could never be used."""
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 2)
    (tmp_path / where).mkdir(exist_ok=True)
    (tmp_path / where / LATIN1).write_bytes(b"FINDING 9: the value is 9999\n")
    done = invoke("run", str(task), "--offline", "--quiet")
    assert done.exit_code == 0, done.output
    assert "FINDING 1" in done.stdout
    if where == "workspace":  # read by the name as listed: caf\\xe9.txt
        assert "FINDING 9" in done.stdout
    shown = invoke("sessions", "show", only_session())
    assert shown.exit_code == 0, shown.output
    again = [invoke("stats", only_session())]
    assert again[0].exit_code == 0, again[0].output
    if where == "workspace":
        assert "caf\\xe9.txt" in shown.stdout  # the name as its bytes read
    for text in (done.stdout, shown.stdout, *(result.stdout for result in again)):
        text.encode("utf-8")  # nothing unprintable reached the output


@pytest.mark.dates
def test_a_batch_folder_whose_name_is_not_utf8_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the fix: a UnicodeEncodeError traceback when the result line was written."""
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 1)
    out = tmp_path / os.fsdecode(b"out-\xe9")
    for flags in ((), ("--json",)):
        done = invoke("batch", str(task), "--offline", "--quiet", "--out", str(out), *flags)
        assert done.exit_code == 0, done.output
        assert "Traceback" not in done.output
        (out / "batch.json").unlink()  # the next round starts a batch in the same folder
        (out / "results.jsonl").unlink()
    done = invoke("batch", str(task), "--offline", "--quiet", "--out", str(out))
    again = invoke("batch", "--resume", str(out), "--json")
    assert again.exit_code == 0, again.output
    assert '"ok": 1' in again.stdout


DEEP_TOML = "a = " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_deep_front_matter_is_one_line(tmp_path: Path) -> None:
    """Before the fix: a RecursionError traceback."""
    task = tmp_path / "task.md"
    task.write_text(f"+++\n{DEEP_TOML}+++\nSay hi.\n")
    done = invoke("run", str(task), "--offline")
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: task {task}: front matter: ")
    assert "nested too deeply" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_deep_jsonl_line_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"id": "a", "task": "x"}\n' + DEEP_JSON + "\n")
    done = invoke("batch", str(source), "--offline", "--out", str(tmp_path / "out"))
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: batch source {source}:2: ")
    assert "nested too deeply" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_deep_results_line_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"id": "a", "task": "x"}\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "batch.json").write_text(f'{{"format": "agentctl-batch-1", "source": "{source}"}}')
    (out / "results.jsonl").write_text(DEEP_JSON + "\n")
    done = invoke("batch", "--resume", str(out))
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"agentctl: {out / 'results.jsonl'}:1: ")


@pytest.mark.dates
def test_a_deep_transcript_line_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = invoke("run", str(make_workspace(tmp_path, 1)), "--offline", "--quiet")
    assert done.exit_code == 0, done.output
    session = only_session()
    (path,) = transcript_files()
    with path.open("a") as handle:
        handle.write(DEEP_JSON + "\n")
    shown = invoke("sessions", "show", session)
    assert shown.exit_code == 2, shown.output
    assert "is not a JSON record" in shown.stderr and len(shown.stderr.splitlines()) == 1
