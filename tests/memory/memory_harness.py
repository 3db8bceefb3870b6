"""Run memory commands through our store and through the SDK's reference tool, side by side."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.lib.tools._beta_functions import ToolError as SdkToolError

from agentctl.errors import ToolError
from agentctl.memory.fsops import RESERVED_PREFIX
from agentctl.memory.store import MemoryStore
from agentctl.profile.settings import MemorySettings

# ("ok", result) | ("err", ToolError text) | ("exc:TypeName", str of another exception)
Outcome = tuple[str, str]


def run_ours(store: MemoryStore, command: Mapping[str, Any]) -> Outcome:
    try:
        return ("ok", store.execute(command))
    except ToolError as err:
        return ("err", str(err))


def run_sdk(tool: BetaLocalFilesystemMemoryTool, command: Mapping[str, Any]) -> Outcome:
    try:
        return ("ok", str(tool.call(dict(command))))
    except SdkToolError as err:
        return ("err", str(err))
    except Exception as err:  # the SDK lets some failures escape raw; the runner sends repr()
        return (f"exc:{type(err).__name__}", str(err))


def normalised(outcome: Outcome) -> Outcome:
    """Success or failure plus the message: how the differential suite compares outcomes."""
    return outcome if outcome[0] == "ok" else ("err", outcome[1])


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry below root (agentctl's own files excluded): dirs -> None, files -> bytes."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if rel.startswith(RESERVED_PREFIX):
                continue
            if full.is_symlink():
                out[rel] = b"-> " + os.readlink(full).encode()
            else:
                out[rel] = None if full.is_dir() else full.read_bytes()
    return out


def modes(root: Path) -> dict[str, int]:
    """Permission bits of every entry below root (agentctl's own files excluded)."""
    out: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if not rel.startswith(RESERVED_PREFIX):
                out[rel] = full.lstat().st_mode & 0o777
    return out


@dataclass
class Pair:
    """Our store and the SDK's tool on twin roots; `ours_root` / `sdk_root` are the /memories."""

    store: MemoryStore
    tool: BetaLocalFilesystemMemoryTool
    ours_root: Path
    sdk_root: Path

    def both(self, command: Mapping[str, Any]) -> tuple[Outcome, Outcome]:
        return run_ours(self.store, command), run_sdk(self.tool, command)

    def trees(self) -> tuple[dict[str, bytes | None], dict[str, bytes | None]]:
        return snapshot(self.ours_root), snapshot(self.sdk_root)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) < 600 else text[:600] + "..."


def make_pair(tmp: Path) -> Pair:
    tool = BetaLocalFilesystemMemoryTool(base_path=str(tmp / "sdk"))
    # Generous limits: the SDK has none, so the comparison must not hit ours.
    store = MemoryStore(tmp / "ours", MemorySettings(max_file_bytes=10**8, max_view_chars=10**9))
    # Same entry count on both sides, so directory sizes match on filesystems (tmpfs) that
    # report sizes by entry count: give the SDK's root our bookkeeping files too.
    for root in (store.root, tool.memory_root):
        for name in (RESERVED_PREFIX + ".lock", RESERVED_PREFIX + "-journal.jsonl"):
            (root / name).touch()
    return Pair(store, tool, store.root, tool.memory_root)


def assert_same(pair: Pair, commands: Sequence[Mapping[str, Any]]) -> list[Outcome]:
    """Every command gives the same outcome on both sides, and the trees end up equal."""
    outcomes: list[Outcome] = []
    for command in commands:
        ours, sdk = pair.both(command)
        assert normalised(ours) == normalised(sdk), (
            f"{_short(command)}: ours={_short(ours)} sdk={_short(sdk)}"
        )
        outcomes.append(ours)
    ours_tree, sdk_tree = pair.trees()
    assert ours_tree == sdk_tree
    return outcomes
