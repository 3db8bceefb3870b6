"""What keeping memory history costs per write: agentctl's journal + blobs against git.

    python bench/memory_history.py [--writes N] [--writers W] [--baseline SRC]

Times N memory writes (create, then str_replace, alternating) through `MemoryStore`, then the
same writes each followed by `git add -A && git commit` in a git repository kept in the root
(only where the `git` program is installed), and W processes writing one root at once. With
`--baseline SRC` (a checkout of agentctl from before the history, e.g. main), its store is timed
too, in a child process. Prints milliseconds per write (median of 3 rounds).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

M = "/memories"


def _write(store: Any, i: int, tag: str = "") -> None:
    """Write number `i`: even ones create a file, odd ones edit the file just made."""
    name = f"{M}/{tag}f{i // 2 % 20}-{i // 40}.md"
    if i % 2 == 0:
        text = f"note {i}\n" + "a line of notes\n" * 19
        store.execute({"command": "create", "path": name, "file_text": text})
    else:
        edit = {"old_str": f"note {i - 1}\n", "new_str": f"note {i}, edited\n"}
        store.execute({"command": "str_replace", "path": name, **edit})


def _writes(store: Any, n: int, tag: str = "") -> None:
    for i in range(n):
        _write(store, i, tag)


def time_store(n: int) -> float:
    from agentctl.memory.store import MemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "m", session="bench")
        start = time.perf_counter()
        _writes(store, n)
        return (time.perf_counter() - start) / n * 1000


def time_git(n: int) -> float | None:
    """The store's write plus one git commit of the root per write (git's own index/objects)."""
    if shutil.which("git") is None:
        return None
    from agentctl.memory.store import MemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "m"
        store = MemoryStore(root, session="bench")
        env = {**os.environ, "GIT_DIR": str(root / ".agentctl-git"), "GIT_WORK_TREE": str(root)}
        env |= {
            f"GIT_{who}_{what}": v
            for who in ("AUTHOR", "COMMITTER")
            for what, v in (("NAME", "bench"), ("EMAIL", "bench@localhost"))
        }
        git = ["git", "-c", "gc.auto=0"]
        subprocess.run([*git, "init", "-q"], env=env, check=True)
        (root / ".agentctl-git" / "info" / "exclude").write_text(".agentctl*\n")
        start = time.perf_counter()
        for i in range(n):
            _write(store, i)
            subprocess.run([*git, "add", "-A", "."], env=env, check=True)
            subprocess.run([*git, "commit", "-q", "-m", f"bench turn {i}"], env=env, check=True)
        return (time.perf_counter() - start) / n * 1000


def _writer(root: str, tag: str, n: int) -> None:
    from agentctl.memory.store import MemoryStore

    _writes(MemoryStore(Path(root), session=tag), n, tag)


def time_writers(writers: int, n: int) -> float:
    """W processes writing one root at once: wall milliseconds per write, all writes counted."""
    ctx = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "m")
        from agentctl.memory.store import MemoryStore

        MemoryStore(Path(root))
        start = time.perf_counter()
        procs = [ctx.Process(target=_writer, args=(root, f"w{k}-", n)) for k in range(writers)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
        assert all(p.exitcode == 0 for p in procs)
        return (time.perf_counter() - start) / (writers * n) * 1000


def baseline(src: Path, n: int) -> float:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]);"
        "import memory_history as b; print(b.time_store(int(sys.argv[3])))"
    )
    here = str(Path(__file__).parent)
    out = subprocess.run(
        [sys.executable, "-c", code, str(src), here, str(n)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    rounds: dict[str, list[float]] = {}
    for _ in range(3):
        if args.baseline is not None:
            rounds.setdefault("store before history", []).append(
                baseline(args.baseline, args.writes)
            )
        rounds.setdefault("store with history (journal + blobs)", []).append(
            time_store(args.writes)
        )
        git = time_git(max(20, args.writes // 5))
        if git is not None:
            rounds.setdefault("store + git add/commit per write", []).append(git)
        rounds.setdefault(f"{args.writers} writers on one root", []).append(
            time_writers(args.writers, max(10, args.writes // args.writers))
        )
    for name, values in rounds.items():
        print(f"{name:<40} {statistics.median(values):8.2f} ms/write")


if __name__ == "__main__":
    main()
