"""One sentence per profile key and the API field it maps to: for init comments and the docs.

A test checks that every key of `Profile` is described here, so a new setting cannot ship
without its explanation.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, NamedTuple, get_type_hints

from agentctl.profile.schema import NOT_KEYS


class KeyDoc(NamedTuple):
    """What a key means, and where it ends up ("client" when it never reaches the API)."""

    meaning: str
    api: str = "client"


_TU = "context_editing.tool_uses"
_CLEAR = "edits[] clear_tool_uses_20250919"
_WS = "server_tools.web_search"
_WF = "server_tools.web_fetch"

KEY_DOCS: dict[str, KeyDoc] = {
    "model": KeyDoc("Model id sent with every request.", "model"),
    "max_tokens": KeyDoc(
        "Output cap per response; must exceed thinking.budget_tokens.", "max_tokens"
    ),
    "max_turns": KeyDoc("Stop the run (exit 3) after this many model turns."),
    "system": KeyDoc("System prompt text (empty: no system prompt is sent).", "system"),
    "betas": KeyDoc(
        'Beta flags agentctl does not know yet, e.g. ["context-1m-2025-08-07"]: sent after'
        " agentctl's own in every request, duplicates dropped.",
        "anthropic-beta header",
    ),
    "thinking": KeyDoc("Extended thinking."),
    "thinking.enabled": KeyDoc("Turn extended thinking on.", 'thinking.type = "enabled"'),
    "thinking.budget_tokens": KeyDoc(
        "Thinking budget; the API wants >= 1024 and < max_tokens (not sent when adaptive).",
        "thinking.budget_tokens",
    ),
    "thinking.adaptive": KeyDoc(
        "With enabled: adaptive thinking, the model decides how much to think (no budget).",
        'thinking.type = "adaptive"',
    ),
    "context_editing": KeyDoc("Server-side context editing (beta context-management-2025-06-27)."),
    _TU: KeyDoc("Clear old tool results once the prompt grows past a trigger.", _CLEAR),
    f"{_TU}.enabled": KeyDoc("Send the clear_tool_uses_20250919 edit.", _CLEAR),
    f"{_TU}.trigger_kind": KeyDoc(
        'What the trigger counts: "input_tokens" or "tool_uses".', "trigger.type"
    ),
    f"{_TU}.trigger": KeyDoc("Clearing starts once the prompt exceeds this.", "trigger.value"),
    f"{_TU}.keep": KeyDoc("Most recent tool uses left intact when clearing.", "keep.value"),
    f"{_TU}.clear_at_least": KeyDoc(
        "Skip a clearing that would free fewer input tokens (0 = not sent).",
        "clear_at_least.value",
    ),
    f"{_TU}.exclude_tools": KeyDoc(
        "Tools whose uses and results are never cleared.", "exclude_tools"
    ),
    f"{_TU}.clear_tool_inputs": KeyDoc(
        "Also clear tool_use inputs: true, or a list of tool names.", "clear_tool_inputs"
    ),
    f"{_TU}.strategy": KeyDoc(
        '"batched" (default): agentctl steers the server\'s edit so clearings come in batches'
        ' (trigger = high-water mark) and the cache holds between them; "server": the edit'
        " is sent as written and the server clears anew each turn."
    ),
    f"{_TU}.low_water": KeyDoc(
        "Batched: a clearing brings the prompt down to at most this many input tokens"
        " (0 = as far as keep allows)."
    ),
    "context_editing.server_model": KeyDoc(
        "The server rules the offline emulator and simulate/tune play (trigger basis, which"
        " results count toward keep, placeholder, thinking keep): default, unedited-basis or"
        ' placeholder-line with overrides, e.g. "default,trigger_basis=unedited" (the old'
        " names unedited, edited, unedited-large, edited-large still work);"
        ' "" = the calibration from `agentctl probe`, else default. Never sent.'
    ),
    "context_editing.thinking": KeyDoc(
        "Clear old thinking blocks (needs thinking.enabled).", "edits[] clear_thinking_20251015"
    ),
    "context_editing.thinking.enabled": KeyDoc(
        "Send the clear_thinking_20251015 edit (listed first).", "edits[] clear_thinking_20251015"
    ),
    "context_editing.thinking.keep": KeyDoc(
        'Thinking turns kept: a count, or "all".', "keep (thinking_turns / all)"
    ),
    "context_editing.compaction": KeyDoc(
        "Server-side compaction: summarise the conversation once the prompt reaches a trigger.",
        "edits[] compact_20260112 + beta compact-2026-01-12",
    ),
    "context_editing.compaction.enabled": KeyDoc(
        "Turn compaction on (threshold: the compact_20260112 edit, listed last, and its beta).",
        "edits[] compact_20260112",
    ),
    "context_editing.compaction.mode": KeyDoc(
        '"threshold": the server compacts at the trigger; "on-demand": once a response\'s'
        " prompt reached the trigger, the run sends a compaction request of its own (no edit;"
        " beta compact-2026-09-04).",
        'edits[] compact_20260112 / compaction {"type": "summarize"}',
    ),
    "context_editing.compaction.trigger": KeyDoc(
        "Compact once the prompt reaches this many input tokens (threshold: the API's"
        " minimum is 50000).",
        "trigger.value (threshold)",
    ),
    "context_editing.compaction.instructions": KeyDoc(
        'Replaces the server\'s summarisation prompt ("" = not sent: the default prompt).',
        "instructions",
    ),
    "context_editing.compaction.pause_after_compaction": KeyDoc(
        'Threshold: stop after the compaction block (stop_reason "compaction"); the run'
        " resends at once.",
        "pause_after_compaction",
    ),
    "cache": KeyDoc("Prompt caching."),
    "cache.enabled": KeyDoc("Mark the stable prefix with cache breakpoints.", "cache_control"),
    "cache.ttl": KeyDoc('"5m" (writes cost 1.25x input) or "1h" (2x).', "cache_control.ttl"),
    "memory": KeyDoc("The memory store behind the memory tool."),
    "memory.root": KeyDoc(
        "Directory the model sees as /memories; if left out, ./memory in the current directory."
    ),
    "memory.max_file_bytes": KeyDoc("Largest single memory file, bytes (0 = no limit)."),
    "memory.max_total_bytes": KeyDoc(
        "Largest total size of the memory directory, bytes (0 = no limit)."
    ),
    "memory.max_files": KeyDoc("Most files the memory directory may hold (0 = no limit)."),
    "memory.max_view_chars": KeyDoc("Longest `view` result returned to the model."),
    "memory.history_max_bytes": KeyDoc(
        "Size past which the memory history (journal and kept contents) is pruned, oldest"
        " first, bytes (0 = no bound)."
    ),
    "memory.review": KeyDoc(
        '"queue": a run\'s memory writes wait in a pending layer (the run reads them back)'
        ' until `agentctl memory review --apply`; "off": written at once. A task cannot'
        " turn it off."
    ),
    "tools": KeyDoc("Which tools the model is offered."),
    "tools.memory": KeyDoc("Offer the memory tool.", 'tools[] memory_20250818 "memory"'),
    "tools.workspace": KeyDoc("Offer the read-only workspace tools.", "tools[] (custom)"),
    "tools.workspace_root": KeyDoc(
        "Directory the workspace tools may read (relative: to this file)."
    ),
    "tools.max_result_chars": KeyDoc("Longest client tool result sent back to the model."),
    "server_tools": KeyDoc(
        "Tools the API runs itself (web search, web fetch, code execution); the tool versions"
        " are the newest the installed anthropic SDK knows."
    ),
    "server_tools.web_search": KeyDoc("Web search, billed per search.", "tools[] web_search_*"),
    f"{_WS}.enabled": KeyDoc("Offer the web search tool.", "tools[] web_search_*"),
    f"{_WS}.max_uses": KeyDoc("Most searches per request (0 = not sent).", "max_uses"),
    f"{_WS}.allowed_domains": KeyDoc(
        "Search only these domains (not with blocked_domains).", "allowed_domains"
    ),
    f"{_WS}.blocked_domains": KeyDoc("Never search these domains.", "blocked_domains"),
    f"{_WS}.user_location": KeyDoc(
        "Rough user location for more relevant results (empty: not sent).", "user_location"
    ),
    f"{_WS}.user_location.city": KeyDoc("City name.", "user_location.city"),
    f"{_WS}.user_location.region": KeyDoc("Region name.", "user_location.region"),
    f"{_WS}.user_location.country": KeyDoc(
        'Two-letter ISO country code, e.g. "US".', "user_location.country"
    ),
    f"{_WS}.user_location.timezone": KeyDoc(
        'IANA time zone, e.g. "America/New_York".', "user_location.timezone"
    ),
    "server_tools.web_fetch": KeyDoc(
        "Web fetch: no charge beyond the tokens it adds.", "tools[] web_fetch_*"
    ),
    f"{_WF}.enabled": KeyDoc("Offer the web fetch tool.", "tools[] web_fetch_*"),
    f"{_WF}.max_uses": KeyDoc("Most fetches per request (0 = not sent).", "max_uses"),
    f"{_WF}.allowed_domains": KeyDoc(
        "Fetch only from these domains (not with blocked_domains).", "allowed_domains"
    ),
    f"{_WF}.blocked_domains": KeyDoc("Never fetch from these domains.", "blocked_domains"),
    f"{_WF}.citations": KeyDoc("Let the model cite fetched documents.", "citations.enabled"),
    f"{_WF}.max_content_tokens": KeyDoc(
        "Cut fetched documents at about this many tokens (0 = not sent).", "max_content_tokens"
    ),
    "server_tools.code_execution": KeyDoc(
        "Code execution in Anthropic's sandbox, billed by container time.",
        "tools[] code_execution_*",
    ),
    "server_tools.code_execution.enabled": KeyDoc(
        "Offer the code execution tool.", "tools[] code_execution_*"
    ),
    "limits": KeyDoc("Budgets that stop a run with exit code 3."),
    "limits.max_input_tokens": KeyDoc(
        "Stop once a run's prompt tokens (input + cache, all turns) reach this (0 = no limit)."
    ),
    "limits.max_usd": KeyDoc("Estimated-cost budget of a run in USD (0 = no limit)."),
    "api": KeyDoc("How to reach the Messages API."),
    "api.base_url": KeyDoc("API URL; empty means $ANTHROPIC_BASE_URL or the SDK default."),
    "api.timeout_s": KeyDoc(
        "Longest wait in seconds for the server to connect or send anything (per read)."
    ),
    "api.deadline_s": KeyDoc(
        "Longest time in seconds one request may take in total, streamed response included."
    ),
    "api.max_retries": KeyDoc("Retries on 429, 5xx and connection errors (0 = none)."),
    "prices": KeyDoc('Price overrides: one [prices."MODEL"] table per model, USD per Mtok.'),
    "prices.MODEL.input": KeyDoc("Uncached input tokens."),
    "prices.MODEL.output": KeyDoc("Output tokens (thinking included)."),
    "prices.MODEL.cache_write_5m": KeyDoc("Cache writes with the 5-minute TTL."),
    "prices.MODEL.cache_write_1h": KeyDoc("Cache writes with the 1-hour TTL."),
    "prices.MODEL.cache_read": KeyDoc("Cache reads."),
    "mcp": KeyDoc("MCP servers whose tools the model is offered as mcp__NAME__TOOL."),
    "mcp.servers": KeyDoc("One [mcp.servers.NAME] table per server (NAME: letters, digits, _ -)."),
    "mcp.servers.NAME.command": KeyDoc(
        'Program and arguments of a stdio server, e.g. ["python", "server.py"].'
    ),
    "mcp.servers.NAME.env": KeyDoc("Environment variables added for the server process."),
    "mcp.servers.NAME.cwd": KeyDoc(
        "Working directory of the server (relative: to this file; default: its folder)."
    ),
    "mcp.servers.NAME.url": KeyDoc("URL of a streamable HTTP server (instead of command)."),
    "mcp.servers.NAME.headers": KeyDoc("HTTP headers sent to a url server, e.g. Authorization."),
    "mcp.servers.NAME.allow": KeyDoc("Offer only these tools of the server (empty: all)."),
    "mcp.servers.NAME.deny": KeyDoc("Never offer these tools of the server."),
    "mcp.servers.NAME.timeout_s": KeyDoc(
        "Longest wait in seconds for one tool call (for the start: at least 30)."
    ),
}

# The placeholder for the key of a `dict` table in dotted keys (`prices.MODEL.input`).
DICT_KEY_NAMES = {"prices": "MODEL"}


def dict_key(key: str) -> str:
    """`key` followed by the placeholder of its dict table's keys."""
    return f"{key}.{DICT_KEY_NAMES.get(key, 'NAME')}."


def all_keys(cls: type[Any], prefix: str = "") -> list[str]:
    """Every dotted key (tables too) of a settings class; dict tables appear as `NAME.MODEL.*`."""
    keys: list[str] = []
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in NOT_KEYS:
            continue
        key = f"{prefix}{f.name}"
        keys.append(key)
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            keys.extend(all_keys(tp, key + "."))
        elif _dict_of_tables(tp):
            keys.extend(all_keys(tp.__args__[1], dict_key(key)))
    return keys


def _dict_of_tables(tp: Any) -> bool:
    """`dict[str, SomeTable]` (its keys are user names), not `dict[str, str]` (a leaf)."""
    return getattr(tp, "__origin__", None) is dict and dataclasses.is_dataclass(tp.__args__[1])


def path_keys(cls: type[Any], prefix: str = "") -> list[str]:
    """Dotted keys whose values are paths (memory.root, tools.workspace_root)."""
    keys: list[str] = []
    for name, tp in get_type_hints(cls).items():
        if tp is Path:
            keys.append(prefix + name)
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
            keys.extend(path_keys(tp, f"{prefix}{name}."))
    return keys


def key_locations(cls: type[Any], name: str) -> list[str]:
    """The tables in which a key called `name` exists, e.g. 'keep' -> two context tables."""
    return [k.rpartition(".")[0] for k in all_keys(cls) if k.rpartition(".")[2] == name]


def markdown_key_table() -> str:
    """The key reference of docs/profile.md (a test keeps the docs equal to this)."""
    import json

    from agentctl.profile.schema import describe_type
    from agentctl.profile.settings import McpServer, McpSettings, Profile
    from agentctl.profile.writer import profile_to_dict

    # One server named NAME so that its keys show their defaults.
    defaults = profile_to_dict(Profile(mcp=McpSettings(servers={"NAME": McpServer()})))
    rows = ["| key | type | default | meaning | API field |", "|---|---|---|---|---|"]
    for key, tp in leaf_types(Profile).items():
        value: Any = defaults
        for name in key.split("."):
            value = value.get(name, "(required)") if isinstance(value, dict) else value
        default = value if value == "(required)" else f"`{json.dumps(value)}`"
        doc = KEY_DOCS[key]
        kind = describe_type(tp).removeprefix("a ").removeprefix("an ")
        api = "(client side)" if doc.api == "client" else f"`{doc.api}`"
        rows.append(f"| `{key}` | {kind} | {default} | {doc.meaning} | {api} |")
    return "\n".join(rows) + "\n"


def leaf_types(cls: type[Any], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> type hint of every non-table setting."""
    result: dict[str, Any] = {}
    for name, tp in get_type_hints(cls).items():
        if name in NOT_KEYS:
            continue
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            result.update(leaf_types(tp, f"{prefix}{name}."))
        elif _dict_of_tables(tp):
            result.update(leaf_types(tp.__args__[1], dict_key(prefix + name)))
        else:
            result[prefix + name] = tp
    return result
