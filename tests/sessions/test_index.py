"""The sessions index: written as runs close their transcripts, refreshed from the files'
sizes and times when stale or deleted, and the filters `sessions list` applies on it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.catalog import SessionSummary, summarize
from agentctl.sessions.index import Filters, index_path, listing, reindex


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def record(prompt: str, mtime: int | None) -> Path:
    """One recorded session (a scripted model), its transcript dated `mtime` (if given)."""
    result = agentctl.run(prompt, client=agentctl.ScriptedClient("Done."), memory_root="mem")
    path = sessions_dir() / f"{result.session_id}.jsonl"
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def fail(path: Path, kind: str, mtime: int) -> None:
    """Append the error event a failed resume of `path` would have written."""
    line = {"v": 1, "type": "event", "ts": 5.0, "event": {"event": "error", "kind": kind}}
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")
    os.utime(path, (mtime, mtime))


def ids(rows: list[SessionSummary]) -> list[str]:
    return [row.id for row in rows]


def test_a_run_writes_its_row_and_a_listing_reads_no_file() -> None:
    path = record("Summarise the kestrel outage.", None)
    assert index_path().is_file() and index_path().stat().st_mode & 0o777 == 0o600
    assert reindex() == 0  # the writer's row is current
    assert listing() == [summarize(path)]
    os.utime(path, (1_000, 1_000))
    assert reindex() == 1 and reindex() == 0


def test_the_writers_row_is_the_row_the_file_gives() -> None:
    path = record("Count the invoices.", 1_000)
    written = listing()
    index_path().unlink()
    assert listing() == written == [summarize(path)]
    assert written[0].turns == 1 and written[0].status == "end_turn"


def test_stale_rows_are_re_read_and_removed_files_dropped() -> None:
    first = record("Summarise the kestrel outage.", 1_000)
    second = record("Count the invoices.", 2_000)
    assert [r.status for r in listing()] == ["end_turn", "end_turn"]
    fail(first, "limit", 3_000)  # grew and is now the newest
    assert reindex() == 1
    assert ids(listing()) == [first.stem, second.stem]
    assert listing()[0].status == "limit"
    second.unlink()
    assert reindex() == 0 and ids(listing()) == [first.stem]


def test_a_deleted_or_damaged_index_is_rebuilt() -> None:
    paths = [record(f"Task {n}.", 1_000 + n) for n in range(3)]
    expected = [summarize(p) for p in reversed(paths)]
    assert listing() == expected
    index_path().unlink()
    assert reindex() == 3 and listing() == expected
    index_path().write_bytes(b"not a database" * 100)
    assert listing() == expected
    assert reindex() == 0  # the damaged file was replaced by a good index


def test_an_index_of_another_version_is_rebuilt(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctl.sessions import index

    record("Task.", 1_000)
    assert reindex() == 1
    monkeypatch.setattr(index, "SCHEMA", index.SCHEMA + 1)
    assert reindex() == 1 and reindex() == 0


@pytest.mark.dates
def test_filters_count_search_status_and_model() -> None:
    kestrel = record("Summarise the Kestrel outage.", 1_000)
    invoices = record("Count the invoices.", 2_000)
    newest = record("Find every KESTREL finding.", 3_000)
    fail(invoices, "limit", 2_000)
    assert ids(listing(Filters(count=2))) == [newest.stem, invoices.stem]
    assert ids(listing(Filters(search="kestrel"))) == [newest.stem, kestrel.stem]
    assert ids(listing(Filters(status="limit"))) == [invoices.stem]
    assert ids(listing(Filters(search="kestrel", count=1))) == [newest.stem]
    assert ids(listing(Filters(model="SONNET", status="end_turn"))) == [newest.stem, kestrel.stem]
    assert listing(Filters(model="no such model")) == []


def test_the_cli_filters() -> None:
    kestrel = record("Summarise the Kestrel outage.", 1_000)
    invoices = record("Count the invoices.", 2_000)
    fail(invoices, "limit", 2_000)
    result = CliRunner().invoke(app, ["sessions", "list", "--json", "--status", "end_turn"])
    assert result.exit_code == 0, result.output
    assert [row["session"] for row in json.loads(result.stdout)] == [kestrel.stem]
    none = CliRunner().invoke(app, ["sessions", "list", "--status", "api"])
    assert none.exit_code == 0 and none.stderr.startswith("no session matches 'api'")


def test_an_empty_transcript_is_not_listed_until_it_has_a_header() -> None:
    sessions_dir().mkdir(parents=True)
    empty = sessions_dir() / "20260101-000000-abcdef.jsonl"
    empty.write_bytes(b"")
    assert listing() == [] and reindex() == 0
    path = record("Task.", None)
    empty.write_bytes(path.read_bytes())
    os.utime(empty, (2_000, 2_000))
    assert reindex() == 1 and ids(listing()) == [path.stem, empty.stem]  # by mtime
