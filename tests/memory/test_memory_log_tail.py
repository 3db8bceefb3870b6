"""`memory log` reads the journal from its end, across both generations, and shows what the
whole-history reader shows, newest first."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentctl import clock
from agentctl.cli.main import app
from agentctl.memory.journal import (
    JOURNAL_NAME,
    OLDER_NAME,
    newest_entries,
    read_entries,
    read_history,
)
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

M = "/memories"
MOMENT = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)  # of a `recover` record's time

# One journal line: an outcome (some longer than the reader's 64 KiB chunk), an intent, a
# base record, an empty object, a line that is not JSON, or an empty line.
_SESSIONS = st.sampled_from([None, "s1", "s2"])
_OUTCOME = st.builds(
    lambda n, s, pad: {"command": "create", "path": f"{M}/f{n}" + "x" * pad, "session": s},
    st.integers(0, 999), _SESSIONS, st.sampled_from([0, 10, 70_000]),
)  # fmt: skip
_INTENT = st.builds(lambda s: {"intent": "create", "path": f"{M}/gone", "session": s}, _SESSIONS)
_BASE = st.just({"command": "base", "path": M, "files": {}})
_LINE = st.one_of(
    _OUTCOME.map(json.dumps), _INTENT.map(json.dumps), _BASE.map(json.dumps),
    st.just("{}"), st.just("not json"), st.just(""),
)  # fmt: skip
_FILE = st.one_of(st.none(), st.lists(_LINE, max_size=12))


def _write(root: Path, name: str, lines: list[str] | None, torn: bool) -> None:
    if lines is not None:
        (root / name).write_text("\n".join(lines) + ("" if torn else "\n"))


@settings(max_examples=60, deadline=None)
@given(
    older=_FILE,
    newer=_FILE,
    torn=st.booleans(),
    limit=st.integers(0, 6),
    session=st.one_of(st.none(), _SESSIONS.filter(bool)),
)
def test_the_tail_is_the_history_newest_first(
    older: list[str] | None,
    newer: list[str] | None,
    torn: bool,
    limit: int,
    session: str | None,
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder, clock.frozen(MOMENT):
        root = Path(folder)
        _write(root, OLDER_NAME, older, False)
        _write(root, JOURNAL_NAME, newer, torn)
        history = read_history(root)[::-1]
        mine = [e for e in history if session is None or e.get("session") == session]
        expected = mine[: limit or None]
        assert newest_entries(root, limit, session) == expected


def test_a_base_record_first_is_left_out_only_when_the_older_generation_is_there(
    tmp_path: Path,
) -> None:
    base = json.dumps({"command": "base", "path": M, "files": {}})
    one = json.dumps({"command": "create", "path": f"{M}/a", "session": "s1"})
    two = json.dumps({"command": "create", "path": f"{M}/b", "session": "s2"})
    (tmp_path / JOURNAL_NAME).write_text(f"{base}\n{two}\n")
    assert [e["command"] for e in newest_entries(tmp_path)] == ["create", "base"]
    (tmp_path / OLDER_NAME).write_text(f"{one}\n")
    assert [e["path"] for e in newest_entries(tmp_path)] == [f"{M}/b", f"{M}/a"]
    assert newest_entries(tmp_path, 1) == [json.loads(two)]


def test_log_reads_across_a_rotation(tmp_path: Path) -> None:
    root = tmp_path / "m"
    store = MemoryStore(root, MemorySettings(history_max_bytes=10_000), session="s1")
    for i in range(40):
        store.write_text(f"{M}/n{i % 5}.md", f"{i}\n" + "a line of notes\n" * 20)
    assert (root / OLDER_NAME).is_file()  # rotated at least once
    history = read_history(root)
    count = len(read_entries(root)) + 2  # more than the current generation holds
    assert len(history) >= count
    result = CliRunner().invoke(
        app, ["memory", "log", "--root", str(root), "--json", "-n", str(count)]
    )
    assert result.exit_code == 0, result.output
    shown = [json.loads(line) for line in result.stdout.splitlines()]
    assert shown == history[::-1][:count] and len(shown) == count
    assert shown[-1]["path"] != M  # from the older generation, not the base record
