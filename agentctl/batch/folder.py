"""A batch's folder: `batch.json` (how to run it again), `results.jsonl`, one folder per task.

A result line is written (flushed and synced) when its task ends, so a batch killed at any
moment keeps every finished task; `--resume` runs the tasks with no line. A line cut by the
kill is dropped when the file is opened again. A task continued by a resume (stopped on a
limit that the resume raised) gets a second line: an id's last line is the one that counts.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import math
import os
import secrets
import threading
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

from agentctl import clock
from agentctl.errors import UsageError
from agentctl.home import batches_dir
from agentctl.memory.fsops import write_all
from agentctl.profile.loader import BUILTIN_SOURCE
from agentctl.profile.settings import Profile
from agentctl.sessions.transcript import json_safe, make_private_dirs

FORMAT = "agentctl-batch-1"
MANIFEST = "batch.json"
RESULTS = "results.jsonl"


@dataclass(frozen=True)
class BatchSpec:
    """What a batch runs and how: enough to run the rest of it with `--resume`. Each batch
    setting is defined here once: `agentctl batch`'s flags and `run_batch`'s keywords give
    one (batch.launch.BatchRequest adds where the batch goes), and the folder saves it.

    0 or "" in `parallel`, `executor`, `via`: not given. A new batch takes the default
    (`resolved`), a resume keeps what it saved; a saved spec always has all three. The
    manifest check reads the fields: each one's type, and its metadata (`choices`, `least`,
    `saved`: the types a saved spec allows when narrower than the field's).
    """

    source: str | None = field(default=None, metadata={"saved": (str,)})
    profile: str | None = None
    sets: tuple[str, ...] = ()
    offline: bool = False
    memory: str = field(default="isolated", metadata={"choices": ("isolated", "shared")})
    # default 1; with via "batches": every task in each round
    parallel: int = field(default=0, metadata={"least": 1})
    max_usd: float | None = None
    trust_task: bool = False
    executor: str = ""  # "local" (default) or "ray" (batch.executor)
    address: str | None = None  # the Ray cluster (None: a local instance for the batch)
    # "messages" (default), or "batches": lockstep rounds via Message Batches
    via: str = field(default="", metadata={"choices": ("messages", "batches")})
    cwd: str = field(default_factory=lambda: str(Path.cwd()))

    def resolved(self, tasks: int) -> BatchSpec:
        """The settings a batch of `tasks` tasks runs with: each one not given, its default."""
        via = self.via or "messages"
        every = max(tasks, 1) if via == "batches" else 1
        executor = self.executor or "local"
        return replace(self, parallel=self.parallel or every, executor=executor, via=via)

    def to_json(self) -> dict[str, Any]:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(BatchSpec)}
        return {"format": FORMAT, **fields, "sets": list(self.sets)}

    def profile_arg(self) -> Profile | str | None:
        """The profile as the batch found it when it started: a file, or the built-in one
        (None, in a manifest from before this was recorded: the lookup, run again)."""
        return Profile() if self.profile == BUILTIN_SOURCE else self.profile


def new_out_dir() -> Path:
    """A new folder under the data folder's `batches/`, named by the time and 4 random hex."""
    name = clock.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)
    return batches_dir() / name


def create(out: Path, spec: BatchSpec) -> None:
    """Make the batch folder (it may exist, but must not hold a batch) and write the manifest."""
    if (out / MANIFEST).exists():
        raise UsageError(f"{out}: already holds a batch; continue it with --resume {out}")
    try:
        make_private_dirs(out)
        write_private(out / MANIFEST, (json.dumps(spec.to_json(), indent=2) + "\n").encode())
    except OSError as err:
        raise UsageError(f"{out}: cannot create the batch folder ({err.strerror})") from None


LOCK = ".lock"


class BatchLock:
    """The batch folder held by this process (flock on `.lock`): a second `--resume` of the
    same folder while one runs would run every task again (each id twice, paid twice)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        try:
            self._fd: int | None = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as err:
            raise UsageError(f"{out}: cannot lock the batch folder ({err.strerror})") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.release()
            raise UsageError(
                f"{out}: another agentctl batch is running this batch; let it finish "
                "(or stop it) before --resume"
            ) from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the lock
            self._fd = None


def write_private(path: Path, data: bytes) -> None:
    """`path` holding `data`, readable by this user only (0600 whatever the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        write_all(fd, data)
    finally:
        os.close(fd)


def load_spec(out: Path) -> BatchSpec:
    """The manifest of the batch in `out` (UsageError naming the file if it is not one)."""
    path = out / MANIFEST
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise UsageError(f"{path}: not a batch folder ({_why(err)})") from None
    if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
        raise UsageError(f"{path}: not an {FORMAT} manifest")
    for key, value in data.items():
        why = _manifest_problem(key, value)
        if why:
            raise UsageError(f"{path}: {key}: {why}; fix it or start the batch again")
    try:
        return BatchSpec(**{**data, "sets": tuple(data.get("sets", ()))})
    except TypeError as err:
        raise UsageError(f"{path}: {err}") from None


def choices() -> dict[str, tuple[str, ...]]:
    """The BatchSpec settings limited to a few values, and those values."""
    return {n: f.metadata["choices"] for n, f in _fields().items() if "choices" in f.metadata}


def default_of(name: str) -> Any:
    return _fields()[name].default


@cache
def _fields() -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(BatchSpec)}


@cache
def _manifest_types() -> dict[str, tuple[type, ...]]:
    """Each setting's JSON types in a manifest, from BatchSpec's annotations (a tuple is
    saved as a list; a float may be saved as an int)."""
    hints = get_type_hints(BatchSpec)
    types: dict[str, tuple[type, ...]] = {}
    for name, f in _fields().items():
        hinted = get_args(hints[name]) if isinstance(hints[name], UnionType) else (hints[name],)
        named = [get_origin(t) or t for t in f.metadata.get("saved", hinted)]
        json_types = [(int, float) if t is float else (list if t is tuple else t,) for t in named]
        types[name] = tuple(t for one in json_types for t in one)
    return types


def _manifest_problem(key: str, value: Any) -> str | None:
    """Why the manifest's `key` cannot be `value` (None: it can; an unknown key is left to
    BatchSpec, which names it)."""
    types = _manifest_types().get(key)
    if types is None:
        return None
    wrong = isinstance(value, bool) and bool not in types
    if wrong or not isinstance(value, types):
        return f"{value!r} is not {' or '.join(t.__name__ for t in types)}"
    return _value_problem(key, value)


def _value_problem(key: str, value: Any) -> str | None:
    if isinstance(value, list) and not all(isinstance(item, str) for item in value):
        return "must be a list of KEY=VALUE strings"
    least = _fields()[key].metadata.get("least")
    if least is not None and value < least:
        return f"must be at least {least}"
    named = choices().get(key)
    if named and value not in named:
        return f"{value!r}: use {' or '.join(named)}"
    return None


def _why(err: Exception) -> str:
    if isinstance(err, RecursionError):
        return "JSON nested too deeply"
    return err.strerror or str(err) if isinstance(err, OSError) else "not valid JSON"


def task_folder(out: Path, task_id: str) -> Path:
    return out / "tasks" / task_id


class ResultsStore:
    """`results.jsonl` of one batch: the lines read back, and appends from many threads."""

    def __init__(self, out: Path) -> None:
        self.path = out / RESULTS
        self._lock = threading.Lock()
        self.lines: list[dict[str, Any]] = []
        for line in _read_lines(self.path):
            self._keep(line)
        self.closed = False

    def finished(self) -> set[str]:
        return {str(line["id"]) for line in self.lines}

    def write(self, line: dict[str, Any]) -> bool:
        """Append one line, synced; False (nothing written) once the store is closed."""
        data = (json_safe(json.dumps(line, ensure_ascii=False)) + "\n").encode("utf-8")
        with self._lock:
            if self.closed:
                return False
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._keep(line)
        return True

    def _keep(self, line: dict[str, Any]) -> None:
        """`line` as its task's line: in the place of an earlier one of the same id."""
        for n, old in enumerate(self.lines):
            if old["id"] == line["id"]:
                self.lines[n] = line
                return
        self.lines.append(line)

    def close(self) -> None:
        """No more lines (after Ctrl-C: tasks still running are not recorded as finished)."""
        with self._lock:
            self.closed = True


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """The complete lines of `path`; a last line cut by a kill is removed from the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    whole = raw[: raw.rfind(b"\n") + 1]
    if len(whole) != len(raw):
        os.truncate(path, len(whole))
    lines = whole.decode("utf-8", errors="replace").splitlines()
    return [_parse_line(text, f"{path}:{n}") for n, text in enumerate(lines, 1) if text.strip()]


def _parse_line(text: str, where: str) -> dict[str, Any]:
    try:
        line = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deeply
        line = None
    if not isinstance(line, dict) or not isinstance(line.get("id"), str):
        raise UsageError(f"{where}: not a result line (a JSON object with an id); fix or remove it")
    why = _line_problem(line)
    if why:
        raise UsageError(f"{where}: {why}; fix or remove the line")
    return line


_LINE_STRINGS = ("status", "answer", "session", "memory", "error", "source", "pricing", "limit")


def _line_problem(line: dict[str, Any]) -> str | None:
    """What is wrong with a result line read back (None: the summary and a resume can use
    it). Every field is optional (a line written by hand may hold just its id)."""
    for key in _LINE_STRINGS:
        if line.get(key) is not None and not isinstance(line[key], str):
            return f"{key}: {line[key]!r} is not a string"
    turns = line.get("turns")
    if turns is not None and not (_whole(turns) and turns >= 0):
        return f"turns: {turns!r} is not a count"
    cost = line.get("cost_usd")
    if cost is not None and not _number(cost):  # a negative cost would lift --max-usd
        return f"cost_usd: {cost!r} is not a number from 0"
    totals = line.get("totals")
    if totals is None:
        return None
    if not isinstance(totals, dict):
        return f"totals: {totals!r} is not an object"
    # Usage objects of counts (`cache_creation`, `server_tool_use`) hold numbers too.
    objects = {k: v for k, v in totals.items() if isinstance(v, dict)}
    inner = [(f"{k}.{name}", n) for k, v in objects.items() for name, n in v.items()]
    outer = [(k, v) for k, v in totals.items() if k not in objects]
    for key, value in outer + inner:
        if value is not None and not _number(value):
            return f"totals.{key}: {value!r} is not a number from 0"
    return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    """A finite number from 0 (what a task spent or counted)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value >= 0
