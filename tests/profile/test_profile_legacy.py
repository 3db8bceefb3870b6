"""Keys that moved keep loading, with a warning that names the new key and its value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl.context.server_model import parse_server_model
from agentctl.errors import ConfigError
from agentctl.profile.loader import build_profile


def build(editing: dict[str, Any]) -> tuple[str, list[str]]:
    data = {"context_editing": editing}
    profile, warnings = build_profile(data, source="p.toml", base_dir=Path("/p"))
    return profile.context_editing.server_model, warnings


@pytest.mark.dates
def test_trigger_basis_and_placeholder_become_one_server_model_spec() -> None:
    spec, warnings = build({"trigger_basis": "edited", "placeholder": "[gone, for good]"})
    assert spec == "edited,placeholder=[gone, for good]"
    model = parse_server_model(spec)
    assert (model.trigger_basis, model.placeholder) == ("edited", "[gone, for good]")
    new = 'use context_editing.server_model = "edited,placeholder=[gone, for good]" instead'
    assert warnings[:2] == [
        f"context_editing.trigger_basis: deprecated, {new}",
        f"context_editing.placeholder: deprecated, {new}",
    ]


@pytest.mark.dates
def test_a_placeholder_alone_keeps_the_default_basis() -> None:
    spec, warnings = build({"placeholder": "[x]"})
    assert spec == "unedited,placeholder=[x]"
    assert len([w for w in warnings if "deprecated" in w]) == 1


@pytest.mark.parametrize(
    ("editing", "words"),
    [
        ({"trigger_basis": "edited", "server_model": "edited"}, "context_editing.trigger_basis: "),
        ({"trigger_basis": 3}, "context_editing.trigger_basis: expected a string"),
        ({"trigger_basis": "sideways"}, "context_editing.server_model: "),
    ],
)
def test_bad_old_keys_name_a_key(editing: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as err:
        build(editing)
    assert words in str(err.value)


def test_the_old_keys_are_these_four_and_lead_to_current_keys() -> None:
    """Pinned: the keys legacy.py still reads, and why. `tools.web_search` / `tools.web_fetch`:
    docs/tools.md promises they work; `context_editing.trigger_basis` / `.placeholder`: old
    transcripts record them in their header's profile, which `sessions stats/simulate/tune`
    and `run --resume` build again. A new entry needs the same reason; the new keys must exist."""
    from agentctl.profile.keys import key_locations
    from agentctl.profile.legacy import MOVED, SERVER_RULE_KEYS
    from agentctl.profile.settings import Profile
    from agentctl.profile.trust import lookup

    assert MOVED == {
        "tools.web_search": "server_tools.web_search.enabled",
        "tools.web_fetch": "server_tools.web_fetch.enabled",
    }
    assert SERVER_RULE_KEYS == ("trigger_basis", "placeholder")
    assert all(lookup(Profile(), new) is not None for new in MOVED.values())
    assert lookup(Profile(), "context_editing.server_model") == ""
    gone = [*MOVED, *(f"context_editing.{k}" for k in SERVER_RULE_KEYS)]
    assert all(lookup(Profile(), old) is None for old in gone)  # no longer keys of their own
    assert key_locations(Profile, "trigger_basis") == []


@pytest.mark.dates
def test_an_old_transcript_profile_still_loads(tmp_path: Path) -> None:
    from agentctl.sessions.catalog import session_profile_of
    from agentctl.sessions.transcript import SessionHeader

    old = {"tools": {"web_search": True}, "context_editing": {"trigger_basis": "edited"}}
    header = SessionHeader(session="s", profile=old, cwd=str(tmp_path))
    profile = session_profile_of(header, "s")
    assert profile.server_tools.web_search.enabled
    assert profile.context_editing.server_model == "edited"
