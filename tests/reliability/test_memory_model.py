"""Model-based test: random sequences of the six memory commands against a plain dict model.

The model is written from the documented contract (docs/memory.md and the SDK's texts), not
from the store's code: expected result strings, expected errors, and the expected tree after
every step. hypothesis shrinks any divergence to the shortest command sequence.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from agentctl.errors import ToolError
from agentctl.memory.fsops import RESERVED_PREFIX
from agentctl.memory.store import MemoryStore

from .helpers import assert_store_consistent

ROOT = "/memories"
PATHS = st.sampled_from(
    [ROOT, f"{ROOT}/a.md", f"{ROOT}/b.md", f"{ROOT}/d", f"{ROOT}/d/a.md", f"{ROOT}/d/e/b.md"]
)
TEXT = st.text(alphabet="ab \né", max_size=10)
NONEMPTY = st.text(alphabet="ab \né", min_size=1, max_size=3)


def ancestors(path: str) -> list[str]:
    parts = path.split("/")[2:-1]
    return [ROOT + "/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def under(path: str, top: str) -> bool:
    return path == top or path.startswith(top + "/")


def moved(path: str, old: str, new: str) -> str:
    return new + path[len(old) :] if under(path, old) else path


def numbered(lines: list[str], first: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


class Model:
    """The expected store: files (path -> text) and directories (below the root)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.dirs: set[str] = set()

    def exists(self, path: str) -> bool:
        return path == ROOT or path in self.files or path in self.dirs

    def file_above(self, path: str) -> bool:
        return any(a in self.files for a in ancestors(path))

    def text_file(self, path: str) -> str:
        if path in self.files:
            return self.files[path]
        if path == ROOT or path in self.dirs:
            raise ToolError(f"The path {path} is not a file.")
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    def put(self, path: str, text: str) -> None:
        self.dirs.update(ancestors(path))
        self.files[path] = text

    def create(self, path: str, text: str) -> str:
        if self.exists(path):
            raise ToolError(f"File {path} already exists")
        if self.file_above(path):
            raise ToolError(f"Cannot use {path}: one of its parent directories is a file")
        self.put(path, text)
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old: str, new: str) -> str:
        content = self.text_file(path)
        count = content.count(old)
        if count == 0:
            raise ToolError(
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
            )
        if count > 1:
            starts = [i for i in range(len(content)) if content.startswith(old, i)]
            lines = ", ".join(str(content[:i].count("\n") + 1) for i in starts)
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                f"in lines: {lines}. Please ensure it is unique"
            )
        changed = content[: content.index(old)].count("\n")
        self.files[path] = content.replace(old, new)
        after = self.files[path].split("\n")
        start = max(0, changed - 2)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + numbered(after[start : changed + 3], start + 1)
        )

    def insert(self, path: str, line: int, text: str) -> str:
        lines = self.text_file(path).split("\n")
        if lines[-1] == "":
            lines.pop()
        if not 0 <= line <= len(lines):
            raise ToolError(
                f"Invalid `insert_line` parameter: {line}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        lines.insert(line, text.rstrip("\n"))
        self.files[path] = "\n".join(lines).removesuffix("\n") + "\n"
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        if not self.exists(path):
            raise ToolError(f"The path {path} does not exist")
        self.files = {p: t for p, t in self.files.items() if not under(p, path)}
        self.dirs = {d for d in self.dirs if not under(d, path)}
        return f"Successfully deleted {path}"

    def rename(self, old: str, new: str) -> str:
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        if self.file_above(new):  # found while looking whether the destination exists
            raise ToolError(f"Cannot use {new}: one of its parent directories is a file")
        if self.exists(new):
            raise ToolError(f"The destination {new} already exists")
        if not self.exists(old):
            raise ToolError(f"The path {old} does not exist")
        if new.startswith(old + "/"):
            raise ToolError(f"Cannot move {old} into itself ({new})")
        self.dirs.update(ancestors(new))
        self.files = {moved(p, old, new): t for p, t in self.files.items()}
        self.dirs = {moved(d, old, new) for d in self.dirs}
        return f"Successfully renamed {old} to {new}"

    def view_file(self, path: str) -> str:
        content = self.text_file(path) if path in self.files else None
        if content is None:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return f"Here's the content of {path} with line numbers:\n" + numbered(content.split("\n"))

    def listing(self, top: str) -> set[str]:
        """Entries a directory view shows: the directory and two levels below it."""
        depth = top.count("/")
        shown = {top} | {f + "" for f in self.files if f.startswith(top + "/")}
        shown |= {d + "/" for d in self.dirs if d.startswith(top + "/")}
        return {p for p in shown if p.rstrip("/").count("/") - depth <= 2}


def listed_paths(result: str) -> set[str]:
    """The paths of a directory view (second column of each line after the header)."""
    return {line.split("\t")[1] for line in result.split("\n")[1:]}


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="agentctl-model-")
        self.root = Path(self.tmp) / "m"
        self.store = MemoryStore(self.root)
        self.model = Model()

    def teardown(self) -> None:
        shutil.rmtree(self.tmp)

    def both(self, command: Mapping[str, object], expected: Callable[[], str]) -> None:
        try:
            want: tuple[str, str] = ("ok", expected())
        except ToolError as err:
            want = ("err", str(err))
        try:
            got = ("ok", self.store.execute(command))
        except ToolError as err:
            got = ("err", str(err))
        assert got == want, command

    @rule(path=PATHS, text=TEXT)
    def create(self, path: str, text: str) -> None:
        cmd = {"command": "create", "path": path, "file_text": text}
        self.both(cmd, lambda: self.model.create(path, text))

    @rule(path=PATHS, old=NONEMPTY, new=TEXT)
    def str_replace(self, path: str, old: str, new: str) -> None:
        cmd = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        self.both(cmd, lambda: self.model.str_replace(path, old, new))

    @rule(path=PATHS, line=st.integers(-1, 4), text=TEXT)
    def insert(self, path: str, line: int, text: str) -> None:
        cmd = {"command": "insert", "path": path, "insert_line": line, "insert_text": text}
        self.both(cmd, lambda: self.model.insert(path, line, text))

    @rule(path=PATHS)
    def delete(self, path: str) -> None:
        self.both({"command": "delete", "path": path}, lambda: self.model.delete(path))

    @rule(old=PATHS, new=PATHS)
    def rename(self, old: str, new: str) -> None:
        cmd = {"command": "rename", "old_path": old, "new_path": new}
        self.both(cmd, lambda: self.model.rename(old, new))

    @rule(path=PATHS)
    def view(self, path: str) -> None:
        if path == ROOT or path in self.model.dirs:
            shown = listed_paths(self.store.execute({"command": "view", "path": path}))
            assert shown == self.model.listing(path)
        else:
            self.both({"command": "view", "path": path}, lambda: self.model.view_file(path))

    @invariant()
    def tree_matches(self) -> None:
        files = assert_store_consistent(self.root)
        assert files == {p: len(t.encode()) for p, t in self.model.files.items()}
        for path, text in self.model.files.items():
            assert (self.root / path.removeprefix(ROOT + "/")).read_text() == text
        inside = [p.relative_to(self.root) for p in self.root.rglob("*") if p.is_dir()]
        # agentctl's own folders (the history's contents) are not the model's
        dirs = {
            ROOT + "/" + p.as_posix() for p in inside if not p.parts[0].startswith(RESERVED_PREFIX)
        }
        assert dirs == self.model.dirs


MemoryMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=20, deadline=None)
TestMemoryAgainstModel = pytest.mark.slow(MemoryMachine.TestCase)  # >1 s
