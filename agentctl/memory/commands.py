"""memory_20250818 tool inputs -> typed commands; `/memories/...` paths -> checked components.

Everything the model sends is validated here before the store touches the disk: a missing or
ill-typed field, an unknown command or a hostile path becomes a ToolError with a clear message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentctl.errors import ToolError
from agentctl.memory.fsops import RESERVED_PREFIX, is_reserved
from agentctl.memory.guard import PathRefusedError, shown, split_relative

ROOT = "/memories"
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


@dataclass(frozen=True)
class MemoryPath:
    """A checked memory path: the text as sent (echoed in results) and its components."""

    text: str
    parts: tuple[str, ...]

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def canonical(self) -> str:
        """The one spelling of this path (`/memories/./a//b` -> `/memories/a/b`): the journal's."""
        return "/".join((ROOT, *self.parts))


@dataclass(frozen=True)
class View:
    path: MemoryPath
    view_range: tuple[int, int] | None = None


@dataclass(frozen=True)
class Create:
    path: MemoryPath
    file_text: str


@dataclass(frozen=True)
class StrReplace:
    path: MemoryPath
    old_str: str
    new_str: str


@dataclass(frozen=True)
class Insert:
    path: MemoryPath
    insert_line: int
    insert_text: str


@dataclass(frozen=True)
class Delete:
    path: MemoryPath


@dataclass(frozen=True)
class Rename:
    old_path: MemoryPath
    new_path: MemoryPath


Command = View | Create | StrReplace | Insert | Delete | Rename


def parse_memory_path(path: str) -> MemoryPath:
    """Check a model-sent path: `/memories` or `/memories/...`, nothing hostile, not reserved."""
    if not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {shown(path)}")
    rest = path[len(ROOT) :]
    if rest and not rest.startswith("/"):
        raise ToolError(f"Path must be /memories or start with /memories/, got: {shown(path)}")
    try:
        parts = split_relative(rest.lstrip("/"), display=path)
    except PathRefusedError as err:
        if err.reason == "dotdot" and _escapes(rest):
            raise ToolError(f"Path {shown(path)} would escape /memories directory") from None
        raise
    if any(is_reserved(p) for p in parts):
        raise ToolError(
            f"Path {shown(path)} is reserved for agentctl's own files "
            f"(names starting with {RESERVED_PREFIX}, in any case); choose another name"
        )
    return MemoryPath(path, parts)


def _escapes(rest: str) -> bool:
    depth = 0
    for part in rest.split("/"):
        if part == "..":
            depth -= 1
        elif part not in ("", "."):
            depth += 1
        if depth < 0:
            return True
    return False


def parse_command(raw: Mapping[str, Any]) -> Command:
    """One tool input (as the model sends it) -> a typed command, or a ToolError."""
    if not isinstance(raw, Mapping):
        raise ToolError(f"Tool input must be a JSON object, got {type(raw).__name__}")
    name = raw.get("command")
    if name not in COMMANDS:
        if name is None:
            raise ToolError(f"Missing required field `command` (one of {', '.join(COMMANDS)})")
        raise ToolError(f"Unknown command: {name}")
    return _PARSERS[name](_Fields(raw, name))


class _Fields:
    """Typed access to the fields of one tool input, with messages naming field and command."""

    def __init__(self, raw: Mapping[str, Any], command: str) -> None:
        self.raw = raw
        self.command = command

    def _get(self, key: str, kind: type, label: str, default: Any = ...) -> Any:
        value = self.raw.get(key)
        if value is None and default is not ...:
            return default
        if value is None:
            raise ToolError(f"Missing required field `{key}` for the {self.command} command")
        if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
            raise ToolError(
                f"Field `{key}` of the {self.command} command must be {label}, "
                f"got {type(value).__name__}"
            )
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value: str = self._get(key, str, "a string", ... if default is None else default)
        return value

    def integer(self, key: str) -> int:
        value: int = self._get(key, int, "an integer")
        return value

    def path(self, key: str) -> MemoryPath:
        return parse_memory_path(self.text(key))

    def view_range(self) -> tuple[int, int] | None:
        value = self.raw.get("view_range")
        if value is None or (isinstance(value, list) and not value):
            return None  # absent or [] both mean the whole file, as in the SDK
        ok = isinstance(value, list) and len(value) == 2
        if not ok or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ToolError(
                f"Field `view_range` must be [start, end] (1-based line numbers, end -1 for the "
                f"end of the file), got {shown(repr(value))}"
            )
        return (value[0], value[1])


def _view(f: _Fields) -> Command:
    return View(f.path("path"), f.view_range())


def _create(f: _Fields) -> Command:
    return Create(f.path("path"), f.text("file_text"))


def _str_replace(f: _Fields) -> Command:
    # Missing new_str means "delete old_str" (documented); the SDK crashes on it instead.
    return StrReplace(f.path("path"), f.text("old_str"), f.text("new_str", default=""))


def _insert(f: _Fields) -> Command:
    return Insert(f.path("path"), f.integer("insert_line"), f.text("insert_text"))


def _delete(f: _Fields) -> Command:
    return Delete(f.path("path"))


def _rename(f: _Fields) -> Command:
    return Rename(f.path("old_path"), f.path("new_path"))


_PARSERS = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}
