"""The /memories file store: the six memory_20250818 commands on one root directory.

Results and errors match the SDK's BetaLocalFilesystemMemoryTool (2.14.0) byte for byte, except
where docs/memory.md ("Differences from the SDK") says why not. Every path is walked by directory
fds without following symlinks; writes are atomic; read-modify-write commands hold a
cross-process lock; each successful change is journaled.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentctl.errors import ToolError
from agentctl.memory import fsops
from agentctl.memory.commands import (
    ROOT,
    Command,
    Create,
    Delete,
    Insert,
    MemoryPath,
    Rename,
    StrReplace,
    View,
    parse_command,
    parse_memory_path,
)
from agentctl.memory.editing import insert_at, replace_once
from agentctl.memory.fsops import Usage
from agentctl.memory.guard import (
    MAX_DEPTH,
    open_dir,
    open_root,
)
from agentctl.memory.history import Change, changes_record, contents_at, put_blob, read_blob
from agentctl.memory.journal import (
    JournalEntry,
    JournalMark,
    append_entry,
    append_record,
    history_at,
    intent_record,
    journal_mark,
    now_iso,
    read_history,
    settle,
)
from agentctl.memory.limits import Limits, shifted
from agentctl.memory.locating import (
    closing,
    exists,
    locate,
    missing_view,
    parent_dir,
    size_if_file,
    text_file_parent,
)
from agentctl.memory.lock import root_lock
from agentctl.memory.retention import BASE_LINE_BYTES, history_bytes, rotate
from agentctl.memory.root import ensure_root, os_error_text, require_root
from agentctl.memory.tally import UsageTally
from agentctl.memory.viewing import view_dir, view_file
from agentctl.memory.walk import depth_below, open_subdir
from agentctl.profile.settings import MemorySettings

if TYPE_CHECKING:
    from agentctl.memory.blame import Conflict


class MemoryStore:
    """One memory root (the directory the model sees as /memories) and its limits."""

    def __init__(
        self,
        root: Path,
        limits: MemorySettings | None = None,
        *,
        session: str | None = None,
        create: bool = True,
    ) -> None:
        """`create`: make a missing root (0700); else a missing root is a ConfigError."""
        self.root = Path(root)
        self.settings = limits or MemorySettings()
        self.limits = Limits(self.settings)
        self.session = session
        self.create = create
        self._checked = False
        self._tally = UsageTally()
        self._last_mark: JournalMark | None = None  # the journal after our own last append
        self._origin: dict[str, Any] = {}  # turn and tool_use_id of the call being answered
        self.history_written = 0  # blob bytes this store added to the history
        self._next_check = 0  # history_written + journal size at which to check the bound
        ensure_root(self.root) if create else require_root(self.root)

    def execute(
        self,
        command: Mapping[str, Any],
        *,
        turn: int | None = None,
        tool_use_id: str | None = None,
    ) -> str:
        """Run one memory tool input; the result text, or ToolError with the error text.

        `turn` and `tool_use_id` (the model's call, in a run) go into the history entry.
        """
        cmd = parse_command(command)
        self._origin = {"turn": turn, "tool_use_id": tool_use_id}
        try:
            with self.opened() as fd:
                if isinstance(cmd, View):
                    return self._view(fd, cmd)
                with self._holding_lock(fd):
                    self._check_once(fd)
                    self._tally.check_folders(fd, _paths_of(cmd))
                    return self._mutate(fd, cmd)
        except OSError as err:
            raise os_error_text(str(command.get("command")), err) from err
        finally:
            self._origin = {}

    def _check_once(self, fd: int) -> None:
        """First write of this store: the saved tally checked, or the tree walked again, which
        also drops temp files of writers killed mid-write (their intent line, or the folder
        the temp file is in, has changed since the tally was saved: tally.py)."""
        if not self._checked:
            self._tally.current(fd)
            self._checked = True

    @contextmanager
    def opened(self) -> Iterator[int]:
        """The root as an open directory fd, for the duration of the block."""
        try:
            fd = open_root(self.root)
        except FileNotFoundError:  # removed since construction (memory clear by hand): remake
            ensure_root(self.root) if self.create else require_root(self.root)
            fd = open_root(self.root)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextmanager
    def locked(self) -> Iterator[int]:
        """The root fd with the cross-process lock held (for imports, edits, clears)."""
        with self.opened() as fd, self._holding_lock(fd):
            yield fd

    @contextmanager
    def _holding_lock(self, fd: int) -> Iterator[None]:
        """The root's lock, and the journal settled: a change left half way is recorded first."""
        with root_lock(fd):
            if journal_mark(fd) != self._last_mark:  # someone else appended: look at the tail
                self._last_mark = settle(fd) or self._last_mark
            yield

    def usage(self, fd: int) -> Usage:
        """Files and bytes in the root now (lock held): kept between writes, walked when stale."""
        return self._tally.current(fd)

    def recount(self) -> Usage:
        """Walk the root for its files and bytes and save them as the tally (after files were
        rewritten in place by another program, which the saved tally cannot notice)."""
        with self.locked() as fd:
            self._checked = True
            return self._tally.recount(fd)

    def planned(
        self, fd: int, before: Mapping[str, bytes], after: Mapping[str, bytes]
    ) -> dict[str, Change]:
        """The history of a change about to be made: both sides of each file kept as blobs.

        `before` / `after`: the files (memory path -> bytes) the change touches, as they are
        and as they will be (a path missing on one side: no file there).
        """
        changes: dict[str, Change] = {}
        for path in [*before, *(p for p in after if p not in before)]:
            was, will = (self._kept(fd, side.get(path)) for side in (before, after))
            if was != will:
                changes[path] = (was, will)
        return changes

    def _kept(self, fd: int, data: bytes | None) -> str | None:
        if data is None:
            return None
        ident, written = put_blob(fd, data)
        self.history_written += written
        return ident

    @contextmanager
    def changing(
        self,
        fd: int,
        command: str,
        path: str,
        *,
        delta: Usage | None,
        changes: dict[str, Change],
        **extra: Any,
    ) -> Iterator[None]:
        """Around one change (lock held): an intent line before it, its entry after it.

        The intent is fsynced, so any change that may reach the disk is in the journal, even
        across a kill -9 or a power loss; the entry after it is not (if it is lost, the intent
        is settled from the disk). A block that fails records what it left (`recover`).
        `delta` is what the change does to the usage (None: unknown, walk next time); the kept
        usage is dropped while the block runs, so a half-done change is never counted wrong.
        """
        entry = JournalEntry(
            now_iso(),
            command,
            path,
            session=self.session,
            changes=changes_record(changes),
            **{**self._origin, **extra},
        )
        before = self._tally.peek(fd)
        self._tally.forget()
        append_record(fd, intent_record(entry))
        try:
            yield
        except BaseException:
            with suppress(OSError):
                self._last_mark = settle(fd)
            raise
        try:
            self._last_mark = append_entry(fd, entry, sync=False)
        except OSError:  # the change is made: report it made; the next writer settles the intent
            self._last_mark = None
            return
        new_path = extra.get("new_path")
        moved = (path, new_path) if isinstance(new_path, str) and command == "rename" else None
        touched = [path, new_path] if new_path else [path]
        self._tally.keep(fd, shifted(before, delta), self._last_mark, touched, moved)
        self._retain(fd)

    def _retain(self, fd: int) -> None:
        """Now and then (each 1/16 of the bound written), prune the history to its bound."""
        bound = self.settings.history_max_bytes
        grown = self.history_written + (self._last_mark.size if self._last_mark else 0)
        if not bound or grown < self._next_check:
            return
        self._next_check = grown + max(1, bound // 16)
        tree = self.usage(fd)  # the tree's own contents (and its base record) are not history
        floor = tree.bytes + BASE_LINE_BYTES * tree.files
        if history_bytes(fd) > floor + bound // 2:  # half: the older generation fits beside
            self._last_mark = rotate(fd, floor + bound)
            if self._last_mark is None:
                self._tally.forget()
            else:  # the tree is as it was: only the journal and the history changed
                self._tally.keep(fd, tree, self._last_mark)

    def _mutate(self, fd: int, cmd: Command) -> str:
        if isinstance(cmd, Create):
            return self._create(fd, cmd)
        if isinstance(cmd, StrReplace):
            return self._str_replace(fd, cmd)
        if isinstance(cmd, Insert):
            return self._insert(fd, cmd)
        if isinstance(cmd, Delete):
            return self._delete(fd, cmd)
        assert isinstance(cmd, Rename)
        return self._rename(fd, cmd)

    # -- view ------------------------------------------------------------------------------

    def _view(self, fd: int, cmd: View) -> str:
        path = cmd.path
        if path.is_root:
            return view_dir(fd, path.text, self.settings.max_view_chars)
        parent, st = locate(fd, path, missing=missing_view(path))
        with closing(parent):
            if stat.S_ISDIR(st.st_mode):
                with closing(open_dir(parent, path.parts[-1:], display=path.text)) as sub:
                    return view_dir(sub, path.text, self.settings.max_view_chars)
            if stat.S_ISREG(st.st_mode):
                text = fsops.read_text(parent, path.parts[-1], path.text)
                return view_file(path.text, text, cmd.view_range, self.settings.max_view_chars)
        raise ToolError(f"Unsupported file type for {path.text}")

    # -- create ----------------------------------------------------------------------------

    def _create(self, fd: int, cmd: Create) -> str:
        path = cmd.path
        taken = ToolError(f"File {path.text} already exists")
        if path.is_root or exists(fd, path):
            raise taken
        data = cmd.file_text.encode("utf-8")
        current = partial(self.usage, fd)
        self.limits.check_write(path.text, len(data), old_size=None, current=current)
        added = Usage(1, len(data))
        changes = self.planned(fd, {}, {path.canonical: data})
        with (
            closing(parent_dir(fd, path, create=True)) as parent,
            self.changing(
                fd, "create", path.canonical, delta=added, changes=changes, bytes=len(data)
            ),
        ):
            try:
                fsops.create_exclusive(parent, path.parts[-1], data)
            except FileExistsError:
                raise taken from None
        return f"File created successfully at: {path.text}"

    # -- str_replace / insert --------------------------------------------------------------

    def _str_replace(self, fd: int, cmd: StrReplace) -> str:
        with closing(text_file_parent(fd, cmd.path)) as parent:
            content = fsops.read_text(parent, cmd.path.parts[-1], cmd.path.text)
            new_content, result = replace_once(content, cmd.old_str, cmd.new_str, cmd.path.text)
            self._rewrite(fd, parent, cmd.path, content, new_content, "str_replace")
        return result

    def _insert(self, fd: int, cmd: Insert) -> str:
        with closing(text_file_parent(fd, cmd.path)) as parent:
            content = fsops.read_text(parent, cmd.path.parts[-1], cmd.path.text)
            new_content = insert_at(content, cmd.insert_line, cmd.insert_text)
            self._rewrite(fd, parent, cmd.path, content, new_content, "insert")
        return f"The file {cmd.path.text} has been edited."

    def _rewrite(
        self, fd: int, parent: int, path: MemoryPath, old: str, new: str, command: str
    ) -> None:
        data, old_size = new.encode("utf-8"), len(old.encode("utf-8"))
        current = partial(self.usage, fd)
        self.limits.check_write(path.text, len(data), old_size=old_size, current=current)
        grown = Usage(0, len(data) - old_size)
        changes = self.planned(fd, {path.canonical: old.encode("utf-8")}, {path.canonical: data})
        with self.changing(
            fd, command, path.canonical, delta=grown, changes=changes, bytes=len(data)
        ):
            fsops.replace_atomic(parent, path.parts[-1], data)

    # -- delete / rename -------------------------------------------------------------------

    def _delete(self, fd: int, cmd: Delete) -> str:
        path = cmd.path
        if path.is_root:
            raise ToolError("Cannot delete the /memories directory itself")
        missing = ToolError(f"The path {path.text} does not exist")
        parent, st = locate(fd, path, missing=missing)
        removed = _removed_usage(parent, path.parts[-1], st)
        changes = self.planned(fd, contents_at(fd, path.canonical), {})
        with (
            closing(parent),
            self.changing(fd, "delete", path.canonical, delta=removed, changes=changes),
        ):
            try:
                fsops.remove_entry(parent, path.parts[-1])
            except FileNotFoundError:
                raise missing from None
        return f"Successfully deleted {path.text}"

    def _rename(self, fd: int, cmd: Rename) -> str:
        old, new = cmd.old_path, cmd.new_path
        if old.is_root:
            raise ToolError("Cannot rename the /memories directory itself")
        if new.is_root or exists(fd, new):
            raise ToolError(f"The destination {new.text} already exists")
        src_parent, st = locate(fd, old, missing=ToolError(f"The path {old.text} does not exist"))
        with closing(src_parent):
            if new.parts[: len(old.parts)] == old.parts:
                raise ToolError(f"Cannot move {old.text} into itself ({new.text})")
            if stat.S_ISDIR(st.st_mode):
                _check_moved_depth(src_parent, old, new)
            moved = Usage(0, 0)  # within the root: same files, same bytes
            changes = self._moves(fd, old.canonical, new.canonical)
            with (
                closing(parent_dir(fd, new, create=True)) as dst_parent,
                self.changing(
                    fd,
                    "rename",
                    old.canonical,
                    delta=moved,
                    changes=changes,
                    new_path=new.canonical,
                ),
            ):
                os.rename(
                    old.parts[-1], new.parts[-1], src_dir_fd=src_parent, dst_dir_fd=dst_parent
                )
                os.fsync(dst_parent)
        return f"Successfully renamed {old.text} to {new.text}"

    def _moves(self, fd: int, old: str, new: str) -> dict[str, Change]:
        """A rename's history: each file moved leaves `old/...` and appears at `new/...`."""
        before = contents_at(fd, old)
        after = {new + path[len(old) :]: data for path, data in before.items()}
        return self.planned(fd, before, after)

    # -- for the CLI -----------------------------------------------------------------------

    def read_text(self, path: str) -> str:
        """The text of one memory file (`/memories/...`), for `agentctl memory cat`."""
        mp = parse_memory_path(path)
        with self.opened() as fd:
            parent = text_file_parent(fd, mp)
            with closing(parent):
                return fsops.read_text(parent, mp.parts[-1], mp.text)

    def write_text(self, path: str, text: str, *, command: str = "edit") -> None:
        """Create or overwrite one memory file atomically, within the limits, journaled."""
        mp = _writable_path(path)
        with self.locked() as fd:
            self._write_locked(fd, mp, text, command)

    def save_edit(self, path: str, before: str | None, after: str) -> str | None:
        """Save `after`, an edit of `before` (None: there was no file), if the file is still
        `before`. If it changed meanwhile (an agent wrote), `after` is created beside it instead
        and that path returned: neither version is lost.
        """
        mp = _writable_path(path)
        with self.locked() as fd:
            if _text_or_none(fd, mp) != before:
                mp = _free_name_beside(fd, mp)
            self._write_locked(fd, mp, after, "edit")
        return None if mp.text == path else mp.text

    def _write_locked(self, fd: int, mp: MemoryPath, text: str, command: str) -> None:
        self._tally.check_folders(fd, [mp.canonical])
        data = text.encode("utf-8")
        old_size = size_if_file(fd, mp)
        current = partial(self.usage, fd)
        self.limits.check_write(mp.text, len(data), old_size=old_size, current=current)
        delta = Usage(int(old_size is None), len(data) - (old_size or 0))
        changes = self.planned(fd, contents_at(fd, mp.canonical), {mp.canonical: data})
        with (
            closing(parent_dir(fd, mp, create=True)) as parent,
            self.changing(fd, command, mp.canonical, delta=delta, changes=changes, bytes=len(data)),
        ):
            fsops.replace_atomic(parent, mp.parts[-1], data)

    def history(self) -> list[dict[str, Any]]:
        """Every recorded change, oldest first (both journal generations)."""
        return read_history(self.root)

    def read_blob(self, ident: str) -> bytes | None:
        """Content the history kept, by id; None when pruned or missing."""
        with self.opened() as fd:
            return read_blob(fd, ident)

    def revert(self, session: str) -> tuple[list[str], list[Conflict]]:
        """Undo every change `session` made (one `revert` entry); the files changed, or the
        conflicts (later changes to the same lines) that refuse it, nothing written then."""
        with self.locked() as fd:
            from agentctl.memory.blame import changes_of, undo  # only a revert reads lines

            history = history_at(fd)
            paths = {p for e in history if e.get("session") == session for p in changes_of(e)}
            now = {path: contents_at(fd, path).get(path) for path in paths}
            state, conflicts = undo(history, session, now, partial(read_blob, fd))
            if conflicts:
                return [], conflicts
            changed = {path: data for path, data in state.items() if data != now[path]}
            self.restore(fd, now, changed, "revert", reverts=session)
        return sorted(changed), []

    def restore(
        self,
        fd: int,
        now: Mapping[str, bytes | None],
        files: Mapping[str, bytes | None],
        command: str,
        **extra: Any,
    ) -> None:
        """Set each of `files` (None: delete it) as one journaled change (lock held); `now`:
        what those paths hold before."""
        before = {p: data for p in files if (data := now.get(p)) is not None}
        after = {p: data for p, data in files.items() if data is not None}
        removed = sorted(p for p, data in files.items() if data is None)
        changes = self.planned(fd, before, after)
        written = {p: len(data) for p, data in after.items()}
        with self.changing(
            fd,
            command,
            ROOT,
            delta=None,
            changes=changes,
            bytes=sum(written.values()),
            files=written,
            removed=removed,
            **extra,
        ):
            for path, data in files.items():
                mp = parse_memory_path(path)
                with closing(parent_dir(fd, mp, create=data is not None)) as parent:
                    if data is None:
                        with suppress(FileNotFoundError):
                            fsops.remove_entry(parent, mp.parts[-1])
                    else:
                        fsops.replace_atomic(parent, mp.parts[-1], data)

    def clear(self) -> int:
        """Delete everything in the root except agentctl's own files; returns entries removed."""
        with self.locked() as fd:
            names = [e.name for e in fsops.scan_sorted(fd)]
            names = [n for n in names if not fsops.is_reserved(n)]
            changes = self.planned(fd, contents_at(fd, ROOT), {})
            with self.changing(fd, "clear", ROOT, delta=None, changes=changes):
                for name in names:
                    fsops.remove_entry(fd, name)
        return len(names)


def _paths_of(cmd: Command) -> list[str]:
    """The memory paths a changing command touches."""
    if isinstance(cmd, Rename):
        return [cmd.old_path.canonical, cmd.new_path.canonical]
    assert isinstance(cmd, Create | StrReplace | Insert | Delete)
    return [cmd.path.canonical]


def _removed_usage(parent: int, name: str, st: os.stat_result) -> Usage | None:
    """What deleting `name` takes off the usage: a folder's files counted (None: unknown)."""
    if not stat.S_ISDIR(st.st_mode):
        return Usage(-1, -st.st_size) if stat.S_ISREG(st.st_mode) else Usage(0, 0)
    sub = open_subdir(parent, name)
    if sub is None:
        return None
    with closing(sub):
        below = fsops.usage(sub)
    return Usage(-below.files, -below.bytes)


def _check_moved_depth(src_parent: int, old: MemoryPath, new: MemoryPath) -> None:
    """Refuse a move that would put something below `new` deeper than MAX_DEPTH levels."""
    room = MAX_DEPTH - len(new.parts)
    if depth_below(src_parent, old.parts[-1], at_most=room) > room:
        raise ToolError(
            f"Cannot move {old.text} to {new.text}: what it holds would be nested deeper than "
            f"{MAX_DEPTH} levels"
        )


def _writable_path(path: str) -> MemoryPath:
    mp = parse_memory_path(path)
    if mp.is_root:
        raise ToolError("Cannot write to the /memories directory itself")
    return mp


def _text_or_none(fd: int, mp: MemoryPath) -> str | None:
    """The file's text now, None when there is nothing at that path."""
    if not exists(fd, mp):
        return None
    parent = text_file_parent(fd, mp)
    with closing(parent):
        return fsops.read_text(parent, mp.parts[-1], mp.text)


def _free_name_beside(fd: int, mp: MemoryPath) -> MemoryPath:
    """`notes.md` -> the first of `notes.edited.md`, `notes.edited-2.md`, ... that is free."""
    stem, dot, suffix = mp.parts[-1].rpartition(".")
    stem, suffix = (stem, dot + suffix) if stem else (mp.parts[-1], "")  # `.x`, `x`: no suffix
    for n in range(1, 1000):
        name = f"{stem}.edited{'' if n == 1 else f'-{n}'}{suffix}"
        beside = MemoryPath("/".join((ROOT, *mp.parts[:-1], name)), (*mp.parts[:-1], name))
        if not exists(fd, beside):
            return beside
    raise ToolError(f"Cannot save beside {mp.text}: 999 edited copies exist already")
