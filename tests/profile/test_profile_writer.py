"""profile_to_dict / TOML / commented template: every one loads back to the same Profile."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.profile.keys import KEY_DOCS, all_keys, key_locations, path_keys
from agentctl.profile.loader import build_profile
from agentctl.profile.settings import Profile
from agentctl.profile.to_toml import commented_template, profile_to_dict, profile_to_toml


@pytest.mark.dates
def test_commented_template_loads_to_the_builtin_defaults(tmp_path: Path) -> None:
    text = commented_template()
    from_template, warnings = build_profile(tomllib.loads(text), source="s", base_dir=tmp_path)
    builtin, _ = build_profile({}, source="s", base_dir=tmp_path)
    assert from_template == builtin
    assert warnings == []


def test_commented_template_comments_every_key() -> None:
    text = commented_template()
    assert (
        '# Turn extended thinking on. (API: thinking.type = "enabled")\nenabled = false\n' in text
    )
    assert "[context_editing.tool_uses]  # Clear old tool results" in text
    assert '# [prices."claude-sonnet-5"]' in text  # an example, commented out
    settings_lines = [ln for ln in text.splitlines() if ln and not ln.startswith(("#", "["))]
    lines = text.splitlines()
    for line in settings_lines:
        assert lines[lines.index(line) - 1].startswith("#"), line


def test_every_key_is_documented() -> None:
    keys = all_keys(Profile)
    assert "context_editing.tool_uses.keep" in keys
    assert "prices.MODEL.cache_read" in keys
    assert sorted(set(keys) - set(KEY_DOCS)) == []
    assert sorted(set(KEY_DOCS) - set(keys)) == []


def test_key_helpers() -> None:
    assert sorted(path_keys(Profile)) == ["memory.root", "output.schema", "tools.workspace_root"]
    assert key_locations(Profile, "ttl") == ["cache"]
    assert key_locations(Profile, "model") == [""]


@pytest.mark.dates
def test_toml_text_round_trips(tmp_path: Path) -> None:
    data = {
        "context_editing": {
            "tool_uses": {"clear_tool_inputs": ["bash"], "exclude_tools": ["memory"]}
        },
        "prices": {
            "m.1": {
                "input": 1,
                "output": 2,
                "cache_write_5m": 1.25,
                "cache_write_1h": 2,
                "cache_read": 0.1,
            }
        },
        "system": 'multi\nline "quoted"',
    }
    profile, _ = build_profile(data, source="s", base_dir=tmp_path)
    text = profile_to_toml(profile)
    again, _ = build_profile(tomllib.loads(text), source="s", base_dir=Path("/other"))
    assert again == profile
    assert commented_template(profile).count("[prices.") == 1


def replace_in(profile: Profile, section: str, **changes: Any) -> Profile:
    return dataclasses.replace(
        profile, **{section: dataclasses.replace(getattr(profile, section), **changes)}
    )


counts = st.integers(min_value=1, max_value=10**7)


@settings(max_examples=60, deadline=None)
@given(
    model=st.text(min_size=1, max_size=30).filter(lambda s: s.strip() != ""),
    system=st.text(max_size=50),
    max_turns=counts,
    trigger=counts,
    keep=counts,
    exclude=st.lists(st.text(min_size=1, max_size=10).filter(str.strip), max_size=3),
    inputs=st.one_of(st.booleans(), st.lists(st.sampled_from(["bash", "grep"]), max_size=2)),
    ttl=st.sampled_from(["5m", "1h"]),
    usd=st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
@pytest.mark.slow
def test_round_trip_property(
    model: str,
    system: str,
    max_turns: int,
    trigger: int,
    keep: int,
    exclude: list[str],
    inputs: bool | list[str],
    ttl: str,
    usd: float,
) -> None:
    data = {
        "model": model,
        "system": system,
        "max_turns": max_turns,
        "context_editing": {
            "tool_uses": {
                "trigger": trigger,
                "keep": keep,
                "exclude_tools": exclude,
                "clear_tool_inputs": inputs,
            }
        },
        "cache": {"ttl": ttl},
        "limits": {"max_usd": usd},
    }
    profile, _ = build_profile(data, source="s", base_dir=Path("/base"))
    assert build_profile(profile_to_dict(profile), source="s", base_dir=Path("/x"))[0] == profile
    assert (
        build_profile(tomllib.loads(profile_to_toml(profile)), source="s", base_dir=Path("/x"))[0]
        == profile
    )


def test_docs_key_reference_is_current() -> None:
    from agentctl.profile.keys import markdown_key_table

    docs = (Path(__file__).resolve().parents[2] / "docs" / "profile.md").read_text("utf-8")
    assert markdown_key_table() in docs


def test_write_template_creates_parents_and_force_replaces(tmp_path: Path) -> None:
    import pytest

    from agentctl.errors import UsageError
    from agentctl.profile.to_toml import write_template

    target = tmp_path / "new" / "dir" / "p.toml"
    write_template(target)
    assert target.read_text("utf-8") == commented_template()
    with pytest.raises(UsageError, match="already exists"):
        write_template(target)
    target.write_text("old")
    write_template(target, force=True)
    assert target.read_text("utf-8") == commented_template()
    assert sorted(p.name for p in target.parent.iterdir()) == ["p.toml"]  # no temp file left
    with pytest.raises(UsageError, match="is a directory"):
        write_template(tmp_path)
