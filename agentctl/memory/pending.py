"""The review queue: a run's memory writes held in a pending layer until they are settled.

With `memory.review = "queue"` a run's store is a copy of the base root taken when the run
first opens it (its *layer*, under AGENTCTL_HOME/memory-pending/, one per root and session):
the run reads its own writes back, the base root is not touched. `agentctl memory review`
shows each layer's changes against the copy it started from; applying one merges those
changes into the base root as it is now (a three-way merge per file: a change made to the base
meanwhile is kept, overlapping ones refuse), journaled there under the run's session id.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentctl.errors import AgentctlError, UsageError
from agentctl.home import home_dir
from agentctl.memory.blame import lines, three_way
from agentctl.memory.history import blob_id, contents_at, read_blob
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

ROOT = "/memories"
_META = "layer.json"


def layers_dir(root: Path) -> Path:
    """Where the layers of one base root live (keyed by its absolute path)."""
    key = hashlib.sha256(str(root.absolute()).encode()).hexdigest()[:16]
    return home_dir() / "memory-pending" / key


@dataclass(frozen=True)
class Pending:
    """One file a layer changed: its content at the layer's start, and in the layer now."""

    path: str
    start: bytes | None
    now: bytes | None

    def unified(self) -> str:
        import difflib

        diff = difflib.unified_diff(
            lines(self.start),
            lines(self.now),
            fromfile=f"a{self.path}" if self.start is not None else "/dev/null",
            tofile=f"b{self.path}" if self.now is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in diff)


class Layer:
    """One session's pending layer over a base root."""

    def __init__(self, base: Path, session: str) -> None:
        self.base, self.session = base, session
        self.folder = layers_dir(base) / session
        self.tree = self.folder / "tree"

    def exists(self) -> bool:
        return (self.folder / _META).is_file()

    def open(self, settings: MemorySettings) -> MemoryStore:
        """The run's store: the layer's copy, made from the base root the first time."""
        if not self.exists():
            self._start(settings)
        return MemoryStore(self.tree, settings, session=self.session)

    def _start(self, settings: MemorySettings) -> None:
        base = MemoryStore(self.base, settings, session="review")
        with base.opened() as fd:
            files = contents_at(fd, ROOT)
        shutil.rmtree(self.folder, ignore_errors=True)
        layer = MemoryStore(self.tree, settings, session="review-start")
        with layer.locked() as fd:
            layer.restore(fd, {}, dict(files), "base")
        start = {path: blob_id(data) for path, data in files.items()}
        meta = {"base": str(self.base.absolute()), "session": self.session, "start": start}
        (self.folder / _META).write_text(json.dumps(meta), encoding="utf-8")

    def _start_ids(self) -> dict[str, str]:
        meta = json.loads((self.folder / _META).read_text(encoding="utf-8"))
        start = meta.get("start", {})
        return {str(k): str(v) for k, v in start.items()} if isinstance(start, dict) else {}

    def changes(self) -> list[Pending]:
        """The files the session changed in its layer, by path."""
        start_ids = self._start_ids()
        store = MemoryStore(self.tree, create=False)
        with store.opened() as fd:
            now = contents_at(fd, ROOT)
            start = {p: read_blob(fd, ident) for p, ident in start_ids.items()}
        paths = sorted(set(start) | set(now))
        return [Pending(p, start.get(p), now.get(p)) for p in paths if start.get(p) != now.get(p)]

    def settle(self, settings: MemorySettings, paths: list[str], *, apply: bool) -> list[str]:
        """Apply (merge into the base) or drop the pending changes to `paths` (all: []);
        the paths settled. Settled files stop being pending; an empty layer is removed."""
        pending = _chosen(self.changes(), paths, self.session)
        if apply:
            _merge_into(MemoryStore(self.base, settings, session=self.session), pending)
        self._forget(settings, pending, apply=apply)
        return [p.path for p in pending]

    def _forget(self, settings: MemorySettings, settled: list[Pending], *, apply: bool) -> None:
        left = {p.path for p in self.changes()} - {p.path for p in settled}
        if not left:
            shutil.rmtree(self.folder, ignore_errors=True)
            return
        layer = MemoryStore(self.tree, settings, session="review")
        if apply:  # the layer's content is the base's now: it becomes the start
            with layer.opened() as fd:
                now = contents_at(fd, ROOT)
            start = self._start_ids()
            for p in settled:
                start.pop(p.path, None)
                if p.path in now:
                    start[p.path] = blob_id(now[p.path])
            meta = json.loads((self.folder / _META).read_text(encoding="utf-8"))
            (self.folder / _META).write_text(json.dumps({**meta, "start": start}), "utf-8")
            return
        with layer.locked() as fd:  # dropped: the layer goes back to the start for them
            layer.restore(
                fd,
                {p.path: p.now for p in settled},
                {p.path: p.start for p in settled},
                "review-drop",
            )


def layers(base: Path) -> list[Layer]:
    """Every session with a pending layer over `base`, by session id."""
    folder = layers_dir(base)
    if not folder.is_dir():
        return []
    found = [Layer(base, d.name) for d in sorted(folder.iterdir()) if d.is_dir()]
    return [layer for layer in found if layer.exists()]


def _chosen(pending: list[Pending], paths: list[str], session: str) -> list[Pending]:
    if not paths:
        return pending
    known = {p.path: p for p in pending}
    missing = [p for p in paths if p not in known]
    if missing:
        raise UsageError(f"memory review: session {session} has no pending change to {missing[0]}")
    return [known[p] for p in paths]


def _merge_into(base: MemoryStore, pending: list[Pending]) -> None:
    """Each pending change merged into the base root as it is now; all or nothing."""
    with base.locked() as fd:
        now: dict[str, bytes | None] = {
            p.path: contents_at(fd, p.path).get(p.path) for p in pending
        }
        files: dict[str, bytes | None] = {}
        for p in pending:
            merged = three_way(now[p.path], base=p.start, target=p.now)
            if merged is None:
                raise AgentctlError(
                    f"memory review: {p.path} changed in the base root since the run started, "
                    "in the same lines; nothing was applied (drop it, or apply the other files)"
                )
            if merged[0] != now[p.path]:
                files[p.path] = merged[0]
        if files:
            base.restore(fd, now, files, "review")


def open_for_run(settings: MemorySettings, session: str) -> MemoryStore:
    """The store a run writes to: the base root, or with review = "queue" its layer."""
    if settings.review == "queue":
        return Layer(settings.root, session).open(settings)
    return MemoryStore(settings.root, settings, session=session)
