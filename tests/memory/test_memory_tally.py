"""The usage tally saved between processes: trusted while the journal and every folder are as
agentctl left them, walked again otherwise; what a hand edit does to the limits."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctl.errors import ToolError
from agentctl.memory import fsops
from agentctl.memory.store import MemoryStore
from agentctl.memory.tally import TALLY_NAME
from agentctl.profile.settings import MemorySettings

M = "/memories"
DEAD = 1 << 22  # never a pid on Linux (pid_max is at most 2**22)


def create(path: str, text: str = "x") -> dict[str, str]:
    return {"command": "create", "path": f"{M}/{path}", "file_text": text}


def plant_unseen_temp(folder: Path) -> Path:
    """A dead writer's temp file that only a walk can find: the folder's mtime is put back,
    so nothing a saved tally checks has changed. A later write that leaves it was not a walk."""
    st = folder.stat()
    temp = folder / f".agentctl-tmp-{DEAD}-00"
    temp.write_bytes(b"half")
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    return temp


def true_usage(root: Path) -> fsops.Usage:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return fsops.usage(fd)
    finally:
        os.close(fd)


def kept_usage(store: MemoryStore) -> fsops.Usage:
    with store.locked() as fd:
        return store.usage(fd)


@pytest.mark.dates
def test_a_new_store_uses_the_saved_tally_without_walking(tmp_path: Path) -> None:
    first = MemoryStore(tmp_path / "m")
    first.execute(create("d/a.md", "aaa"))
    first.execute(create("d/e/b.md", "bb"))
    temp = plant_unseen_temp(first.root / "d" / "e")
    second = MemoryStore(first.root)  # as the next `agentctl run` opens it
    second.execute(create("c.md"))
    assert temp.exists()  # no walk: the saved tally held
    assert kept_usage(second) == true_usage(first.root) == fsops.Usage(3, 6)
    second.recount()  # a walk, which sweeps the dead writer's temp file
    assert not temp.exists()


@pytest.mark.dates
def test_a_damaged_or_stale_tally_is_walked_again(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.execute(create("a.md", "aaa"))
    tally = store.root / TALLY_NAME
    text = tally.read_bytes()
    for damaged in (b"", text[:-3], text.replace(b'"files":1', b'"files":7'), b"{}\n0\n"):
        tally.write_bytes(damaged)
        temp = plant_unseen_temp(store.root)
        MemoryStore(store.root).execute(create(f"n{len(damaged)}.md"))
        assert not temp.exists(), damaged  # walked
        assert kept_usage(MemoryStore(store.root)) == true_usage(store.root)


@pytest.mark.dates
def test_files_added_by_hand_count_toward_max_files(tmp_path: Path) -> None:
    limits = MemorySettings(max_files=3)
    MemoryStore(tmp_path / "m", limits).execute(create("d/e/a.md"))
    root = tmp_path / "m"
    (root / "d" / "e" / "hand1.md").write_text("by hand")  # deep: only d/e's mtime moves
    (root / "d" / "hand2.md").write_text("by hand")
    with pytest.raises(ToolError, match="already holds 3 files, the limit"):
        MemoryStore(root, limits).execute(create("b.md"))
    (root / "d" / "e" / "hand1.md").unlink()  # deleted by hand: room again
    MemoryStore(root, limits).execute(create("b.md"))
    assert kept_usage(MemoryStore(root, limits)) == true_usage(root) == fsops.Usage(3, 9)


@pytest.mark.dates
def test_a_store_that_goes_on_notices_hand_changes_in_the_folder_it_writes(
    tmp_path: Path,
) -> None:
    """A run's store: a file added by hand where it writes next is counted then, and never
    taken for the store's own change when it marks that folder again."""
    root = tmp_path / "m"
    store = MemoryStore(root, MemorySettings(max_files=3))
    store.execute(create("d/a.md"))
    (root / "d" / "hand1.md").write_text("by hand")
    (root / "d" / "hand2.md").write_text("by hand")
    with pytest.raises(ToolError, match="already holds 3 files, the limit"):
        store.execute(create("d/b.md"))
    (root / "hand3.md").write_text("by hand")  # the root is on the way to every path
    store.execute({"command": "delete", "path": f"{M}/d/hand1.md"})
    assert kept_usage(store) == true_usage(root) == fsops.Usage(3, 15)
    assert kept_usage(MemoryStore(root)) == true_usage(root)


@pytest.mark.dates
def test_an_editor_saving_by_rename_counts_toward_max_total_bytes(tmp_path: Path) -> None:
    limits = MemorySettings(max_total_bytes=100)
    root = tmp_path / "m"
    MemoryStore(root, limits).execute(create("notes/a.md", "short\n"))
    saved = root / "notes" / ".a.md.swp"  # how vim or emacs save: a new file renamed over
    saved.write_text("y" * 90)
    os.replace(saved, root / "notes" / "a.md")
    with pytest.raises(ToolError, match="would hold 110 bytes, over the limit of 100"):
        MemoryStore(root, limits).execute(create("b.md", "z" * 20))


@pytest.mark.dates
def test_a_file_grown_in_place_by_hand_is_counted_after_a_recount(tmp_path: Path) -> None:
    """The one hand edit the saved tally cannot see (docs/memory.md, "Limits")."""
    limits = MemorySettings(max_total_bytes=100)
    root = tmp_path / "m"
    MemoryStore(root, limits).execute(create("notes/a.md", "short\n"))
    with (root / "notes" / "a.md").open("a") as f:  # `>>`: same file, same folder mtime
        f.write("y" * 90)
    store = MemoryStore(root, limits)
    store.execute(create("b.md", "z"))  # counted as 6 + 1 bytes: the gap
    assert store.recount() == fsops.Usage(2, 97)
    with pytest.raises(ToolError, match="would hold 101 bytes, over the limit of 100"):
        store.execute(create("c.md", "zzzz"))


@pytest.mark.dates
def test_renamed_and_deleted_folders_keep_the_tally_valid(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    for path in ("a/b/c/1.md", "a/b/2.md", "a/3.md", "x/4.md"):
        store.execute(create(path, path))
    store.execute({"command": "rename", "old_path": f"{M}/a", "new_path": f"{M}/y/z/a"})
    store.execute({"command": "delete", "path": f"{M}/x"})
    temp = plant_unseen_temp(store.root / "y" / "z" / "a" / "b" / "c")
    again = MemoryStore(store.root)
    again.execute(create("y/z/a/b/c/5.md", "5"))
    assert temp.exists()  # the moved folders' marks were kept under their new names
    assert kept_usage(again) == true_usage(store.root) == fsops.Usage(4, 25)


@pytest.mark.dates
def test_a_change_whose_effect_is_unknown_leaves_no_tally_to_trust(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m")
    store.execute(create("a.md", "a"))
    store.clear()  # no delta: the next store walks
    temp = plant_unseen_temp(store.root)
    MemoryStore(store.root).execute(create("b.md"))
    assert not temp.exists()


HAND = st.sampled_from(["add", "remove", "rename", "mkdir", "none"])
STEP = st.tuples(
    st.sampled_from(["create", "delete", "rename", "str_replace"]),
    st.integers(0, 5),
    st.integers(0, 5),
    HAND,
)


@pytest.mark.slow
@pytest.mark.dates
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_the_saved_tally_matches_a_walk_across_processes_and_hand_changes(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, int, str]]
) -> None:
    root = tmp_path_factory.mktemp("tally") / "m"
    MemoryStore(root)
    for n, (command, a, b, hand) in enumerate(steps):
        store = MemoryStore(root)  # a new process each step
        paths = [f"{M}/d{a % 3}/f{a}.md", f"{M}/d{b % 3}/e/f{b}.md"]
        with suppress(ToolError):  # a random step may name a missing path
            if command == "create":
                store.execute({"command": "create", "path": paths[0], "file_text": "x" * a})
            elif command == "delete":
                store.execute({"command": "delete", "path": paths[0].rsplit("/", 1)[0]})
            elif command == "rename":
                store.execute({"command": "rename", "old_path": paths[0], "new_path": paths[1]})
            else:
                store.execute(
                    {"command": "str_replace", "path": paths[0], "old_str": "x", "new_str": "yy"}
                )
        _by_hand(root, hand, n, a)
        assert kept_usage(MemoryStore(root)) == true_usage(root), (n, command, hand)


def _by_hand(root: Path, hand: str, n: int, a: int) -> None:
    folder = root / f"d{a % 3}"
    if hand == "none" or not folder.is_dir():
        return
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if hand == "add":
        (folder / f"hand{n}.md").write_text("h" * n)
    elif hand == "mkdir":
        (folder / f"sub{n}").mkdir()
        (folder / f"sub{n}" / "h.md").write_text("hh")
    elif files and hand == "remove":
        files[0].unlink()
    elif files and hand == "rename":
        files[0].rename(root / f"moved{n}.md")
