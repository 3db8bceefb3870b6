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
