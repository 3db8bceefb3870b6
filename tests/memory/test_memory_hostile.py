"""Hostile paths: every one refused by every command, with a clear message, touching nothing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctl.errors import ToolError
from agentctl.memory.guard import PathRefusedError, open_inside, resolve_inside, split_relative
from agentctl.memory.store import MemoryStore


def tree(root: Path) -> dict[str, bytes | str | None]:
    """Everything below root, hidden files and symlinks included."""
    out: dict[str, bytes | str | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            key = full.relative_to(root).as_posix()
            if full.is_symlink():
                out[key] = "-> " + os.readlink(full)
            elif full.is_dir():
                out[key] = None
            else:
                out[key] = full.read_bytes()
    return out


def hostile_paths(outside: Path) -> list[str]:
    deep = "/".join(["d"] * 40)
    return [
        "/memories/../outside/secret.txt",
        "/memories/../../etc/passwd",
        "/memories/..",
        "/memories/../",
        "/memories/sub/../../outside",
        "/memories/sub/../notes.md",
        "/memories/./../x",
        "/memories/sub/..",
        "/memories/a/../../..",
        "/memories/sub/../../../../../../../../etc/shadow",
        "/memories/link_out/../secret.txt",
        "/memories/..\\..\\etc\\passwd",
        "/memories\\..\\x",
        "/memories/sub\\..\\..\\x",
        "/memories/C:\\Windows\\system32",
        "/memories/\\\\server\\share",
        "/memories/%2e%2e/%2e%2e/etc/passwd",
        "/memories/%2e%2e%2f%2e%2e%2fetc",
        "/memories/%2E%2E/x",
        "/memories/%2e%2e",
        "/memories/..%2fetc",
        "/memories/a%2fb",
        "/memories/a%5c..%5cb",
        "/memories/%252e%252e%252fetc",
        "/memories/%25252e%25252e/x",
        "/memories/%%32%65%%32%65/x",
        "/memories/%c0%ae%c0%ae/x",
        "/memories/..%c0%afetc",
        "/memories/%e0%80%ae%e0%80%ae/x",
        "/memories/%u002e%u002e/x",
        "/memories/..%c1%9cx",
        "/memories/a%00b",
        "/memories/notes.md\x00.txt",
        "/memories/\x00",
        "/memories/a\nb",
        "/memories/sub/\x7f",
        "/memories/tab\there",
        "/etc/passwd",
        "/tmp",
        str(outside / "secret.txt"),
        "memories/notes.md",
        "",
        "/",
        "//memories/x",
        "~/memories",
        "/MEMORIES/x",
        "/memoriesX",
        "/memories_backup/x",
        "/memories..",
        "/memories../x",
        "/memories/link_out/secret.txt",
        "/memories/link_out",
        "/memories/link_file",
        "/memories/link_in/a.md",
        "/memories/link_in",
        "/memories/sub/link_up/x",
        "/memories/" + "a" * 256,
        "/memories/" + deep,
        "/memories/" + "abcdefgh/" * 150,
        "/memories/.agentctl-journal.jsonl",
        "/memories/.agentctl.lock",
        "/memories/.agentctl-tmp-1-abc",
        "/memories/sub/.agentctl-x",
    ]


@pytest.fixture
def world(tmp_path: Path) -> tuple[MemoryStore, Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    store = MemoryStore(tmp_path / "root", session="s1")
    store.execute({"command": "create", "path": "/memories/notes.md", "file_text": "hi\n"})
    store.execute({"command": "create", "path": "/memories/sub/a.md", "file_text": "a\n"})
    (store.root / "link_out").symlink_to(outside)
    (store.root / "link_file").symlink_to(outside / "secret.txt")
    (store.root / "link_in").symlink_to(store.root / "sub")
    (store.root / "sub" / "link_up").symlink_to("..")
    return store, outside, tmp_path


def commands_for(path: str) -> list[dict[str, Any]]:
    return [
        {"command": "view", "path": path},
        {"command": "view", "path": path, "view_range": [1, 2]},
        {"command": "create", "path": path, "file_text": "pwned"},
        {"command": "str_replace", "path": path, "old_str": "secret", "new_str": "pwned"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/moved.md"},
        {"command": "rename", "old_path": "/memories/notes.md", "new_path": path},
    ]


def test_corpus_is_large_enough(tmp_path: Path) -> None:
    assert len(hostile_paths(tmp_path)) >= 50


@pytest.mark.dates
def test_every_hostile_path_is_refused_touching_nothing(
    world: tuple[MemoryStore, Path, Path],
) -> None:
    store, outside, tmp = world
    before_root, before_out = tree(store.root), tree(outside)
    refused = 0
    for path in hostile_paths(outside):
        for command in commands_for(path):
            with pytest.raises(ToolError) as info:
                store.execute(command)
            message = str(info.value)
            assert len(message) > 15 and "\n" not in message, (command, message)
            if str(tmp) not in path:  # echoing the model's own input is not a leak
                assert str(tmp) not in message, (command, message)
            refused += 1
        assert tree(store.root) == before_root, path
        assert tree(outside) == before_out, path
    assert refused == 8 * len(hostile_paths(outside))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/memories/../x", "Path /memories/../x would escape /memories directory"),
        ("/memories/a/../b", "Path /memories/a/../b contains '..'; parent steps are not allowed"),
        ("/etc/passwd", "Path must start with /memories, got: /etc/passwd"),
        ("/memoriesX", "Path must be /memories or start with /memories/, got: /memoriesX"),
        ("/memories/a\x00b", "Path /memories/a\\x00b contains a NUL or control character"),
        (
            "/memories/a\\b",
            "Path /memories/a\\b contains a backslash; separate directories with '/'",
        ),
        (
            "/memories/link_out/x",
            "Path /memories/link_out/x goes through a symbolic link; symlinks are not followed",
        ),
    ],
)
@pytest.mark.dates
def test_refusal_messages(world: tuple[MemoryStore, Path, Path], path: str, expected: str) -> None:
    store, _, _ = world
    with pytest.raises(ToolError) as info:
        store.execute({"command": "view", "path": path})
    assert str(info.value) == expected


@pytest.mark.dates
def test_long_paths_are_cut_in_messages(world: tuple[MemoryStore, Path, Path]) -> None:
    store, _, _ = world
    with pytest.raises(ToolError) as info:
        store.execute({"command": "view", "path": "/memories/" + "x" * 5000})
    assert len(str(info.value)) < 250
    assert "longer than 1024 bytes" in str(info.value)


@pytest.mark.dates
def test_symlink_swapped_in_during_use_is_never_followed(
    world: tuple[MemoryStore, Path, Path],
) -> None:
    """A racer keeps replacing /memories/sub by a symlink to the outside dir while the store
    writes into it; the fd walk means every write lands inside or is refused."""
    store, outside, _ = world
    before_out = tree(outside)
    sub, parked = store.root / "sub", store.root / "parked"
    stop = threading.Event()
    swaps = [0]
    parks = iter(range(10**9))

    def racer() -> None:
        while not stop.is_set():
            try:
                # Park the real dir (the store may have re-created it), put a symlink in its
                # place for a moment, then a fresh real dir again.
                os.rename(sub, f"{parked}{next(parks)}")
                sub.symlink_to(outside)
                swaps[0] += 1
                time.sleep(0.0005)
                sub.unlink()
                sub.mkdir()
            except OSError:
                time.sleep(0.0001)

    thread = threading.Thread(target=racer)
    thread.start()
    outcomes = {"ok": 0, "refused": 0}
    try:
        i = 0
        # Until the race really happened 50 times; the bound only stops a racer that is stuck.
        deadline = time.monotonic() + 120
        while swaps[0] < 50 and time.monotonic() < deadline:
            i += 1
            path = f"/memories/sub/f{i}.md"
            try:
                store.execute({"command": "create", "path": path, "file_text": "x"})
                store.execute({"command": "view", "path": path})
                outcomes["ok"] += 1
            except ToolError:
                outcomes["refused"] += 1
    finally:
        stop.set()
        thread.join()
    assert tree(outside) == before_out
    assert swaps[0] >= 50  # the race really happened
    assert outcomes["ok"] + outcomes["refused"] == i


# -- generic guard -----------------------------------------------------------------------


def test_resolve_inside_and_open_inside(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "m.py").write_text("x = 1\n")
    (root / "esc").symlink_to(tmp_path)
    assert resolve_inside(root, "src/m.py") == root / "src" / "m.py"
    fd = open_inside(root, "src/./m.py")
    with os.fdopen(fd, "rb") as handle:
        assert handle.read() == b"x = 1\n"
    for bad in ("../x", "/etc/passwd", "esc/ws/src/m.py", "src\\m.py", "src/%2e%2e/x"):
        with pytest.raises(PathRefusedError):
            resolve_inside(root, bad)
        with pytest.raises(PathRefusedError):
            open_inside(root, bad)
    with pytest.raises(PathRefusedError):
        open_inside(root, "src")  # a directory is not a file


def test_split_relative_drops_empty_and_dot_parts() -> None:
    assert split_relative("a//b/./c/") == ("a", "b", "c")
    assert split_relative("") == ()
    assert split_relative("100%.md/50%25") == ("100%.md", "50%25")


# -- property: random paths never touch anything outside ---------------------------------

_PARTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "a",
        "b.md",
        "sub",
        "link_out",
        "link_in",
        "%2e%2e",
        "%252e",
        "\\",
        "..\\",
        "\x00",
        "memories",
        ".agentctl.lock",
        "secret.txt",
        "~",
        "C:",
    ]
)
_PREFIX = st.sampled_from(["/memories/", "/memories", "/memoriesX/", "", "/", "../", "//"])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(prefix=_PREFIX, parts=st.lists(_PARTS, max_size=6), which=st.integers(0, 7))
@pytest.mark.dates
def test_random_paths_never_touch_outside(
    world: tuple[MemoryStore, Path, Path], prefix: str, parts: list[str], which: int
) -> None:
    store, outside, tmp = world
    before_out = tree(outside)
    path = prefix + "/".join(parts)
    try:
        store.execute(commands_for(path)[which])
    except ToolError as err:
        assert str(tmp) not in str(err)
    assert tree(outside) == before_out
    assert not (tmp / "moved.md").exists() and not (tmp / "root" / ".." / "x").exists()


@settings(max_examples=300, deadline=None)
@given(rel=st.text(max_size=40))
def test_split_relative_never_yields_a_step_outside(rel: str) -> None:
    try:
        parts = split_relative(rel)
    except PathRefusedError:
        return
    assert all(p not in ("", ".", "..") and "/" not in p and "\\" not in p for p in parts)
    assert all("\x00" not in p for p in parts)
