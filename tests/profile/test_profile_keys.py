"""Each profile key is defined once (profile/settings.py); the docs, trust and ranges read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctl.profile.keys import KEY_DOCS, leaf_types, path_keys, task_rule, walk
from agentctl.profile.rules import walk_numbers
from agentctl.profile.schema import to_plain
from agentctl.profile.settings import McpServer, McpSettings, Profile

DOCS = Path(__file__).resolve().parents[2] / "docs" / "profile.md"


def docs_rows() -> dict[str, list[str]]:
    """docs/profile.md's key table: key -> its cells (type, default, meaning, API, task)."""
    rows: dict[str, list[str]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 6 and cells[0].startswith("`") and cells[0] != "key":
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_docs_table_has_every_key_once_with_its_default_and_meaning() -> None:
    rows = docs_rows()
    assert sorted(rows) == sorted(leaf_types())
    defaults = to_plain(Profile(mcp=McpSettings(servers={"NAME": McpServer()})))
    for key, cells in rows.items():
        value = defaults
        for name in key.split("."):
            value = value.get(name, "(required)") if isinstance(value, dict) else value
        shown = value if value == "(required)" else f"`{json.dumps(value)}`"
        if value == "(required)" and leaf_types()[key] == Path | None:
            shown = "(none)"  # an optional path: left out, it is not set
        assert cells[1] == shown, key
        assert cells[2] == KEY_DOCS[key].meaning, key
        assert cells[3] == (f"`{KEY_DOCS[key].api}`" if KEY_DOCS[key].api else "(client side)")


def test_every_key_and_table_says_what_it_means() -> None:
    blank = [key for key, doc, _ in walk() if not doc.meaning.strip()]
    assert blank == []


def rule(key: str) -> str:
    found = task_rule(key)
    assert found is not None, key
    return found[1].task


def test_what_a_task_may_do_is_read_from_the_definitions() -> None:
    """The rules the trust check applied from its own lists before the keys carried them."""
    lower = {k for k, _, _ in walk() if rule(k) == "lower"}
    assert lower == {
        "max_turns",
        "limits.max_usd",
        "limits.max_input_tokens",
        "memory.max_file_bytes",
        "memory.max_total_bytes",
        "memory.max_files",
        "memory.history_max_bytes",
        "server_tools.web_search.max_uses",
        "server_tools.web_fetch.max_uses",
    }
    off = {k for k, _, _ in walk() if rule(k) == "off"}
    assert off == {
        f"server_tools.{t}.enabled" for t in ("web_search", "web_fetch", "code_execution")
    }
    assert {k for k, _, _ in walk() if rule(k) == "tighten"} == {"memory.review"}
    for key in ("api.base_url", "prices.claude-x.input", "mcp.servers.files.command", "betas"):
        assert rule(key) == "refuse"
    assert task_rule("server_tools.web_search.user_location.city") == (
        "server_tools.web_search.user_location",
        KEY_DOCS["server_tools.web_search.user_location"],
    )
    assert rule("context_editing.tool_uses.trigger") == "set"
    assert task_rule("context_editing.tool_uses.nope") is None
    assert path_keys() == ["memory.root", "tools.workspace_root", "output.schema"]


@pytest.mark.parametrize(
    ("key", "zero"),
    [
        ("limits.max_input_tokens", True),
        ("context_editing.tool_uses.keep", None),
        ("api.timeout_s", False),
        ("limits.max_usd", None),
    ],
)
def test_range_rules_come_with_the_key(key: str, zero: bool | None) -> None:
    numbers = {k: r for k, _, r in walk_numbers(Profile())}
    assert numbers[key].zero is zero
