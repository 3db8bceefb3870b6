"""Hostile workspaces: patterns that backtrack for hours, files of gigabytes, endless lines."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from agentctl.errors import ToolError
from agentctl.tools.workspace import WorkspaceTools, walk_files

GB = 1 << 30
BOUNDED = 16 << 20  # what one call may allocate, whatever the file's size (measured: < 1 MB)


def peak_bytes(call: Callable[[], str]) -> tuple[str, int]:
    """The call's result and the peak of Python allocations while it ran.

    Garbage left by earlier tests is collected first, and the collector paused, so that
    finalizers of other tests' objects do not count (they did, in the full suite).
    """
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.enable()


def sparse(path: Path, head: bytes, size: int, tail: bytes = b"") -> Path:
    """`head`, then a hole of NUL bytes up to `size` (no disk used), then `tail`."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)
    with path.open("ab") as handle:
        handle.write(tail)
    return path


def test_a_backtracking_pattern_is_stopped_by_the_budget(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 41 + "b\n")
    ws = WorkspaceTools(tmp_path, 10_000, search_budget_s=0.2)
    # `^(a|aa)+$` takes ~fib(41) steps on this line: hours with the stdlib engine.
    with pytest.raises(ToolError, match=r"took more than 0\.2 s to match"):
        ws.search_text({"pattern": "^(a|aa)+$"})
    # the pattern: the regex engine's guards make it fast; the answer is right
    assert ws.search_text({"pattern": "^(a+)+$"}) == "[no matches]"
    assert ws.search_text({"pattern": "^(a+)+b$"}) == "a.txt:1:" + "a" * 41 + "b"


def test_the_budget_is_shared_by_all_lines_of_a_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(("a" * 28 + "b\n") * 400)
    ws = WorkspaceTools(tmp_path, 10_000, search_budget_s=0.3)
    with pytest.raises(ToolError, match=r"took more than 0\.3 s"):
        ws.search_text({"pattern": "^(a|aa)+$"})


@pytest.mark.slow
def test_ctrl_c_stops_a_backtracking_search(tmp_path: Path) -> None:
    """A guard, not a regression test: both engines check for signals while they backtrack."""
    (tmp_path / "a.txt").write_text("a" * 60 + "b\n")
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from agentctl.tools.workspace import WorkspaceTools, walk_files
        ws = WorkspaceTools(Path({str(tmp_path)!r}), 10_000, search_budget_s=3600)
        print("searching", flush=True)
        ws.search_text({{"pattern": "^(a|aa)+$"}})
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None and child.stdout.readline() == b"searching\n"
    wait_for_cpu(child.pid, ticks=30)  # inside the search: nothing else burns CPU
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode != 0 and b"KeyboardInterrupt" in err


def wait_for_cpu(pid: int, ticks: int) -> None:
    """Block until process `pid` has used `ticks` clock ticks of CPU (utime + stime)."""
    while True:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if int(fields[11]) + int(fields[12]) >= ticks:
            return
        os.sched_yield()


def test_read_file_reads_only_the_lines_it_returns(tmp_path: Path) -> None:
    sparse(tmp_path / "huge.txt", b"line one\nline two\n", 3 * GB)
    ws = WorkspaceTools(tmp_path, 20_000)
    out, peak = peak_bytes(lambda: ws.read_file({"path": "huge.txt", "limit": 1}))
    assert peak < BOUNDED
    assert out == (
        "     1\tline one\n[truncated: more lines follow; call read_file with offset=2 to continue]"
    )


def test_one_endless_line_is_cut_not_read_whole(tmp_path: Path) -> None:
    sparse(tmp_path / "hole.bin", b"", 3 * GB)  # one 3 GB line of NUL bytes
    ws = WorkspaceTools(tmp_path, 200_000)
    out, peak = peak_bytes(lambda: ws.read_file({"path": "hole.bin", "limit": 1}))
    assert peak < BOUNDED
    first, last = out.split("\n")
    assert first.endswith("\x00 [line cut at 65,536 bytes]") and len(first) < 70_000
    assert last.startswith("[truncated: more lines follow;") and "offset=2" in last


@pytest.mark.slow
def test_search_text_streams_past_a_long_line(tmp_path: Path) -> None:
    sparse(tmp_path / "big.txt", b"x\n", 300 << 20, b"\nneedle here\n")
    ws = WorkspaceTools(tmp_path, 20_000)
    out, peak = peak_bytes(lambda: ws.search_text({"pattern": "needle"}))
    assert peak < BOUNDED
    assert out == "big.txt:3:needle here"
    paged, _ = peak_bytes(lambda: ws.read_file({"path": "big.txt", "offset": 3}))
    assert paged == "     3\tneedle here"


@pytest.mark.slow
def test_list_files_walks_a_big_tree_without_holding_it(tmp_path: Path) -> None:
    for d in range(100):
        folder = tmp_path / f"d{d:03d}"
        folder.mkdir()
        for f in range(100):
            (folder / f"f{f:03d}.txt").touch()
    ws = WorkspaceTools(tmp_path, 2_000)
    # pathlib interns every name it parses: keep them interned while measuring, so a rebuild
    # of the interpreter's table of interned strings (2-4 MB, seen in the full suite) does
    # not count as the tree.
    interned = list(walk_files(ws.root, ws.root))
    out, peak = peak_bytes(lambda: ws.list_files({}))
    # Against holding every path at once (what it did), measured the same way: 3.4 MB.
    _, held = peak_bytes(lambda: str(len(list(walk_files(ws.root, ws.root)))))
    assert peak < held / 4, (peak, held, len(interned))
    assert out.startswith("d000/f000.txt\t0\n")
    assert out.endswith("[truncated: 9883 more files; list a subdirectory]")
