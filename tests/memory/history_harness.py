"""Helpers for the history tests: the tree's content, and the content the history describes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agentctl.memory.fsops import RESERVED_PREFIX

M = "/memories"


def contents(root: Path) -> dict[str, bytes]:
    """Memory files (agentctl's own left out): path -> bytes."""
    return {
        f"{M}/{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(RESERVED_PREFIX) for part in p.parts)
    }


def replay_changes(entries: list[dict[str, Any]]) -> dict[str, str]:
    """The tree (path -> blob id) that the entries' `changes` describe, from an empty root."""
    tree: dict[str, str] = {}
    for entry in entries:
        for path, (before, after) in entry.get("changes", {}).items():
            assert tree.get(path) == before, (entry, path)
            if after is None:
                tree.pop(path, None)
            else:
                tree[path] = after
    return tree


def blob_ids(root: Path) -> dict[str, str]:
    return {p: hashlib.sha256(data).hexdigest() for p, data in contents(root).items()}


def blobs_exist(root: Path, entries: list[dict[str, Any]]) -> bool:
    """Every blob the entries name is kept, and holds what its id says."""
    for entry in entries:
        for pair in entry.get("changes", {}).values():
            for ident in filter(None, pair):
                data = (root / ".agentctl-history" / ident).read_bytes()
                if hashlib.sha256(data).hexdigest() != ident:
                    return False
    return True
