"""[context_editing.compaction]: validation with file and dotted key, the request it becomes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl.agent.request import build_request
from agentctl.errors import ConfigError
from agentctl.profile.loader import build_profile


def load(table: dict[str, Any]) -> Any:
    data = {"context_editing": {"compaction": table}}
    profile, _ = build_profile(data, source="p.toml", base_dir=Path("."))
    return profile


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"enabled": True, "trigger": 49_999},
            "profile p.toml: context_editing.compaction.trigger: 49999 is below the API minimum"
            " of 50000 input tokens",
        ),
        (
            {"enabled": False, "trigger": 80_000},
            "profile p.toml: context_editing.compaction.trigger: has no effect while"
            " context_editing.compaction.enabled = false (enable compaction or remove it)",
        ),
        (
            {"enabled": False, "pause_after_compaction": True},
            "profile p.toml: context_editing.compaction.pause_after_compaction: has no effect",
        ),
        (
            {"enabled": True, "instructions": "  "},
            "profile p.toml: context_editing.compaction.instructions: must not be blank",
        ),
        (
            {"enabled": "yes"},
            "profile p.toml: context_editing.compaction.enabled: expected a boolean",
        ),
        (
            {"enabled": True, "trigers": 1},
            "profile p.toml: context_editing.compaction.trigers: unknown key (did you mean "
            "'trigger'?)",
        ),
    ],
)
def test_bad_compaction_settings_name_file_and_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(table)
    assert str(caught.value).startswith(message)


@pytest.mark.dates
def test_compaction_becomes_the_last_edit_with_its_beta() -> None:
    profile = load({"enabled": True, "trigger": 60_000, "instructions": "Keep FINDING lines."})
    request = build_request(profile, [{"role": "user", "content": "task"}], [])
    assert request["context_management"]["edits"][-1] == {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": 60_000},
        "pause_after_compaction": False,
        "instructions": "Keep FINDING lines.",
    }
    assert request["betas"] == ["context-management-2025-06-27", "compact-2026-01-12"]
    default = build_request(load({}), [{"role": "user", "content": "task"}], [])
    assert default["context_management"]["edits"][-1]["trigger"]["value"] == 150_000  # on
    off = build_request(load({"enabled": False}), [{"role": "user", "content": "task"}], [])
    assert "compact-2026-01-12" not in off["betas"]
    assert all(e["type"] != "compact_20260112" for e in off["context_management"]["edits"])
