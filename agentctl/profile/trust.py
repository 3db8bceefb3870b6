"""What a task file's front matter may set unless the user passes --trust-task.

A task file is data from someone else. Its front matter may tune the run (model, context
editing, cache, system prompt, ...) and tighten limits, but not, without --trust-task:
- set anything under `[api]` (where requests and the API key go, and how long they may run);
- set `[prices]` (the cost estimate that `limits.max_usd` relies on);
- add or change an MCP server under `[mcp]` (each starts a program);
- loosen a limit of the profile (`max_turns`, `limits.*`, the memory store's size limits),
  or pick a model with no known price while the profile has a `limits.max_usd`;
- turn off the review of memory writes (`memory.review`) that the profile turned on;
- loosen the approval rules (`[approval]`): a task may add `deny` and `ask` patterns, drop
  `allow` patterns and pick a stricter `default`, but not the reverse, nor add `ask` patterns
  while the profile's default is "deny" (they would ask for calls the profile refuses);
- add API betas (`betas`: they change what a request does and what it costs);
- turn on a server tool (`server_tools.*.enabled`, and the old `tools.web_search`,
  `tools.web_fetch`), or change the domains or location a web tool is given, or lift its
  `max_uses` (a task may lower it);
- name a path outside the task file's own folder (symlinks followed): `memory.root`,
  `tools.workspace_root`, `workspace`, `emulator_script`, or a `workspace/` folder that leads out.
A value equal to the profile's own is always allowed. Each key's rule is part of its definition
(profile/settings.py, `Key.task`). The check runs where the front matter is merged
(`agentctl.profile.loader.build_overridden`), against the Profile the layers below it make,
before anything is read or sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctl.context.prices import price_for
from agentctl.errors import ConfigError
from agentctl.profile.keys import path_keys, task_rule
from agentctl.profile.legacy import MOVED
from agentctl.profile.schema import to_plain
from agentctl.profile.settings import Profile

PATH_KEYS = frozenset(path_keys())
DEFAULTS = Profile()  # what a "tighten" key is when no profile chose it

TRUST_FLAG = "--trust-task"
SERVER_TOOL_ON = "a task file may not turn on a server tool (they reach the web or run code)"


@dataclass(frozen=True)
class FrontMatter:
    """The profile keys a task file sets (paths absolute), and where the task file lives.

    `paths` holds the other paths the task leads to (`workspace`, `emulator_script`).
    """

    data: dict[str, Any]
    source: str
    folder: Path
    paths: dict[str, Path] = field(default_factory=dict)


Base = Profile | Mapping[str, Any]  # the layers below the front matter: typed, or as TOML


def check_front_matter(front: FrontMatter, base: Base) -> None:
    """ConfigError naming the task file and the first key it may not set over `base`."""
    for key, value in leaves(front.data):
        before = plain_at(base, key)
        if before == value:
            continue
        reason = (
            refusal(key, value, before, front.folder)
            or unpriced(key, value, base)
            or looser_approval(key, value, base)
        )
        if reason:
            raise _refused(front, key, reason)
    for key, path in front.paths.items():
        if not inside(path, front.folder):
            raise _refused(front, key, outside(path, front.folder), where="")


def _refused(
    front: FrontMatter, key: str, reason: str, where: str = "front matter: "
) -> ConfigError:
    return ConfigError(
        f"task {front.source}: {where}{key}: {reason} (pass {TRUST_FLAG} to allow it)"
    )


def refusal(key: str, value: Any, before: Any, folder: Path) -> str | None:
    """Why the front matter may not set `key` to `value` (the profile has `before`), or None."""
    found = task_rule(MOVED.get(key, key))  # a key that moved: its new key's rule
    rule = found[1] if found else None
    if rule is not None and rule.task == "refuse":
        return rule.refusal
    if rule is not None and rule.task == "off" and value is True:
        return SERVER_TOOL_ON
    if rule is not None and rule.task == "tighten" and before != plain_at(DEFAULTS, key):
        return rule.refusal  # the profile chose a value: the task may not undo it
    if rule is not None and rule.task == "lower" and _looser(key, value, before):
        return f"{value!r} would lift the profile's limit of {before!r} (a task may only lower it)"
    if key in PATH_KEYS and isinstance(value, str) and not inside(Path(value), folder):
        return outside(Path(value), folder)
    return None


def unpriced(key: str, value: Any, base: Base) -> str | None:
    """A model with no price would leave the profile's limits.max_usd unenforced."""
    budget = lookup(base, "limits.max_usd")
    if key != "model" or not isinstance(value, str) or not budget:
        return None
    if price_for(value, lookup(base, "prices") or {}) is not None:
        return None
    return f"no price is known for {value!r}, so limits.max_usd = {budget!r} could not be kept"


APPROVAL_RANK = {"allow": 0, "ask": 1, "deny": 2}


def looser_approval(key: str, value: Any, base: Base) -> str | None:
    """Why `value` would let through a call that the profile's [approval] rules stop, or None.

    Set-wise, so it holds for any tool name (an MCP server's included): deny and ask lists may
    only grow, allow may only shrink, the default only move toward "deny"."""
    if not key.startswith("approval."):
        return None
    before = plain_at(base, key)
    if before is None:
        before = plain_at(DEFAULTS, key)
    name = key.removeprefix("approval.")
    if name == "default":
        if APPROVAL_RANK.get(str(value), 2) < APPROVAL_RANK.get(str(before), 0):
            return f"{value!r} is looser than the profile's {before!r} (a task may only tighten)"
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None  # a wrong type is reported by validation, naming the key
    now, was = set(value), set(before or ())
    if name == "allow" and now - was:
        return f"a task may not add allow patterns ({_names(now - was)}); it may only drop them"
    if name in ("ask", "deny") and was - now:
        return f"a task may not drop the profile's {name} patterns ({_names(was - now)})"
    if name == "ask" and now - was and lookup(base, "approval.default") == "deny":
        return (
            f'the profile\'s approval.default is "deny": adding ask patterns ({_names(now - was)})'
            " would ask for calls it refuses (add them to approval.deny instead)"
        )
    return None


def _names(patterns: set[str]) -> str:
    return ", ".join(repr(p) for p in sorted(patterns))


def _looser(key: str, value: Any, before: Any) -> bool:
    numbers = (int, float)
    if not isinstance(value, numbers) or not isinstance(before, numbers):
        return False  # a wrong type is reported by validation, naming the key
    if key == "max_turns":
        return value > before
    return before != 0 and (value == 0 or value > before)


def inside(path: Path, folder: Path) -> bool:
    """True when `path` (after following symlinks) is `folder` or below it."""
    real, top = path.resolve(), folder.resolve()
    return real == top or top in real.parents


def outside(path: Path, folder: Path) -> str:
    return f"{path.resolve()} is outside the task's folder {folder.resolve()}"


def leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every non-table value; an empty table counts as a value."""
    for name, value in data.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and value:
            yield from leaves(value, key + ".")
        else:
            yield key, value


def lookup(data: Any, key: str) -> Any:
    """The value at a dotted key of a TOML dict or of settings (a Profile), or None."""
    node: Any = data
    for name in key.split("."):
        if isinstance(node, Mapping):
            node = node.get(name)
        else:
            is_table = dataclasses.is_dataclass(node) and not isinstance(node, type)
            node = getattr(node, name, None) if is_table else None
    return node


def plain_at(profile: Base, key: str) -> Any:
    """The profile's value at a dotted key as TOML writes it (paths as strings), or None."""
    return to_plain(lookup(profile, key))
