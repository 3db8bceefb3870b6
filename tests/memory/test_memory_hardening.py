"""Hostile memory roots and full disks (issue 10): each case failed before its fix."""

from __future__ import annotations

import json
import os
import resource
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from reliability.helpers import assert_store_consistent

from agentctl.errors import ConfigError, ToolError
from agentctl.memory.archive import export_archive
from agentctl.memory.journal import JOURNAL_NAME, read_entries
from agentctl.memory.lock import LOCK_NAME
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings
from agentctl.tools.memory import MemoryTool, open_memory_tool
from agentctl.tools.registry import ToolBox

M = "/memories"


def create(path: str, text: str = "x") -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "mem")


def journal_lines(root: Path) -> list[str]:
    return (root / JOURNAL_NAME).read_bytes().decode("utf-8").split("\n")


# -- reserved names ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [".AGENTCTL-journal.jsonl", ".Agentctl.lock", "d/.AgentCtl-x"])
def test_reserved_names_are_matched_whatever_their_case(store: MemoryStore, name: str) -> None:
    with pytest.raises(ToolError, match="reserved for agentctl"):
        store.execute(create(f"{M}/{name}"))


# -- str_replace --------------------------------------------------------------------------------


@pytest.mark.dates
def test_str_replace_of_a_frequent_string_lists_a_bounded_number_of_lines(
    store: MemoryStore,
) -> None:
    text = "ab\n" * 20_000
    store.execute(create(f"{M}/big.md", text))
    command = {"command": "str_replace", "path": f"{M}/big.md", "old_str": "a", "new_str": "z"}
    with pytest.raises(ToolError) as err:
        store.execute(command)
    message = str(err.value)
    assert message.startswith("No replacement was performed. Multiple occurrences of old_str `a`")
    assert "in lines: 1, 2, 3," in message and "(20000 occurrences)" in message
    assert len(message) < 500


@pytest.mark.dates
def test_str_replace_on_a_megabyte_of_one_character_answers(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    store.execute(create(f"{M}/big.md", "a\n" * 490_000))
    command = {"command": "str_replace", "path": f"{M}/big.md", "old_str": "a", "new_str": "b"}
    with pytest.raises(ToolError, match=r"\(490000 occurrences\)"):
        store.execute(command)


# -- depth ------------------------------------------------------------------------------------


@pytest.mark.dates
def test_rename_checks_the_depth_of_what_it_moves(store: MemoryStore) -> None:
    deep = "/".join(["d"] * 20)
    store.execute(create(f"{M}/src/{deep}/f.md"))
    target = "/".join(["t"] * 15)
    with pytest.raises(ToolError, match="deeper than 32 levels"):
        store.execute(rename(f"{M}/src", f"{M}/{target}"))
    assert (store.root / "src").is_dir() and not (store.root / "t").exists()
    store.execute(rename(f"{M}/src", f"{M}/{'/'.join(['t'] * 11)}"))  # 11 + 20 + f.md = 32


@pytest.mark.dates
def test_a_hand_made_600_deep_folder_is_walked_without_crashing(store: MemoryStore) -> None:
    deep = store.root / "/".join(["d"] * 600)
    deep.mkdir(parents=True)
    (deep / "f.md").write_text("deep\n")
    store.execute(create(f"{M}/a.md", "a"))  # walks the tree for the totals
    assert "/memories/d/d/" in store.execute({"command": "view", "path": M})
    data, count = export_archive(store)
    assert count == 2 and len(data) > 0
    store.execute({"command": "delete", "path": f"{M}/d"})
    assert not (store.root / "d").exists()
    assert set(assert_store_consistent(store.root)) == {f"{M}/a.md"}


# -- journal ----------------------------------------------------------------------------------


@pytest.mark.dates
def test_the_journal_records_canonical_paths(store: MemoryStore) -> None:
    store.execute(create(f"{M}/./a//b.md"))
    store.execute(rename(f"{M}//a/./b.md", f"{M}/./c.md/"))
    paths = [(e["path"], e.get("new_path")) for e in read_entries(store.root)]
    assert paths == [(f"{M}/a/b.md", None), (f"{M}/a/b.md", f"{M}/c.md")]
    assert_store_consistent(store.root)


@pytest.mark.dates
def test_names_with_unicode_line_separators_stay_in_the_journal(store: MemoryStore) -> None:
    for name in ("a\u2028b.md", "c\u0085d.md", "e\u2029f.md"):
        store.execute(create(f"{M}/{name}"))
    assert len(read_entries(store.root)) == 3
    assert_store_consistent(store.root)


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes past `limit` bytes of any file fail as on a full disk (short write, then EFBIG)."""
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)


def _journal_size(store: MemoryStore) -> int:
    return (store.root / JOURNAL_NAME).stat().st_size


@pytest.mark.dates
def test_a_short_journal_write_leaves_no_torn_line_and_changes_nothing(
    store: MemoryStore,
) -> None:
    store.execute(create(f"{M}/a.md"))
    with file_size_limit(_journal_size(store) + 20), pytest.raises(ToolError, match="too large"):
        store.execute(rename(f"{M}/a.md", f"{M}/b.md"))
    assert (store.root / "a.md").exists() and not (store.root / "b.md").exists()
    store.execute(create(f"{M}/c.md"))
    assert all(json.loads(line) for line in journal_lines(store.root)[:-1])
    assert_store_consistent(store.root)


@pytest.mark.dates
def test_a_change_made_is_reported_made_when_its_journal_entry_cannot_be_written(
    store: MemoryStore,
) -> None:
    store.execute(create(f"{M}/a.md"))
    before = _journal_size(store)
    store.execute(rename(f"{M}/a.md", f"{M}/b.md"))
    intent_size = (_journal_size(store) - before - 1) // 2  # the entry is one byte longer
    with file_size_limit(_journal_size(store) + intent_size + 5):
        result = store.execute(rename(f"{M}/b.md", f"{M}/a.md"))
    assert result == f"Successfully renamed {M}/b.md to {M}/a.md"
    store.execute(create(f"{M}/c.md"))
    assert all(json.loads(line) for line in journal_lines(store.root)[:-1])
    assert set(assert_store_consistent(store.root)) == {f"{M}/a.md", f"{M}/c.md"}


# -- own files: FIFOs, links --------------------------------------------------------------------


def test_a_fifo_at_the_journal_path_is_refused_not_waited_on(store: MemoryStore) -> None:
    os.mkfifo(store.root / JOURNAL_NAME)
    outcome: list[BaseException | str] = []

    def write() -> None:
        try:
            outcome.append(store.execute(create(f"{M}/a.md")))
        except BaseException as err:
            outcome.append(err)

    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    worker.join(timeout=30)  # a hang fails here, it does not hang the suite
    assert outcome and isinstance(outcome[0], ToolError), outcome
    assert JOURNAL_NAME in str(outcome[0]) and "not a regular file" in str(outcome[0])
    assert not (store.root / "a.md").exists()


def test_a_fifo_with_a_reader_at_the_journal_path_is_refused(store: MemoryStore) -> None:
    os.mkfifo(store.root / JOURNAL_NAME)
    reader = os.open(store.root / JOURNAL_NAME, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(ToolError, match="not a regular file"):
            store.execute(create(f"{M}/a.md"))
        with pytest.raises(ToolError, match="not a regular file"):
            read_entries(store.root)
    finally:
        os.close(reader)


def test_a_fifo_at_the_lock_path_is_refused(store: MemoryStore) -> None:
    os.mkfifo(store.root / LOCK_NAME)
    with pytest.raises(ToolError, match="not a regular file"):
        store.execute(create(f"{M}/a.md"))


def test_a_hard_link_in_the_root_is_not_read_through(store: MemoryStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret\n")
    os.link(secret, store.root / "notes.md")
    for command in (
        {"command": "view", "path": f"{M}/notes.md"},
        {"command": "str_replace", "path": f"{M}/notes.md", "old_str": "the", "new_str": "a"},
    ):
        with pytest.raises(ToolError, match="hard link"):
            store.execute(command)
    assert secret.read_text() == "the secret\n"


def test_a_hard_linked_journal_is_not_appended_to(store: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("")
    os.link(outside, store.root / JOURNAL_NAME)
    with pytest.raises(ToolError, match="hard link"):
        store.execute(create(f"{M}/a.md"))
    assert outside.read_text() == ""


# -- unwritable roots and failed writes during a run ------------------------------------------


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs /sys")
def test_an_unwritable_root_is_refused_when_a_run_opens_it() -> None:
    with pytest.raises(ConfigError, match="memory root /sys/kernel: not writable"):
        open_memory_tool(MemorySettings(root=Path("/sys/kernel")), "s1")


@pytest.mark.dates
def test_writes_that_failed_for_the_store_are_counted_apart(store: MemoryStore) -> None:
    box = ToolBox([MemoryTool(store)], max_result_chars=10_000)
    assert not box.dispatch("memory", create(f"{M}/a.md")).is_error
    assert box.dispatch("memory", create(f"{M}/a.md")).is_error  # the model's mistake
    assert box.failures == 0
    (store.root / JOURNAL_NAME).unlink()
    os.mkfifo(store.root / JOURNAL_NAME)
    assert box.dispatch("memory", create(f"{M}/b.md")).is_error
    assert box.failures == 1


@pytest.mark.dates
def test_a_deeply_nested_journal_line_is_skipped_not_a_crash(store: MemoryStore) -> None:
    store.execute(create(f"{M}/a.md"))
    with (store.root / JOURNAL_NAME).open("a") as journal:
        journal.write("[" * 100_000 + "]" * 100_000 + "\n")
    assert [e["command"] for e in read_entries(store.root)] == ["create"]
    store.execute(create(f"{M}/b.md"))  # settles from the tail: the same line is skipped
    assert_store_consistent(store.root)
