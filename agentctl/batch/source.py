"""A batch's SOURCE (a folder of task files, a glob, or a JSONL file) -> its tasks, in order."""

from __future__ import annotations

import dataclasses
import glob
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.agent.task import Task, check_overrides, parse_task, read_task
from agentctl.errors import UsageError
from agentctl.profile.loader import PATH_KEYS, deep_merge, dotted_path, nest

# A task id names a folder in the batch's output: letters, digits, - _ . (not first).
_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")
TASK_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True)
class BatchTask:
    """One task of a batch: its id, the parsed task and where it was read (`file` or
    `file:line`, for messages)."""

    id: str
    task: Task
    where: str


def read_source(source: str) -> list[BatchTask]:
    """The tasks of SOURCE; UsageError (exit 2) naming the file (and line) on any problem."""
    path = Path(source).expanduser()
    if path.is_dir():
        tasks = _from_files(sorted(p for p in path.iterdir() if _is_task_file(p)), source)
    elif path.is_file() and path.suffix == ".jsonl":
        tasks = _from_jsonl(path)
    elif path.is_file():
        tasks = _from_files([path], source)
    elif glob.has_magic(source):
        found = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
        tasks = _from_files([p for p in found if p.is_file()], source)
    else:
        raise UsageError(f"batch source {source}: no such folder, file or matching glob")
    return _unique(tasks, source)


def _is_task_file(path: Path) -> bool:
    return path.is_file() and path.suffix in TASK_SUFFIXES and not path.name.startswith(".")


def _from_files(paths: list[Path], source: str) -> list[BatchTask]:
    if not paths:
        raise UsageError(f"batch source {source}: no task files (*.md, *.markdown, *.txt)")
    return [BatchTask(_file_id(p), read_task(str(p), io.StringIO()), str(p)) for p in paths]


def _file_id(path: Path) -> str:
    """The file's stem, made a valid id (other characters become `_`)."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", path.stem).lstrip(".") or "task"
    return stem[:100]


def _from_jsonl(path: Path) -> list[BatchTask]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"batch source {path}: cannot read it as UTF-8 text: {err}") from None
    base = path.resolve().parent
    tasks = [_jsonl_task(text, f"{path}:{n}", base) for n, text in _numbered(lines)]
    if not tasks:
        raise UsageError(f"batch source {path}: no task lines")
    return tasks


def _numbered(lines: list[str]) -> Iterable[tuple[int, str]]:
    return ((n, text) for n, text in enumerate(lines, 1) if text.strip())


def _jsonl_task(text: str, where: str, base_dir: Path) -> BatchTask:
    """One `{"id": ..., "task": ..., "set": {...}}` line; the task is the prompt's text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"batch source {where}: not valid JSON ({err.msg})") from None
    except RecursionError:
        raise UsageError(f"batch source {where}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise UsageError(f"batch source {where}: must be a JSON object with id and task")
    unknown = sorted(set(data) - {"id", "task", "set"})
    if unknown:
        raise UsageError(f"batch source {where}: {unknown[0]}: unknown key (use id, task, set)")
    task_id, prompt, sets = data.get("id"), data.get("task"), data.get("set", {})
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not _ID.fullmatch(task_id):
        raise UsageError(f"batch source {where}: id: must be letters, digits, - _ . (1-100)")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UsageError(f"batch source {where}: task: must be a non-empty string (the prompt)")
    if not isinstance(sets, dict):
        raise UsageError(f'batch source {where}: set: must be an object of {{"key": value}}')
    task = parse_task(prompt, where, base_dir)
    return BatchTask(task_id, _with_sets(task, sets, where, base_dir), where)


def _with_sets(task: Task, sets: dict[str, Any], where: str, base_dir: Path) -> Task:
    """The line's `set` joins the task's front matter: checked like it, and held to the same
    rules (it may tune a run, not widen it, unless --trust-task). Its paths are taken from
    the source's folder, like the front matter's, so the path checked is the path used."""
    data: dict[str, Any] = {}
    for key, value in sets.items():
        path = dotted_path(key)
        if path is None:
            raise UsageError(f"batch source {where}: set: {key!r} is not a dotted profile key")
        if ".".join(path) in PATH_KEYS and isinstance(value, str) and value:
            value = str((base_dir / Path(value).expanduser()).resolve())
        data = deep_merge(data, nest(path, value))
    merged = deep_merge(task.overrides, data)
    check_overrides(merged, where)
    return dataclasses.replace(task, overrides=merged)


def _unique(tasks: list[BatchTask], source: str) -> list[BatchTask]:
    seen: dict[str, str] = {}
    for task in tasks:
        if task.id in seen:
            raise UsageError(
                f"batch source {task.where}: id {task.id} already used by {seen[task.id]}"
            )
        seen[task.id] = task.where
    return tasks
