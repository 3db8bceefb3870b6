"""Keys that moved: read the old spelling into the new one, with a warning naming the new key.

Pinned by tests/profile/test_profile_legacy.py and listed in docs/profile.md ("Old keys").
`tools.web_search` / `tools.web_fetch` (booleans) became `[server_tools.web_search]` and
`[server_tools.web_fetch]` tables with their own settings; `enabled` is the old boolean.
`context_editing.trigger_basis` and `context_editing.placeholder` became one server model
spec, `context_editing.server_model` (`"edited,placeholder=TEXT"`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from agentctl.profile.schema import FieldError

# old dotted key -> new dotted key
MOVED = {
    "tools.web_search": "server_tools.web_search.enabled",
    "tools.web_fetch": "server_tools.web_fetch.enabled",
}


# old keys under [context_editing] that now make up the server model spec
SERVER_RULE_KEYS = ("trigger_basis", "placeholder")


def migrate(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` with every moved key under its new name, and one warning per moved key."""
    data, warnings = _server_rules(data)
    for old, new in MOVED.items():
        table, _, name = old.partition(".")
        old_table = data.get(table)
        if not isinstance(old_table, dict) or name not in old_table:
            continue
        data = copy.deepcopy(data)
        value = data[table].pop(name)
        _place(data, new, value, old)
        warnings.append(f"{old}: deprecated, use {new} instead")
    return data, warnings


def _server_rules(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    editing = data.get("context_editing")
    if not isinstance(editing, dict) or not any(k in editing for k in SERVER_RULE_KEYS):
        return data, []
    data = copy.deepcopy(data)
    editing = data["context_editing"]
    old = {k: editing.pop(k) for k in SERVER_RULE_KEYS if k in editing}
    new = "context_editing.server_model"
    if editing.get("server_model"):
        first = next(iter(old))
        raise FieldError(f"context_editing.{first}", f"conflicts with {new} (remove it)")
    basis, placeholder = old.get("trigger_basis", "unedited"), old.get("placeholder")
    if not isinstance(basis, str) or not (placeholder is None or isinstance(placeholder, str)):
        key = "trigger_basis" if not isinstance(basis, str) else "placeholder"
        raise FieldError(f"context_editing.{key}", "expected a string")
    editing["server_model"] = basis + (f",placeholder={placeholder}" if placeholder else "")
    spec = _toml(editing["server_model"])
    warnings = [f"context_editing.{k}: deprecated, use {new} = {spec} instead" for k in old]
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
    if isinstance(value, bool):
        return str(value).lower()
    return json.dumps(value) if isinstance(value, str) else repr(value)
