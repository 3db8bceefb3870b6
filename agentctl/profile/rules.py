"""Semantic rules on a typed Profile: impossible values (errors) and risky ones (warnings).

Type and key checks happen in `schema.py`; here the values are known to have the right types.
Errors raise `FieldError` (the loader names the file); warnings come back as strings.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
from collections.abc import Iterator
from typing import Any

from agentctl import clock
from agentctl.context.prices import price_for
from agentctl.context.server_model import ServerModelError, parse_server_model
from agentctl.profile.models import model_warning, price_warning, thinking_enabled_deprecated
from agentctl.profile.schema import FieldError, Key, join_key, key_of
from agentctl.profile.settings import (
    ApprovalSettings,
    ClearToolUses,
    Compaction,
    McpServer,
    Profile,
)

# The API's rules for extended thinking (budget_tokens >= 1024 and < max_tokens).
MIN_THINKING_BUDGET = 1024
# The API refuses a compact_20260112 trigger below this (observed live).
MIN_COMPACT_TRIGGER = 50_000
# Below this many input tokens, a clear_tool_uses trigger fires on nearly every turn of a
# tool-using agent (the system prompt and tool definitions alone take a few thousand).
LOW_INPUT_TRIGGER = 5_000

# An MCP server's name, as it appears in `mcp__NAME__TOOL` (the API allows [a-zA-Z0-9_-]).
MCP_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
# A beta flag as the API names them: lowercase words and a date, e.g. "compact-2026-09-04".
BETA_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*-\d{4}-\d{2}-\d{2}")


def check_profile(profile: Profile, today: datetime.date | None = None) -> list[str]:
    """Raise FieldError on the first impossible value; return the warnings, in key order.

    `today` decides whether a listed model is deprecated or retired (default: the clock's).
    """
    check_ranges(profile)
    check_thinking(profile)
    check_strings(profile)
    check_betas(profile.betas)
    check_batched(profile.context_editing.tool_uses)
    check_server_model(profile.context_editing.server_model)
    check_compaction(profile.context_editing.compaction)
    check_mcp_servers(profile)
    check_server_tools(profile)
    check_approval(profile.approval)
    return list(collect_warnings(profile, today or clock.today()))


def check_budget(profile: Profile) -> None:
    """A USD budget needs a price for the model: without one it could never be kept.

    Checked for the profile a command is about to use (`loader.build_overridden`), not for a
    recorded session's, which is read as it was."""
    budget = profile.limits.max_usd
    if budget and price_for(profile.model, profile.prices) is None:
        raise FieldError(
            "limits.max_usd",
            f"a budget of {budget} USD cannot be kept: no price is known for"
            f' {profile.model!r} (add a [prices."{profile.model}"] table, pick a priced model,'
            " or set limits.max_usd = 0 for no budget)",
        )


def walk_numbers(obj: Any, prefix: str = "") -> Iterator[tuple[str, int | float, Key]]:
    """(dotted key, value, its Key) of every int / float setting, prices included."""
    if isinstance(obj, dict):
        for name, value in obj.items():
            if dataclasses.is_dataclass(value):  # not the strings of an `env` table
                yield from walk_numbers(value, join_key(prefix, name))
        return
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        key = join_key(prefix, f.name)
        if dataclasses.is_dataclass(value) or isinstance(value, dict):
            yield from walk_numbers(value, key)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield key, value, key_of(f)


def check_ranges(profile: Profile) -> None:
    """Counts are >= 1 (or >= 0 where 0 means 'none'); amounts are finite and >= 0 (or > 0)."""
    for key, value, rule in walk_numbers(profile):
        problem = range_problem(value, rule)
        if problem:
            raise FieldError(key, problem)


def range_problem(value: int | float, rule: Key) -> str | None:
    """What is wrong with one number under its key's `zero` rule, or None."""
    if isinstance(value, int):
        low = 0 if rule.zero else 1
        return None if value >= low else f"must be an integer >= {low}, got {value}"
    if not math.isfinite(value):  # TOML allows inf and nan; no setting means either
        return f"must be a finite number, got {value}"
    if rule.zero is False:
        return None if value > 0 else f"must be a number > 0, got {value}"
    return None if value >= 0 else f"must be a number >= 0, got {value}"


def check_thinking(profile: Profile) -> None:
    """The API's extended-thinking rules, and clear_thinking's need for thinking."""
    thinking = profile.thinking
    manual = thinking.enabled and not thinking.adaptive  # adaptive sends no budget
    if thinking.adaptive and not thinking.enabled:
        raise FieldError(
            "thinking.adaptive",
            "adaptive thinking is a kind of extended thinking (set thinking.enabled = true,"
            " or thinking.adaptive = false)",
        )
    if manual and thinking.budget_tokens < MIN_THINKING_BUDGET:
        raise FieldError(
            "thinking.budget_tokens",
            f"{thinking.budget_tokens} is below the API minimum of {MIN_THINKING_BUDGET}"
            f" (set it to at least {MIN_THINKING_BUDGET})",
        )
    if manual and thinking.budget_tokens >= profile.max_tokens:
        raise FieldError(
            "thinking.budget_tokens",
            f"{thinking.budget_tokens} must be less than max_tokens ({profile.max_tokens})"
            " (lower the budget or raise max_tokens)",
        )
    if profile.context_editing.thinking.enabled and not thinking.enabled:
        raise FieldError(
            "context_editing.thinking.enabled",
            "clear_thinking needs extended thinking, the API rejects it otherwise"
            " (set thinking.enabled = true, or context_editing.thinking.enabled = false)",
        )


def check_server_model(spec: str) -> None:
    """A server model spec must name a preset and valid overrides ("" = calibration/default)."""
    if not spec:
        return
    try:
        parse_server_model(spec)
    except ServerModelError as err:
        raise FieldError("context_editing.server_model", str(err)) from None


def check_batched(s: ClearToolUses) -> None:
    """Batched clearing (the default) needs a token trigger (the high-water mark) above
    low_water, and keeps at least one tool use; low_water means nothing without it."""
    key = "context_editing.tool_uses"
    if s.strategy == "server":
        if s.low_water:
            raise FieldError(f"{key}.low_water", 'only used with strategy = "batched"')
        return
    if s.trigger_kind != "input_tokens":
        raise FieldError(
            f"{key}.trigger_kind",
            'strategy = "batched" (the default) needs "input_tokens"'
            ' (set strategy = "server" for a tool_uses trigger)',
        )
    if not s.low_water < s.trigger:
        raise FieldError(
            f"{key}.low_water",
            f"{s.low_water}: batched clearing needs low_water < trigger ({s.trigger})",
        )
    if s.keep < 1:
        raise FieldError(f"{key}.keep", 'strategy = "batched" keeps at least 1 tool use')


def check_compaction(s: Compaction) -> None:
    """The API's minimum trigger (threshold mode); settings of a compaction that is off, or
    that its mode does not use, would do nothing."""
    key = "context_editing.compaction"
    if not s.enabled:
        default = Compaction()
        changed = [
            name
            for name in ("mode", "trigger", "instructions", "pause_after_compaction")
            if getattr(s, name) != getattr(default, name)
        ]
        if changed:
            raise FieldError(
                f"{key}.{changed[0]}",
                f"has no effect while {key}.enabled = false (enable compaction or remove it)",
            )
        return
    if s.on_demand and s.pause_after_compaction:
        raise FieldError(
            f"{key}.pause_after_compaction",
            'only with mode = "threshold" (an on-demand compaction always stops after its block)',
        )
    if s.threshold and s.trigger < MIN_COMPACT_TRIGGER:
        raise FieldError(
            f"{key}.trigger",
            f"{s.trigger} is below the API minimum of {MIN_COMPACT_TRIGGER} input tokens",
        )
    if s.instructions and not s.instructions.strip():
        raise FieldError(f"{key}.instructions", 'must not be blank (use "" for the default)')


def check_strings(profile: Profile) -> None:
    """Names the API needs must not be empty."""
    if not profile.model.strip():
        raise FieldError("model", 'must not be empty (e.g. model = "claude-sonnet-5")')
    tool_uses = profile.context_editing.tool_uses
    lists = {"exclude_tools": tool_uses.exclude_tools}
    if isinstance(tool_uses.clear_tool_inputs, tuple):
        lists["clear_tool_inputs"] = tool_uses.clear_tool_inputs
    for name, values in lists.items():
        for i, tool in enumerate(values):
            if not tool.strip():
                key = f"context_editing.tool_uses.{name}[{i}]"
                raise FieldError(key, "tool names must not be empty")


def check_betas(betas: tuple[str, ...]) -> None:
    """Each extra beta flag has the API's shape (it is sent as one item of a header)."""
    for i, beta in enumerate(betas):
        if not BETA_NAME.fullmatch(beta):
            raise FieldError(
                f"betas[{i}]",
                f"{beta!r} is not a beta flag name (lowercase words and a date, e.g."
                ' "context-1m-2025-08-07")',
            )


# The memory tool's commands, the ones an `[approval]` pattern `memory:COMMAND` may name.
MEMORY_COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


def check_approval(rules: ApprovalSettings) -> None:
    """Every pattern names something: not empty, and `memory:X` one of the memory commands
    (a misspelt command would match nothing, and a `deny` of it would protect nothing)."""
    for name in ("allow", "ask", "deny"):
        for index, pattern in enumerate(getattr(rules, name)):
            key = f"approval.{name}[{index}]"
            if not pattern.strip():
                raise FieldError(key, "an empty pattern matches no tool")
            command = pattern.partition(":")[2] if pattern.startswith("memory:") else None
            if (
                command
                and not any(c in command for c in "*?[")
                and (command not in MEMORY_COMMANDS)
            ):
                known = ", ".join(MEMORY_COMMANDS)
                raise FieldError(key, f"{pattern!r}: memory has no command {command!r} ({known})")


def check_mcp_servers(profile: Profile) -> None:
    """Each server has a usable name, a command or an http(s) URL, and a timeout."""
    for name, server in profile.mcp.servers.items():
        key = join_key("mcp.servers", name)
        problem = mcp_server_problem(name, server)
        if problem:
            raise FieldError(f"{key}.{problem[0]}", problem[1])


def mcp_server_problem(name: str, server: McpServer) -> tuple[str, str] | None:
    """(key, what is wrong) for one server, or None."""
    if not MCP_NAME.fullmatch(name):
        return "command", f"server name {name!r} must be letters, digits, _ or - (max 40)"
    if server.url and server.command:
        return "url", "give either command (a stdio server) or url (an HTTP server), not both"
    if server.url and not server.url.startswith(("http://", "https://")):
        return "url", f"{server.url!r} is not an http:// or https:// URL"
    if server.headers and not server.url:
        return "headers", "only a url server takes HTTP headers"
    if not server.url and (not server.command or not server.command[0].strip()):
        return "command", 'missing: the program to start, e.g. command = ["python", "server.py"]'
    if server.timeout_s <= 0:
        return "timeout_s", f"must be a number > 0, got {server.timeout_s}"
    return None


def check_server_tools(profile: Profile) -> None:
    """Domain lists are bare domains, one kind per tool; a country is a two-letter code."""
    tools = profile.server_tools
    for name, tool in (("web_search", tools.web_search), ("web_fetch", tools.web_fetch)):
        key = f"server_tools.{name}"
        if tool.allowed_domains and tool.blocked_domains:
            raise FieldError(
                f"{key}.blocked_domains",
                "the API takes allowed_domains or blocked_domains, not both (remove one)",
            )
        for field_name in ("allowed_domains", "blocked_domains"):
            for i, domain in enumerate(getattr(tool, field_name)):
                problem = domain_problem(domain)
                if problem:
                    raise FieldError(f"{key}.{field_name}[{i}]", problem)
    country = tools.web_search.user_location.country
    if country and not re.fullmatch(r"[A-Za-z]{2}", country):
        raise FieldError(
            "server_tools.web_search.user_location.country",
            f'{country!r} is not a two-letter ISO country code (e.g. "US")',
        )


def domain_problem(domain: str) -> str | None:
    """What is wrong with one domain of an allowed/blocked list, or None."""
    if not domain.strip():
        return "domains must not be empty"
    if "://" in domain or domain != domain.strip():
        return f'{domain!r}: give the domain without scheme or spaces (e.g. "example.com")'
    return None


def collect_warnings(profile: Profile, today: datetime.date) -> Iterator[str]:
    """Settings the API accepts but that probably do not do what the user wants."""
    for warning in (
        model_warning(profile.model, today),
        price_warning(profile.model, profile.prices),
    ):
        if warning:
            yield warning
    thinking = profile.thinking
    if (
        thinking.enabled
        and not thinking.adaptive
        and profile.model in thinking_enabled_deprecated()
    ):
        yield (
            f'thinking.enabled: the SDK reports that thinking type "enabled" is deprecated on'
            f" {profile.model!r} in favour of adaptive thinking (set thinking.adaptive = true)"
        )
    tool_uses = profile.context_editing.tool_uses
    if tool_uses.enabled:
        yield from tool_use_warnings(tool_uses, memory_on=profile.tools.memory)


def tool_use_warnings(s: ClearToolUses, *, memory_on: bool) -> Iterator[str]:
    """Triggers that fire every turn, keeps that leave nothing to clear, and the like."""
    key = "context_editing.tool_uses"
    if s.trigger_kind == "input_tokens" and s.trigger < LOW_INPUT_TRIGGER:
        yield (
            f"{key}.trigger: {s.trigger} input tokens is so low that clearing runs on nearly"
            " every turn and rewrites the prompt cache each time (20000 or more is usual)"
        )
    if s.trigger_kind == "tool_uses" and s.trigger <= s.keep:
        yield (
            f"{key}.keep: keep ({s.keep}) is not below the tool_uses trigger ({s.trigger}),"
            " so there is little or nothing to clear when it fires (set keep < trigger)"
        )
    if s.trigger_kind == "input_tokens" and s.clear_at_least > s.trigger:
        yield (
            f"{key}.clear_at_least: {s.clear_at_least} is larger than the trigger"
            f" ({s.trigger}): nothing is cleared until {s.clear_at_least} tokens can be,"
            " well past the trigger"
        )
    yield from memory_input_warning(s, memory_on=memory_on)


def memory_input_warning(s: ClearToolUses, *, memory_on: bool) -> Iterator[str]:
    """Clearing memory tool inputs drops from context what the model just saved."""
    inputs = s.clear_tool_inputs
    clears_memory = inputs is True or (isinstance(inputs, tuple) and "memory" in inputs)
    if memory_on and clears_memory and "memory" not in s.exclude_tools:
        yield (
            "context_editing.tool_uses.clear_tool_inputs: memory tool calls will be cleared,"
            ' inputs included (add "memory" to exclude_tools to keep them in context)'
        )
