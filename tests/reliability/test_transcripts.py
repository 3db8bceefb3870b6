"""Hostile and damaged transcripts: cut lines, a run that owns the session, copied and edited
transcripts, malformed records. Each ends in a readable session or one clear line (exit 2)."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentctl.errors import AgentctlError, UsageError
from agentctl.home import sessions_dir
from agentctl.runner import execute, plan_resume
from agentctl.sessions import report
from agentctl.sessions.as_seen import as_seen_report
from agentctl.sessions.catalog import export_session, summarize
from agentctl.sessions.resume import load_run, resumable_history
from agentctl.sessions.transcript import TranscriptWriter, load_session, read_records

from .helpers import expected_facts, invoke, make_workspace, ndjson, transcript_files

CUT = '{"v": 1, "type": "message", "index": 9, "mess'


def stopped_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run stopped by max_turns=2 (resumable); returns its transcript."""
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 3)
    first = invoke("run", str(task), "--offline", "--max-turns", "2", "--quiet")
    assert first.exit_code == 3, first.output
    (path,) = transcript_files()
    return path


def resume(ref: str = "last") -> Any:
    return invoke("run", "--resume", ref, "--json", "--max-turns", "40")


def assert_one_line(result: Any, code: int, *phrases: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and len(result.stderr.splitlines()) == 1
    assert all(phrase in result.stderr for phrase in phrases), result.stderr


@pytest.mark.slow
def test_a_cut_last_line_is_removed_before_resuming_and_the_session_stays_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = stopped_run(tmp_path, monkeypatch)
    whole = path.read_bytes()
    path.write_bytes(whole + CUT.encode())
    shown = invoke("sessions", "show", "last")
    assert shown.exit_code == 0 and "was cut (by a crash or a full disk)" in shown.stderr
    resumed = resume()
    assert resumed.exit_code == 0, resumed.output
    assert all(fact in ndjson(resumed.stdout)[-1]["text"] for fact in expected_facts(3))
    for command in (["sessions", "show"], ["stats"]):
        shown = invoke(*command, "last")
        assert shown.exit_code == 0, shown.output
    assert path.read_bytes().startswith(whole) and CUT.encode() not in path.read_bytes()
    warnings = [line for line in resumed.stderr.splitlines() if "was cut" in line]
    assert len(warnings) == 1 and f"line {len(whole.splitlines()) + 1}" in warnings[0]


@pytest.mark.slow
def test_a_second_run_of_a_session_that_a_run_owns_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = stopped_run(tmp_path, monkeypatch)
    before = path.read_bytes()
    notes = sorted((tmp_path / "mem").rglob("*"))
    with TranscriptWriter(path):  # another run owns the session
        second = resume()
    assert_one_line(second, 2, path.stem, "another agentctl run is using it")
    assert path.read_bytes() == before and sorted((tmp_path / "mem").rglob("*")) == notes
    assert resume().exit_code == 0  # once that run is over, the session continues


@pytest.mark.slow
def test_resume_appends_to_the_file_resumed_never_to_the_id_it_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = stopped_run(tmp_path, monkeypatch)
    before = original.read_bytes()
    records = [json.loads(line) for line in before.decode().splitlines()]
    records[0]["session"] = "../../escaped"
    copy = sessions_dir() / "copied.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in records))
    resumed = resume("copied")
    assert resumed.exit_code == 0, resumed.output
    assert original.read_bytes() == before
    assert any(r["type"] == "resume" for r in read_records(copy))
    assert not [*tmp_path.rglob("escaped*"), *sessions_dir().parent.rglob("escaped*")]
    assert sorted(p.name for p in transcript_files()) == sorted(["copied.jsonl", original.name])


Edit = Callable[[list[dict[str, Any]]], None]


def _at(kind: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    """Apply `change` to the first record of type `kind`."""

    def edit(records: list[dict[str, Any]]) -> None:
        change(next(r for r in records if r.get("type") == kind))

    return edit


MALFORMED: list[tuple[str, Edit, str]] = [
    ("no-type", _at("request", lambda r: r.pop("type")), "no `type` string"),
    ("index-text", _at("message", lambda r: r.update(index="x")), "`index` must be an integer"),
    ("index-float", _at("message", lambda r: r.update(index=1.5)), "`index` must be an integer"),
    ("index-gap", _at("message", lambda r: r.update(index=7)), "skips past the history"),
    ("turn-text", _at("response", lambda r: r.update(turn="3")), "`turn` must be an integer"),
    ("message-list", _at("message", lambda r: r.update(message=[])), "`message` must be an"),
    ("event-text", _at("event", lambda r: r.update(event="turn")), "`event` must be an object"),
    ("header-profile", _at("session", lambda r: r.update(profile=3)), "`profile` must be"),
    ("ts-text", _at("request", lambda r: r.update(ts="noon")), "`ts` must be a number"),
    ("newer", _at("event", lambda r: r.update(v=2)), "format version 2 is newer"),
    ("array", lambda records: records.insert(2, []), "not a JSON object"),  # type: ignore[arg-type]
]


@pytest.mark.slow
def test_every_malformed_record_is_one_line_naming_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = stopped_run(tmp_path, monkeypatch)
    clean = [json.loads(line) for line in path.read_text().splitlines()]
    for name, edit, phrase in MALFORMED:
        records = json.loads(json.dumps(clean))
        edit(records)
        line = next(n for n, (a, b) in enumerate(zip(records, clean, strict=False), 1) if a != b)
        damaged = sessions_dir() / f"{name}.jsonl"
        damaged.write_text("".join(json.dumps(r) + "\n" for r in records))
        for argv in (["sessions", "show"], ["stats"], ["run", "--resume"]):
            assert_one_line(invoke(*argv, name), 2, f"{damaged}: line {line}", phrase)
        damaged.unlink()
    listed = invoke("sessions", "list")
    assert listed.exit_code == 0, listed.output


@pytest.mark.dates
def test_a_damaged_file_is_listed_as_unreadable_and_the_others_still_are(
    tmp_path: Path,
) -> None:
    good = sessions_dir() / "20260101-000000-aaaaaa.jsonl"
    with TranscriptWriter(good) as writer:
        writer.write("session", session=good.stem, task="# Notes\nread them", model="m")
    shutil.copy(good, sessions_dir() / "bad.jsonl")
    with (sessions_dir() / "bad.jsonl").open("a") as f:
        f.write('{"v": 1, "type": "event", "event": {"event": "turn", "turn": "x"}}\n')
        f.write('{"v": 1, "type": "event", "event": {"event": "result"}}\n')
    listed = invoke("sessions", "list", "--json")
    assert listed.exit_code == 0, listed.output
    rows = {row["session"]: row for row in json.loads(listed.stdout)}
    assert rows[good.stem]["task"] == "Notes" and rows["bad"]["status"] == "unreadable"


@pytest.mark.slow
def test_a_resume_read_before_another_run_wrote_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Resume B reads the session, resume A runs to its end, then B starts: B's history is stale.
    path = stopped_run(tmp_path, monkeypatch)
    stale = plan_resume("last", offline=True)
    assert resume().exit_code == 0
    after = path.read_bytes()
    with pytest.raises(UsageError, match="wrote to it after"):
        execute(stale)
    assert path.read_bytes() == after


@pytest.mark.dates
def test_a_transcript_a_run_owns_is_not_removed(tmp_path: Path) -> None:
    path = sessions_dir() / "20260101-000000-aaaaaa.jsonl"
    with TranscriptWriter(path) as writer:
        writer.write("session", session=path.stem, task="t")
        removed = invoke("sessions", "rm", path.stem, "--yes")
    assert_one_line(removed, 2, "a run is using it")
    assert path.exists()
    assert invoke("sessions", "rm", path.stem, "--yes").exit_code == 0 and not path.exists()


WRONG: list[Any] = [None, "x", -1, 1.5, [], {}, True, [1], {"a": 1}]


def _places(value: Any, where: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a record (the first 3 items of each list)."""
    if isinstance(value, dict):
        items: Any = value.items()
    else:
        items = enumerate(value[:3]) if isinstance(value, list) else ()
    found = []
    for key, inner in items:
        found.append((*where, key))
        found.extend(_places(inner, (*where, key)))
    return found


def _damage(records: list[dict[str, Any]], rng: random.Random) -> None:
    """Give one random field of one random record a wrong type, or remove it."""
    record = rng.choice(records)
    *parents, key = rng.choice(_places(record))
    target: Any = record
    for parent in parents:
        target = target[parent]
    if isinstance(target, dict) and rng.random() < 0.3:
        del target[key]
    else:
        target[key] = rng.choice(WRONG)


@pytest.mark.slow
def test_a_field_of_the_wrong_type_anywhere_is_a_clear_error_or_harmless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reader of a damaged transcript gives a one-line error (exit 2) or a result."""
    clean = [
        json.loads(line) for line in stopped_run(tmp_path, monkeypatch).read_text().splitlines()
    ]
    rng = random.Random(20261201)
    for n in range(60):
        records = json.loads(json.dumps(clean))
        _damage(records, rng)
        path = sessions_dir() / f"damaged-{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        for read in READERS:
            try:
                read(path.stem)
            except AgentctlError as err:
                assert "\n" not in str(err) and err.exit_code == 2, err
        path.unlink()


def _resume_history(ref: str) -> object:
    return resumable_history(load_run(ref))


def _stats(ref: str) -> object:
    return report.stats_of(load_session(ref)).to_json()


def _as_seen(ref: str) -> object:
    return as_seen_report(load_session(ref), 2)


def _summary(ref: str) -> object:
    return summarize(sessions_dir() / f"{ref}.jsonl")


READERS = [
    _resume_history,
    _stats,
    _as_seen,
    _summary,
    lambda ref: export_session(load_session(ref)),
]
