"""Keys that moved: read the old spelling into the new one, with a warning naming the new key.

`tools.web_search` / `tools.web_fetch` (booleans) became `[server_tools.web_search]` and
`[server_tools.web_fetch]` tables with their own settings; `enabled` is the old boolean.
"""

from __future__ import annotations

import copy
from typing import Any

from agentctl.profile.schema import FieldError

# old dotted key -> new dotted key
MOVED = {
    "tools.web_search": "server_tools.web_search.enabled",
    "tools.web_fetch": "server_tools.web_fetch.enabled",
}


def migrate(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` with every moved key under its new name, and one warning per moved key."""
    warnings: list[str] = []
    for old, new in MOVED.items():
        table, _, name = old.partition(".")
        old_table = data.get(table)
        if not isinstance(old_table, dict) or name not in old_table:
            continue
        data = copy.deepcopy(data) if not warnings else data
        value = data[table].pop(name)
        _place(data, new, value, old)
        warnings.append(f"{old}: deprecated, use {new} instead")
    return data, warnings


def _place(data: dict[str, Any], key: str, value: Any, old: str) -> None:
    node = data
    *tables, name = key.split(".")
    for table in tables:
        child = node.setdefault(table, {})
        if not isinstance(child, dict):
            return  # the schema reports the wrong type under its own key
        node = child
    if name in node and node[name] != value:
        raise FieldError(old, f"conflicts with {key} = {_toml(node[name])} (remove {old})")
    node[name] = value


def _toml(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)
