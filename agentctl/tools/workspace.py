"""Read-only workspace tools (list_files, read_file, search_text), confined to one root.

Every path the model sends goes through `agentctl.memory.guard` (no `..`, no symlinks, no
escapes); errors are ToolError one-liners that echo the path as given, never a host path.
Result formats are a contract shared with the emulator's default policy (see docs/run.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentctl.errors import ToolError
from agentctl.memory.guard import PathRefusedError, open_inside, resolve_inside, shown
from agentctl.tools.textscan import BoundedPattern, LineReader, shown_line

MAX_MATCHES = 200
MAX_LINE_CHARS = 500
DEFAULT_LIMIT = 2000
SEARCH_BUDGET_S = 10.0  # matching time one search_text call may spend, all files together


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_PATH_PROP = {"type": "string", "description": "Path relative to the workspace root."}


def _str_arg(tool_input: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = tool_input.get(key, default)
    if not isinstance(value, str):
        raise ToolError(f"Error: '{key}' must be a string")
    return value


def _path_arg(tool_input: Mapping[str, Any], default: str | None = None) -> str:
    """The `path` argument, with `\\xNN` (NN from 80) read back as that byte of a name that
    is not UTF-8: results show such names that way (tools.registry.sendable)."""
    rel = _str_arg(tool_input, "path", default)
    return _BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), rel) if "\\x" in rel else rel


def _int_arg(tool_input: Mapping[str, Any], key: str, default: int) -> int:
    value = tool_input.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"Error: '{key}' must be a positive integer")
    return value


_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def _target(root: Path, rel: str) -> Path:
    try:
        path = resolve_inside(root, rel)
    except PathRefusedError as err:
        raise ToolError(f"Error: {err}") from None
    if not path.exists():
        raise ToolError(f"Error: The path {shown(rel)} does not exist")
    return path


def walk_files(root: Path, start: Path) -> Iterator[Path]:
    """Regular files under `start`, sorted, hidden names and symlinks skipped."""
    if start.is_file():
        yield start
        return
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not name.startswith(".") and not path.is_symlink() and path.is_file():
                yield path


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


@contextmanager
def _lines(root: Path, rel: str) -> Iterator[LineReader]:
    """The file's lines, streamed (see LineReader): memory stays bounded whatever its size."""
    try:
        fd = open_inside(root, rel)
    except PathRefusedError as err:
        raise ToolError(f"Error: {err}") from None
    except FileNotFoundError:
        raise ToolError(f"Error: The path {shown(rel)} does not exist") from None
    except (IsADirectoryError, NotADirectoryError):
        raise ToolError(f"Error: The path {shown(rel)} is not a file") from None
    with os.fdopen(fd, "rb") as handle:
        yield LineReader(handle)


class _Capped:
    """Collects result lines until adding one would pass the character cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap if cap > 0 else 1 << 62
        self.lines: list[str] = []
        self.size = 0

    def add(self, line: str) -> bool:
        """Append `line` if it fits (room is kept for a marker line); False when full."""
        if self.size + len(line) + 1 > self.cap - 120 and self.lines:
            return False
        self.lines.append(line)
        self.size += len(line) + 1
        return True

    def text(self, marker: str = "") -> str:
        return "\n".join([*self.lines, marker] if marker else self.lines)


class WorkspaceTools:
    """The three read-only tools over one workspace root; `tools()` gives them to a ToolBox."""

    def __init__(
        self, root: Path, max_result_chars: int, search_budget_s: float = SEARCH_BUDGET_S
    ) -> None:
        self.root = root.resolve()
        self.cap = max_result_chars
        self.search_budget_s = search_budget_s

    def tools(self) -> list[_WorkspaceTool]:
        return [
            _WorkspaceTool("list_files", LIST_FILES, self.list_files),
            _WorkspaceTool("read_file", READ_FILE, self.read_file),
            _WorkspaceTool("search_text", SEARCH_TEXT, self.search_text),
        ]

    def list_files(self, tool_input: Mapping[str, Any]) -> str:
        """`{relative/path}\\t{size}` per regular file under `path`, recursive and sorted."""
        start = _target(self.root, _path_arg(tool_input, "."))
        files = walk_files(self.root, start)  # walked, not listed: a tree may be huge
        out = _Capped(self.cap)
        for path in files:
            if not out.add(f"{_relative(self.root, path)}\t{path.stat().st_size}"):
                left = 1 + sum(1 for _ in files)
                return out.text(f"[truncated: {left} more files; list a subdirectory]")
        return out.text() if out.lines else "[no files]"

    def read_file(self, tool_input: Mapping[str, Any]) -> str:
        """Numbered lines `offset..offset+limit-1`, then a `[truncated ...]` line if more remain."""
        rel = _path_arg(tool_input)
        offset = _int_arg(tool_input, "offset", 1)
        limit = _int_arg(tool_input, "limit", DEFAULT_LIMIT)
        with _lines(self.root, rel) as reader:
            return self._numbered(reader, offset, limit)

    def _numbered(self, reader: LineReader, offset: int, limit: int) -> str:
        """Reads up to line `offset + limit - 1` and no further (one byte of look-ahead)."""
        out, n = _Capped(self.cap), 0
        for n, line in enumerate(reader, 1):
            if n < offset:
                continue
            if not out.add(f"{n:>6}\t{shown_line(line, reader)}"):
                return out.text(_continue_at(n))
            if n == offset + limit - 1:
                break
        if n < offset:
            if n == 0:
                return "[empty file]"
            raise ToolError(f"Error: offset {offset} is past the end ({n} lines)")
        return out.text(_continue_at(n + 1) if reader.more() else "")

    def search_text(self, tool_input: Mapping[str, Any]) -> str:
        """`{relative/path}:{line_no}:{line}` per match, at most MAX_MATCHES.

        Each line is searched in its first LINE_BYTES, and all matching together gets
        `search_budget_s`: past it the call is a ToolError, not a run that hangs.
        """
        pattern = BoundedPattern(_str_arg(tool_input, "pattern"), self.search_budget_s)
        start = _target(self.root, _path_arg(tool_input, "."))
        out, count = _Capped(self.cap), 0
        for rel, n, line in self._matches(start, pattern):
            count += 1
            if count > MAX_MATCHES or not out.add(f"{rel}:{n}:{line[:MAX_LINE_CHARS]}"):
                return out.text(
                    f"[truncated: more than {count - 1} matches; narrow the pattern or path]"
                )
        return out.text() if count else "[no matches]"

    def _matches(self, start: Path, pattern: BoundedPattern) -> Iterator[tuple[str, int, str]]:
        """(relative path, line number, line) of each matching line, file by file."""
        for path in walk_files(self.root, start):
            rel = _relative(self.root, path)
            with _lines(self.root, rel) as reader:
                for n, line in enumerate(reader, 1):
                    if pattern.search(line):
                        yield rel, n, line


def _continue_at(n: int) -> str:
    return f"[truncated: more lines follow; call read_file with offset={n} to continue]"


class _WorkspaceTool:
    """One workspace tool as the ToolBox sees it."""

    self_limited = False  # the ToolBox caps its results

    def __init__(self, name: str, definition: dict[str, Any], fn: Any) -> None:
        self._name = name
        self._definition = definition
        self._fn = fn

    @property
    def name(self) -> str:
        return self._name

    def definition(self) -> dict[str, Any]:
        return dict(self._definition)

    def call(self, tool_input: Mapping[str, Any]) -> str:
        result: str = self._fn(tool_input)
        return result


LIST_FILES: dict[str, Any] = {
    "name": "list_files",
    "description": (
        "List the regular files under a directory of the workspace, recursively, one per line "
        "as 'relative/path<TAB>size_bytes'. Hidden files are skipped. Read-only."
    ),
    "input_schema": _schema({"path": {**_PATH_PROP, "default": "."}}, []),
}
READ_FILE: dict[str, Any] = {
    "name": "read_file",
    "description": (
        "Read a text file of the workspace. Lines come numbered like 'cat -n'. Use offset "
        "(1-based first line) and limit (number of lines) to page through long files; a last "
        "line '[truncated: ...]' says where to continue. Read-only."
    ),
    "input_schema": _schema(
        {
            "path": _PATH_PROP,
            "offset": {"type": "integer", "minimum": 1, "default": 1},
            "limit": {"type": "integer", "minimum": 1, "default": DEFAULT_LIMIT},
        },
        ["path"],
    ),
}
SEARCH_TEXT: dict[str, Any] = {
    "name": "search_text",
    "description": (
        "Search the workspace files for a Python regular expression; one line per match as "
        f"'relative/path:line_no:line', at most {MAX_MATCHES} matches. Read-only."
    ),
    "input_schema": _schema(
        {
            "pattern": {"type": "string", "description": "Python regular expression."},
            "path": {**_PATH_PROP, "default": "."},
        },
        ["pattern"],
    ),
}
