"""Names and nesting (issue 20): a file name that is not UTF-8 is shown and recorded safely,
whatever its bytes, and the folder stays usable (run, resume, sessions show)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.helpers import invoke, make_workspace, only_session

LATIN1 = os.fsdecode(b"caf\xe9.txt")  # a Latin-1 name: b"caf\xe9.txt" on disk


@pytest.mark.parametrize("where", ["workspace", "mem"])
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
