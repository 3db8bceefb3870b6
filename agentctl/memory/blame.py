"""Questions the history answers: sessions and turns, who wrote each line, what a session
changed, and how to undo it without losing what came later (a three-way merge per file)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

Entry = dict[str, Any]
ReadBlob = Callable[[str], bytes | None]


@dataclass(frozen=True)
class Origin:
    """Which change wrote something: its session, turn, tool_use id, time and command."""

    session: str | None
    turn: int | None
    tool_use_id: str | None
    time: str
    command: str

    @classmethod
    def of(cls, entry: Entry) -> Origin:
        return cls(
            entry.get("session"),
            entry.get("turn"),
            entry.get("tool_use_id"),
            str(entry.get("time", "")),
            str(entry.get("command", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


UNRECORDED = Origin(None, None, None, "", "unrecorded")  # changed outside agentctl


def changes_of(entry: Entry) -> dict[str, tuple[str | None, str | None]]:
    """An entry's `changes` as (before, after) pairs; {} for entries from before the history."""
    raw = entry.get("changes")
    if not isinstance(raw, dict):
        return {}
    return {
        path: (pair[0], pair[1])
        for path, pair in raw.items()
        if isinstance(pair, list) and len(pair) == 2
    }


# -- log ---------------------------------------------------------------------------------


@dataclass
class SessionChanges:
    """What one session did to the store: when, in which turns, to which files."""

    session: str
    first: str
    last: str
    changes: int = 0
    turns: list[int] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sessions(history: list[Entry]) -> list[SessionChanges]:
    """One summary per session that changed the store, in order of its first change."""
    found: dict[str, SessionChanges] = {}
    for entry in history:
        name = entry.get("session")
        if not isinstance(name, str):
            continue
        time = str(entry.get("time", ""))
        summary = found.setdefault(name, SessionChanges(name, time, time))
        summary.last, summary.changes = time, summary.changes + 1
        turn = entry.get("turn")
        if isinstance(turn, int) and turn not in summary.turns:
            summary.turns.append(turn)
        for path in changes_of(entry):
            if path not in summary.paths:
                summary.paths.append(path)
    return list(found.values())


# -- blame -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlameLine:
    number: int
    text: str
    origin: Origin


def lines(data: bytes | None) -> list[str]:
    """A file's lines, each with its newline (split on `\\n` only)."""
    if not data:
        return []
    text = data.decode("utf-8", errors="replace")
    return text.splitlines(keepends=True) if "\r" not in text else _split_lf(text)


def _split_lf(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    return out + ([parts[-1]] if parts[-1] else [])


def blame(history: list[Entry], path: str, current: bytes, read: ReadBlob) -> list[BlameLine]:
    """Each line of `current` (the file at `path` now) with the change that last wrote it.

    Follows the file through renames; lines the history cannot account for (a hand edit, a
    pruned or pre-history version) are UNRECORDED.
    """
    tracked: dict[str, list[tuple[str, Origin]]] = {}
    for entry in history:
        _step(tracked, entry, read)
    now = lines(current)
    carried = _carry(tracked.get(path, []), now, UNRECORDED)
    return [BlameLine(i + 1, text, origin) for i, (text, origin) in enumerate(carried)]


def _step(tracked: dict[str, list[tuple[str, Origin]]], entry: Entry, read: ReadBlob) -> None:
    origin = Origin.of(entry)
    changes = changes_of(entry)
    gone = {before: tracked.get(p, []) for p, (before, after) in changes.items() if after is None}
    for path, (before, after) in changes.items():
        if after is None:
            tracked.pop(path, None)
            continue
        if before is None and after in gone:  # a move: the lines keep their origins
            tracked[path] = list(gone[after])
            continue
        tracked[path] = _carry(tracked.get(path, []), lines(read(after)), origin)


def _carry(
    old: list[tuple[str, Origin]], new: list[str], origin: Origin
) -> list[tuple[str, Origin]]:
    """The new lines: those kept from `old` keep their origin, the rest get `origin`."""
    texts = [text for text, _ in old]
    out: list[tuple[str, Origin]] = [(text, origin) for text in new]
    matcher = difflib.SequenceMatcher(None, texts, new, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            out[b + k] = old[a + k]
    return out


# -- diff --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """One file one entry of a session changed, with both sides' content (None: no file)."""

    origin: Origin
    path: str
    before: bytes | None
    after: bytes | None
    missing: bool  # a side's content was pruned from the history

    def unified(self) -> str:
        where = f"{self.origin.session} turn {self.origin.turn}" if self.origin.turn else ""
        label = f"{self.origin.command} {self.origin.time} {where}".strip()
        diff = difflib.unified_diff(
            lines(self.before),
            lines(self.after),
            fromfile=f"a{self.path}" if self.before is not None else "/dev/null",
            tofile=f"b{self.path}" if self.after is not None else "/dev/null",
            lineterm="\n",
        )
        body = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
        return f"# {label}\n{body}" if body else f"# {label}: {self.path} (no text change)\n"

    def to_json(self) -> dict[str, Any]:
        return {
            **self.origin.to_json(),
            "path": self.path,
            "missing": self.missing,
            "diff": self.unified(),
        }


def session_changes(history: list[Entry], session: str, read: ReadBlob) -> list[FileChange]:
    """Every file change the session made, in order."""
    return list(_file_changes((e for e in history if e.get("session") == session), read))


def _file_changes(entries: Iterator[Entry], read: ReadBlob) -> Iterator[FileChange]:
    for entry in entries:
        for path, (before, after) in changes_of(entry).items():
            was = read(before) if before else None
            will = read(after) if after else None
            missing = (before is not None and was is None) or (after is not None and will is None)
            yield FileChange(Origin.of(entry), path, was, will, missing)


# -- revert ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Conflict:
    path: str
    why: str


def undo(
    history: list[Entry], session: str, now: dict[str, bytes | None], read: ReadBlob
) -> tuple[dict[str, bytes | None], list[Conflict]]:
    """The files after undoing every change of `session`, from `now` (the affected files as
    they are; None: no file), and the conflicts that make that impossible without losing a
    later change. Each change is undone, newest first, by a three-way merge."""
    state = dict(now)
    conflicts: list[Conflict] = []
    for change in reversed(session_changes(history, session, read)):
        if change.missing:
            conflicts.append(Conflict(change.path, "its content was pruned from the history"))
            continue
        current = state.get(change.path)
        undone = three_way(current, base=change.after, target=change.before)
        if undone is None:
            later = _later_sessions(history, session, change)
            conflicts.append(Conflict(change.path, f"changed since by {later}"))
        else:
            state[change.path] = undone[0]
    return state, conflicts


def three_way(
    current: bytes | None, *, base: bytes | None, target: bytes | None
) -> tuple[bytes | None] | None:
    """A file taken from `base` to `target` where it is `current` now (None: no file): the
    result in a 1-tuple, or None when `current` changed the same lines (or the file's
    existence) differently."""
    if current == base:
        return (target,)
    if current == target:
        return (current,)  # already there
    if current is None or base is None or target is None:
        return None
    merged = merge3(lines(base), lines(current), lines(target))
    return None if merged is None else ("".join(merged).encode("utf-8"),)


def _later_sessions(history: list[Entry], session: str, change: FileChange) -> str:
    times = [
        str(e.get("session") or "cli")
        for e in history
        if str(e.get("time", "")) >= change.origin.time
        and e.get("session") != session
        and change.path in changes_of(e)
    ]
    return ", ".join(dict.fromkeys(times)) or "a change outside agentctl"


def merge3(base: list[str], ours: list[str], theirs: list[str]) -> list[str] | None:
    """Both sides' changes to `base` merged; None where they change the same (or adjacent)
    lines differently (a conflict)."""
    syncs = _sync_regions(base, ours, theirs)
    out: list[str] = []
    at_base = at_ours = at_theirs = 0
    for base_start, base_end, ours_start, theirs_start in syncs:
        region = base[at_base:base_start]
        mine, other = ours[at_ours:ours_start], theirs[at_theirs:theirs_start]
        if mine in (region, other):
            out += other
        elif other == region:
            out += mine
        else:
            return None
        out += base[base_start:base_end]
        size = base_end - base_start
        at_base, at_ours, at_theirs = base_end, ours_start + size, theirs_start + size
    return out


def _matched(base: list[str], other: list[str]) -> list[difflib.Match]:
    blocks = difflib.SequenceMatcher(None, base, other, autojunk=False).get_matching_blocks()
    return [m for m in blocks if m.size]


def _sync_regions(
    base: list[str], ours: list[str], theirs: list[str]
) -> list[tuple[int, int, int, int]]:
    """Stretches of `base` both sides kept: (base start, base end, ours start, theirs start),
    ending with an empty one at the end of all three."""
    a, b = _matched(base, ours), _matched(base, theirs)
    syncs: list[tuple[int, int, int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start = max(a[i].a, b[j].a)
        end = min(a[i].a + a[i].size, b[j].a + b[j].size)
        if start < end:
            syncs.append((start, end, a[i].b + start - a[i].a, b[j].b + start - b[j].a))
        if a[i].a + a[i].size < b[j].a + b[j].size:
            i += 1
        else:
            j += 1
    syncs.append((len(base), len(base), len(ours), len(theirs)))
    return syncs
