"""A task: a Markdown file (or stdin) whose body is the prompt, with optional TOML front matter.

Front matter sits between two `+++` lines at the very top and overrides profile keys for this
task (`model`, `max_turns`, `[tools]`, `[memory]`, ...). Relative paths in it are taken from
the task file's folder. Two keys are not profile keys: `workspace` (the workspace directory)
and `emulator_script` (the scripted-model file `--offline` runs use instead of the default
policy).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agentctl.errors import ConfigError, UsageError
from agentctl.profile.keys import path_keys
from agentctl.profile.legacy import migrate
from agentctl.profile.preset import example_hint
from agentctl.profile.schema import FieldError, convert_table
from agentctl.profile.settings import Profile
from agentctl.profile.trust import FrontMatter

FENCE = "+++"
YAML_FENCE = "---"
# A YAML mapping line (`model: x`) or a list item under one (`  - memory`).
YAML_KEY = re.compile(r"\s*([A-Za-z_][\w.-]*\s*:(\s|$)|-\s)")
STDIN = "-"
WORKSPACE_DIR = "workspace"
WEB_DIR = "web"
SCRIPT_KEY = "emulator_script"
# Profile keys holding paths (memory.root, ...): made absolute against the task's folder
# before merging. Read from their one definition (profile/settings.py).
_PATH_KEYS = tuple(tuple(key.split(".")) for key in path_keys())


@dataclass(frozen=True)
class Task:
    """The prompt and what the task file says about how to run it."""

    prompt: str
    source: str
    base_dir: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    workspace: Path | None = None
    script: Path | None = None

    def front_matter(self, *, workspace_given: bool = False) -> FrontMatter:
        """What the task file sets, for `resolve_profile`'s check: its keys and its paths.

        The workspace counts only when the command line does not name one (`workspace_given`).
        """
        named = {SCRIPT_KEY: self.script, WEB_DIR: default_web(self)}
        if not workspace_given:
            named[WORKSPACE_DIR] = self.workspace or default_workspace(self)
        paths = {key: path for key, path in named.items() if path is not None}
        return FrontMatter(self.overrides, self.source, self.base_dir, paths)


def read_task(arg: str, stdin: TextIO) -> Task:
    """Read TASK (a path, or `-` for stdin) and parse it; UsageError/ConfigError naming it."""
    if arg == STDIN:
        return parse_task(read_stdin(stdin), "<stdin>", Path.cwd())
    path = Path(arg).expanduser()
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "no such file"
        copy = example_hint(arg)
        if copy is not None:  # the docs' `examples/NAME/task.md`, installed from a wheel
            raise UsageError(f"task {arg}: {what} (the shipped example: `{copy}` puts it there)")
        raise UsageError(f"task {arg}: {what} (give a Markdown file, or - to read stdin)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"task {arg}: cannot read it as UTF-8 text: {err}") from None
    return parse_task(text, arg, path.resolve().parent)


def read_stdin(stdin: TextIO) -> str:
    """The task text on stdin, decoded as strictly as a task file (bytes that are not UTF-8
    are a usage error here, not a request the API refuses five times)."""
    buffer = getattr(stdin, "buffer", None)
    try:
        if buffer is not None:
            return bytes(buffer.read()).decode("utf-8")
        text = stdin.read()
        text.encode("utf-8")  # lone surrogates: what a lenient decoder made of bad bytes
        return text
    except UnicodeError as err:
        raise UsageError(f"task <stdin>: cannot read it as UTF-8 text: {err}") from None


def parse_task(text: str, source: str, base_dir: Path) -> Task:
    """Split front matter from the body, check the front matter keys against the profile."""
    front, body = split_front_matter(text, source)
    prompt = body.strip()
    if not prompt:
        raise UsageError(
            f"task {source}: the prompt is empty (write the task below the front matter)"
        )
    data = _parse_toml(front, source) if front is not None else {}
    workspace = _path_key(data.pop(WORKSPACE_DIR, None), WORKSPACE_DIR, source, base_dir)
    script = _path_key(data.pop(SCRIPT_KEY, None), SCRIPT_KEY, source, base_dir)
    overrides = _absolute_paths(data, base_dir)
    check_overrides(overrides, source)
    return Task(prompt, source, base_dir, overrides, workspace, script)


def split_front_matter(text: str, source: str) -> tuple[str | None, str]:
    """(front matter text or None, body)."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if lines and lines[0].strip() == YAML_FENCE and _yaml_front_matter(lines):
        raise ConfigError(
            f"task {source}: starts with YAML front matter (---); agentctl reads TOML front"
            f" matter between {FENCE} lines (e.g. {FENCE} / max_turns = 20 / {FENCE})"
        )
    if not lines or lines[0].strip() != FENCE:
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ConfigError(f"task {source}: front matter opened with {FENCE} on line 1 is never closed")


def _yaml_front_matter(lines: list[str]) -> bool:
    """True when `---` on line 1 opens a block of `key: value` lines closed by `---`."""
    for line in lines[1:]:
        if line.strip() == YAML_FENCE:
            return True
        if line.strip() and not line.lstrip().startswith("#") and not YAML_KEY.match(line):
            return False
    return False


def _parse_toml(front: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(front)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"task {source}: front matter: invalid TOML: {err}") from None
    except RecursionError:
        raise ConfigError(
            f"task {source}: front matter: arrays or tables nested too deeply"
        ) from None


def _path_key(value: Any, key: str, source: str, base_dir: Path) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"task {source}: front matter: {key}: expected a path (a string)")
    return (base_dir / Path(value).expanduser()).resolve()


def _absolute_paths(data: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    for *tables, key in _PATH_KEYS:
        section: Any = data
        for table in tables:
            section = section.get(table) if isinstance(section, dict) else None
        if isinstance(section, dict) and isinstance(section.get(key), str):
            section[key] = str((base_dir / Path(section[key]).expanduser()).resolve())
    return data


def check_overrides(overrides: Mapping[str, Any], source: str) -> None:
    """Unknown keys and wrong types in the front matter, reported against the task file."""
    try:
        convert_table(Profile, migrate(dict(overrides))[0], "", Path.cwd())
    except FieldError as err:
        raise ConfigError(f"task {source}: front matter: {err.key}: {err.message}") from None


def default_web(task: Task) -> Path | None:
    """`web/` beside the task file, when there is one: the offline web of `--offline` runs."""
    candidate = task.base_dir / WEB_DIR
    return candidate if task.source != "<stdin>" and candidate.is_dir() else None


def default_workspace(task: Task) -> Path | None:
    """`workspace/` beside the task file, when there is one."""
    candidate = task.base_dir / WORKSPACE_DIR
    return candidate if task.source != "<stdin>" and candidate.is_dir() else None
