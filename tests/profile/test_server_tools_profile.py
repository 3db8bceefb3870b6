"""`[server_tools]`: parsing, validation naming the key, the old keys, trust, the request."""

from __future__ import annotations

import importlib
import io
from pathlib import Path
from typing import Any

import pytest

from agentctl.agent.request import betas, server_tools
from agentctl.agent.server_tools import beta_for, sdk_versions, tool_type
from agentctl.agent.task import read_task
from agentctl.errors import ConfigError
from agentctl.profile.loader import build_profile
from agentctl.profile.settings import Profile
from agentctl.runner import plan_new

FULL = {
    "server_tools": {
        "web_search": {
            "enabled": True,
            "max_uses": 5,
            "blocked_domains": ["spam.example"],
            "user_location": {"city": "Paris", "country": "FR", "timezone": "Europe/Paris"},
        },
        "web_fetch": {
            "enabled": True,
            "max_uses": 3,
            "allowed_domains": ["docs.example.com"],
            "citations": True,
            "max_content_tokens": 4000,
        },
        "code_execution": {"enabled": True},
    }
}


def build(data: dict[str, Any]) -> tuple[Profile, list[str]]:
    return build_profile(data, source="p.toml", base_dir=Path.cwd())


def error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        build(data)
    return str(caught.value)


@pytest.mark.dates
def test_every_setting_reaches_the_request() -> None:
    profile, warnings = build(FULL)
    assert warnings == []
    search, fetch, code = server_tools(profile)
    assert search == {
        "type": tool_type("web_search"),
        "name": "web_search",
        "max_uses": 5,
        "blocked_domains": ["spam.example"],
        "user_location": {
            "type": "approximate",
            "city": "Paris",
            "country": "FR",
            "timezone": "Europe/Paris",
        },
    }
    assert fetch == {
        "type": tool_type("web_fetch"),
        "name": "web_fetch",
        "max_uses": 3,
        "allowed_domains": ["docs.example.com"],
        "citations": {"enabled": True},
        "max_content_tokens": 4000,
    }
    assert code == {"type": tool_type("code_execution"), "name": "code_execution"}
    assert server_tools(Profile()) == []


@pytest.mark.parametrize("name", ["web_search", "web_fetch", "code_execution"])
def test_versions_are_the_newest_param_type_the_sdk_ships(name: str) -> None:
    chosen = tool_type(name)
    dates = sdk_versions()[name]
    assert chosen == f"{name}_{max(dates)}" and len(dates) >= 2
    # The chosen file is a real SDK module whose `type` literal is exactly that version.
    date = chosen.rpartition("_")[2]
    module = importlib.import_module(f"anthropic.types.beta.beta_{name}_tool_{date}_param")
    param = getattr(module, module.__all__[0])
    assert chosen in str(param.__annotations__["type"])


@pytest.mark.dates
def test_betas_come_from_the_sdk_list() -> None:
    assert beta_for("code_execution_20250522") == "code-execution-2025-05-22"
    assert beta_for("web_search_20260318") is None
    profile, _ = build(FULL)
    assert betas(profile)[0] == "context-management-2025-06-27"


@pytest.mark.parametrize(
    ("table", "key", "words"),
    [
        (
            {"web_search": {"allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}},
            "server_tools.web_search.blocked_domains",
            "not both",
        ),
        (
            {"web_fetch": {"allowed_domains": ["https://a.com"]}},
            "server_tools.web_fetch.allowed_domains[0]",
            "without scheme",
        ),
        ({"web_fetch": {"max_uses": -1}}, "server_tools.web_fetch.max_uses", ">= 0"),
        (
            {"web_search": {"user_location": {"country": "France"}}},
            "server_tools.web_search.user_location.country",
            "two-letter",
        ),
        ({"web_search": {"enabled": "yes"}}, "server_tools.web_search.enabled", "boolean"),
        ({"web_serch": {}}, "server_tools.web_serch", "did you mean 'web_search'"),
    ],
)
def test_bad_values_name_the_key(table: dict[str, Any], key: str, words: str) -> None:
    message = error({"server_tools": table})
    assert message.startswith(f"profile p.toml: {key}: ") and words in message


@pytest.mark.dates
def test_old_keys_still_work_with_a_warning_naming_the_new_key() -> None:
    profile, warnings = build({"tools": {"web_search": True, "web_fetch": False}})
    assert profile.server_tools.web_search.enabled
    assert not profile.server_tools.web_fetch.enabled
    assert warnings == [
        "tools.web_search: deprecated, use server_tools.web_search.enabled instead",
        "tools.web_fetch: deprecated, use server_tools.web_fetch.enabled instead",
    ]
    clash = {"tools": {"web_fetch": True}, "server_tools": {"web_fetch": {"enabled": False}}}
    assert "tools.web_fetch: conflicts with server_tools.web_fetch.enabled" in error(clash)


def resolve(tmp_path: Path, front: str, profile: Path | None = None) -> Profile:
    folder = tmp_path / "task"
    folder.mkdir(exist_ok=True)
    path = folder / "task.md"
    path.write_text(f"+++\n{front}\n+++\nResearch.\n")
    return plan_new(read_task(str(path), io.StringIO()), profile).profile


@pytest.mark.parametrize(
    ("front", "key"),
    [
        ("[server_tools.code_execution]\nenabled = true", "server_tools.code_execution.enabled"),
        ("[server_tools.web_fetch]\nenabled = true", "server_tools.web_fetch.enabled"),
        ('[server_tools.web_fetch]\nallowed_domains = ["x.com"]', "web_fetch.allowed_domains"),
        ('[server_tools.web_search.user_location]\ncity = "X"', "user_location.city"),
        ("[server_tools.web_search]\nmax_uses = 0", "server_tools.web_search.max_uses"),
    ],
)
def test_a_task_may_not_widen_server_tools(tmp_path: Path, front: str, key: str) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text("[server_tools.web_search]\nenabled = true\nmax_uses = 4\n")
    with pytest.raises(ConfigError) as caught:
        resolve(tmp_path, front, profile)
    assert f"{key}: " in str(caught.value) and "--trust-task" in str(caught.value)


@pytest.mark.dates
def test_a_task_may_turn_off_or_lower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The ambient profile: the front matter sits above it (a --profile would sit above both).
    profile = tmp_path / "p.toml"
    profile.write_text("[server_tools.web_search]\nenabled = true\nmax_uses = 4\n")
    monkeypatch.setenv("AGENTCTL_PROFILE", str(profile))
    front = "[server_tools.web_search]\nmax_uses = 2\n[server_tools.web_fetch]\ncitations = true"
    resolved = resolve(tmp_path, front)
    assert resolved.server_tools.web_search.max_uses == 2
    off = resolve(tmp_path, "[server_tools.web_search]\nenabled = false")
    assert not off.server_tools.web_search.enabled
