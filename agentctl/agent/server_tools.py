"""`[server_tools]` -> the tool definitions and betas of a request, versions read from the SDK.

The tool type versions (`web_search_20260318`, ...) are the newest `*_tool_YYYYMMDD` param
modules the installed `anthropic` package ships under `types/beta/`, found by file name so
nothing is imported (the SDK takes over a second to import). A version needs a beta only when
the SDK's `AnthropicBetaParam` lists one named after it (`code_execution_20250522` ->
`code-execution-2025-05-22`). SDK 2.15 lists none for the newest versions, which it also has
as generally available types (`anthropic/types/web_fetch_tool_20260318_param.py`, ...).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path
from typing import Any

from agentctl.errors import ConfigError
from agentctl.profile.settings import ServerToolSettings, UserLocation

# name the model calls -> our settings attribute (the same word)
SERVER_TOOLS = ("web_search", "web_fetch", "code_execution")
_VERSION_FILE = re.compile(r"beta_(?P<name>[a-z_]+)_tool_(?P<date>\d{8})_param\.py")


@functools.cache
def _sdk_root() -> Path:
    spec = importlib.util.find_spec("anthropic")  # a top-level spec: nothing is executed
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("server_tools: the anthropic package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.cache
def sdk_versions() -> dict[str, tuple[str, ...]]:
    """Tool name -> every version date the installed SDK has a param type for, oldest first."""
    found: dict[str, list[str]] = {}
    for path in (_sdk_root() / "types" / "beta").glob("beta_*_tool_*_param.py"):
        match = _VERSION_FILE.fullmatch(path.name)
        if match:
            found.setdefault(match["name"], []).append(match["date"])
    return {name: tuple(sorted(dates)) for name, dates in found.items()}


def tool_type(name: str) -> str:
    """The newest `NAME_YYYYMMDD` type the SDK knows; ConfigError naming the key if none."""
    dates = sdk_versions().get(name)
    if not dates:
        raise ConfigError(
            f"server_tools.{name}: the installed anthropic SDK has no {name} tool type"
            " (upgrade anthropic)"
        )
    return f"{name}_{dates[-1]}"


@functools.cache
def sdk_betas() -> frozenset[str]:
    """The beta names the SDK's AnthropicBetaParam literal lists (read as text)."""
    text = (_sdk_root() / "types" / "anthropic_beta_param.py").read_text(encoding="utf-8")
    return frozenset(re.findall(r'"([a-z0-9-]+-\d{4}-\d{2}-\d{2})"', text))


def beta_for(type_name: str) -> str | None:
    """`code_execution_20250522` -> `code-execution-2025-05-22` when the SDK lists it."""
    name, _, date = type_name.rpartition("_")
    beta = f"{name.replace('_', '-')}-{date[:4]}-{date[4:6]}-{date[6:]}"
    return beta if beta in sdk_betas() else None


def definitions(settings: ServerToolSettings) -> list[dict[str, Any]]:
    """The `tools[]` entries of the server tools the profile turns on."""
    tools: list[dict[str, Any]] = []
    search, fetch = settings.web_search, settings.web_fetch
    if search.enabled:
        tool = _base("web_search", search.max_uses, search.allowed_domains, search.blocked_domains)
        location = _location(search.user_location)
        if location:
            tool["user_location"] = location
        tools.append(tool)
    if fetch.enabled:
        tool = _base("web_fetch", fetch.max_uses, fetch.allowed_domains, fetch.blocked_domains)
        if fetch.citations:
            tool["citations"] = {"enabled": True}
        if fetch.max_content_tokens:
            tool["max_content_tokens"] = fetch.max_content_tokens
        tools.append(tool)
    if settings.code_execution.enabled:
        tools.append({"type": tool_type("code_execution"), "name": "code_execution"})
    return tools


def betas(settings: ServerToolSettings) -> list[str]:
    """The betas the chosen tool versions need (none for generally available ones)."""
    needed = (beta_for(tool["type"]) for tool in definitions(settings))
    return [beta for beta in needed if beta]


def _base(
    name: str, max_uses: int, allowed: tuple[str, ...], blocked: tuple[str, ...]
) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": tool_type(name), "name": name}
    if max_uses:
        tool["max_uses"] = max_uses
    if allowed:
        tool["allowed_domains"] = list(allowed)
    if blocked:
        tool["blocked_domains"] = list(blocked)
    return tool


def _location(location: UserLocation) -> dict[str, str]:
    fields = {
        "city": location.city,
        "region": location.region,
        "country": location.country,
        "timezone": location.timezone,
    }
    given = {key: value for key, value in fields.items() if value}
    return {"type": "approximate", **given} if given else {}
