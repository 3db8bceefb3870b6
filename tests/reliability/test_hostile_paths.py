"""Hostile paths, extended: sequences of all six commands and the workspace tools.

tests/memory/test_memory_hostile.py checks one command per example; here hypothesis strings
several together (a create through a hostile path, then a rename out, a delete up...), with
symlinks inside the root pointing out, and drives read_file / list_files / search_text with
the same paths: nothing outside changes, and no outside secret is ever read back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctl.errors import ToolError
from agentctl.memory.store import MemoryStore
from agentctl.tools.workspace import WorkspaceTools

from .helpers import scan

SECRET = "TOP-SECRET-6f1d"
PARTS = st.sampled_from(
    ["..", ".", "", "a", "n.md", "out", "in", "%2e%2e", "%2F", "..%2f", "\\", "\x00", "\n",
     "secret.txt", ".agentctl.lock", ".agentctl-journal.jsonl", "~", "é", "x" * 300]
)  # fmt: skip
PREFIX = st.sampled_from(["/memories/", "/memories", "/memoriesX/", "", "/", "../", "//", "./"])
HOSTILE = st.builds(lambda pre, parts: pre + "/".join(parts), PREFIX, st.lists(PARTS, max_size=5))
ANY_PATH = st.one_of(HOSTILE, st.text(max_size=30), st.just("/memories/ok.md"))


def command(kind: int, a: str, b: str) -> dict[str, Any]:
    commands: list[dict[str, Any]] = [
        {"command": "create", "path": a, "file_text": "x\n"},
        {"command": "view", "path": a},
        {"command": "str_replace", "path": a, "old_str": "x", "new_str": "y"},
        {"command": "insert", "path": a, "insert_line": 0, "insert_text": "z"},
        {"command": "delete", "path": a},
        {"command": "rename", "old_path": a, "new_path": b},
        {"command": "rename", "old_path": b, "new_path": a},
    ]
    return commands[kind]


def snapshot(top: Path) -> dict[str, Any]:
    """Everything below `top`: contents, link targets, modes and mtimes."""
    out: dict[str, Any] = {}
    for dirpath, dirs, names in os.walk(top):
        for name in dirs + names:
            full = Path(dirpath) / name
            st_ = full.lstat()
            body: str | bytes | None = os.readlink(full) if full.is_symlink() else None
            if body is None and full.is_file():
                body = full.read_bytes()
            out[full.relative_to(top).as_posix()] = (body, st_.st_mode, st_.st_mtime_ns)
    return out


def make_world(tmp: Path) -> tuple[Path, Path]:
    """A root with links out and in, and an outside tree holding a secret."""
    outside = tmp / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "dir" / "n.md").write_text(SECRET)
    root = tmp / "root"
    MemoryStore(root).execute({"command": "create", "path": "/memories/in/n.md", "file_text": "ok"})
    os.symlink(outside, root / "out")
    os.symlink(outside / "secret.txt", root / "secret.txt")
    os.symlink(root / "in", root / "in" / "loop")
    (tmp / "secret.txt").write_text(SECRET)  # the root's sibling
    return root, outside


@pytest.fixture
def world() -> Iterator[tuple[Path, Path, Path]]:
    tmp = Path(tempfile.mkdtemp(prefix="agentctl-hostile-"))
    try:
        yield (tmp, *make_world(tmp))
    finally:
        shutil.rmtree(tmp)


STEPS = st.lists(st.tuples(st.integers(0, 6), ANY_PATH, ANY_PATH), min_size=1, max_size=6)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
@pytest.mark.slow
def test_command_sequences_never_touch_or_read_outside(
    world: tuple[Path, Path, Path], steps: list[tuple[int, str, str]]
) -> None:
    tmp, root, outside = world
    before = snapshot(outside)
    store = MemoryStore(root)
    for kind, a, b in steps:
        try:
            result = store.execute(command(kind, a, b))
        except ToolError as err:
            result = str(err)
        assert SECRET not in result and str(tmp) not in result
    assert snapshot(outside) == before
    assert (tmp / "secret.txt").read_text() == SECRET
    assert sorted(p.name for p in tmp.iterdir()) == ["outside", "root", "secret.txt"]
    assert scan(root).temp_files == []


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(path=ANY_PATH, which=st.integers(0, 2))
@pytest.mark.dates
def test_workspace_tools_never_read_outside(
    world: tuple[Path, Path, Path], path: str, which: int
) -> None:
    tmp, root, _outside = world
    tools = WorkspaceTools(root, max_result_chars=20_000)
    calls: list[Callable[[], str]] = [
        lambda: tools.read_file({"path": path}),
        lambda: tools.list_files({"path": path}),
        lambda: tools.search_text({"pattern": "SECRET|ok", "path": path}),
    ]
    try:
        result = calls[which]()
    except ToolError as err:
        result = str(err)
    assert SECRET not in result and str(tmp) not in result


@pytest.mark.dates
def test_the_world_is_reachable_where_it_should_be(world: tuple[Path, Path, Path]) -> None:
    # The properties above would pass vacuously if nothing worked: the inside does.
    _tmp, root, _outside = world
    assert "ok" in WorkspaceTools(root, 20_000).read_file({"path": "in/n.md"})
    store = MemoryStore(root)
    assert "created" in store.execute(command(0, "/memories/ok.md", ""))
    assert "renamed" in store.execute(command(5, "/memories/ok.md", "/memories/in/ok.md"))
    with pytest.raises(ToolError, match=r"symlink|does not exist|escape"):
        store.execute(command(1, "/memories/out/secret.txt", ""))
