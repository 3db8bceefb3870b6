"""The profile's keys as dotted names, read from their one definition (profile/settings.py).

Everything that lists keys derives from the settings classes here: the meaning and API field
of each (`KEY_DOCS`: `profile init`'s comments, `profile show`'s API column), which are paths,
what a task's front matter may do with one (`task_rule`), and docs/profile.md's key table
(`markdown_key_table`; a test keeps the docs equal to it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentctl.profile.schema import (
    NOT_KEYS,
    Key,
    describe_type,
    is_path,
    key_of,
    to_plain,
    type_hints,
)
from agentctl.profile.settings import McpServer, McpSettings, Profile

# The placeholder for the key of a `dict` table in dotted keys (`prices.MODEL.input`).
DICT_KEY_NAMES = {"prices": "MODEL"}
# What the docs table says a task may do with a key, by `Key.task` (paths: see `task_words`).
TASK_WORDS = {
    "set": "yes",
    "lower": "lower only",
    "off": "turn off only",
    "tighten": "only where the profile leaves the default",
    "stricter": "only stricter",
    "refuse": "no",
}


def dict_key(key: str) -> str:
    """`key` followed by the placeholder of its dict table's keys."""
    return f"{key}.{DICT_KEY_NAMES.get(key, 'NAME')}."


def _table_type(tp: Any) -> type[Any] | None:
    """The settings class a field holds: itself, or the value of a `dict[str, Table]` (whose
    keys are user names); None for a leaf (`dict[str, str]` included)."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return tp
    if getattr(tp, "__origin__", None) is dict:
        value = tp.__args__[1]
        return value if dataclasses.is_dataclass(value) and isinstance(value, type) else None
    return None


def walk(cls: type[Any] = Profile, prefix: str = "") -> Iterator[tuple[str, Key, Any]]:
    """(dotted key, its Key, its type hint) of every key, tables before their keys."""
    hints = type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in NOT_KEYS:
            continue
        key, tp = f"{prefix}{f.name}", hints[f.name]
        yield key, key_of(f), tp
        inner = _table_type(tp)
        if inner is not None:
            below = key + "." if inner is tp else dict_key(key)
            yield from walk(inner, below)


KEY_DOCS: dict[str, Key] = {key: doc for key, doc, _ in walk()}


def all_keys(cls: type[Any] = Profile) -> list[str]:
    """Every dotted key (tables too) of a settings class; dict tables appear as `NAME.MODEL.*`."""
    return [key for key, _, _ in walk(cls)]


def leaf_types(cls: type[Any] = Profile) -> dict[str, Any]:
    """Dotted key -> type hint of every non-table setting."""
    return {key: tp for key, _, tp in walk(cls) if _table_type(tp) is None}


def path_keys(cls: type[Any] = Profile) -> list[str]:
    """Dotted keys whose values are paths, outside dict tables (memory.root, ...)."""
    return [key for key, _, tp in walk(cls) if is_path(tp) and ".NAME." not in key]


def key_locations(cls: type[Any], name: str) -> list[str]:
    """The tables in which a key called `name` exists, e.g. 'keep' -> two context tables."""
    return [k.rpartition(".")[0] for k in all_keys(cls) if k.rpartition(".")[2] == name]


def task_rule(key: str) -> tuple[str, Key] | None:
    """The rule a task's front matter is held to for a dotted key as written (user names in
    dict tables): (the key that carries it, its Key), a refusing table's above its keys';
    None for a key that is no setting."""
    cls: type[Any] | None = Profile
    parts, done = key.split("."), []
    while parts and cls is not None:
        name = parts.pop(0)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in NOT_KEYS}
        if name not in fields:
            return None
        done.append(name)
        rule, tp = key_of(fields[name]), type_hints(cls)[name]
        if rule.task == "refuse" or not parts:
            return ".".join(done), rule
        cls = _table_type(tp)
        if cls is not None and cls is not tp:  # a dict table: the next part is a user name
            done.append(parts.pop(0))
    return None


def task_words(key: str, tp: Any) -> str:
    """What the docs table says a task may do with `key`."""
    found = task_rule(key)
    rule = found[1].task if found else "set"
    if is_path(tp) and rule == "set":
        return "inside its folder"
    return TASK_WORDS[rule]


def markdown_key_table() -> str:
    """The key reference of docs/profile.md (a test keeps the docs equal to this)."""
    # One server named NAME so that its keys show their defaults.
    defaults = to_plain(Profile(mcp=McpSettings(servers={"NAME": McpServer()})))
    rows = [
        "| key | type | default | meaning | API field | task may set |",
        "|---|---|---|---|---|---|",
    ]
    for key, tp in leaf_types().items():
        value: Any = defaults
        for name in key.split("."):
            value = value.get(name, "(required)") if isinstance(value, dict) else value
        if value == "(required)" and tp != Path | None:
            default = value
        else:  # an optional path left out: none
            default = "(none)" if value == "(required)" else f"`{json.dumps(value)}`"
        doc = KEY_DOCS[key]
        kind = describe_type(tp).removeprefix("a ").removeprefix("an ")
        api = f"`{doc.api}`" if doc.api else "(client side)"
        task = task_words(key, tp)
        rows.append(f"| `{key}` | {kind} | {default} | {doc.meaning} | {api} | {task} |")
    return "\n".join(rows) + "\n"
