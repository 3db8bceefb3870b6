"""The loader contract: reading TOML, merging, --set overrides, lookup order, resolution."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.errors import ConfigError, UsageError
from agentctl.profile.loader import (
    apply_set_overrides,
    build_profile,
    deep_merge,
    find_profile_path,
    nest,
    parse_dotted_key,
    profile_to_dict,
    read_profile_file,
    resolve_profile,
)
from agentctl.profile.settings import Profile


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_read_profile_file_parses_toml(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", 'model = "claude-opus-5-5"\n[cache]\nttl = "1h"\n')
    assert read_profile_file(path) == {"model": "claude-opus-5-5", "cache": {"ttl": "1h"}}


def test_read_profile_file_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.toml", 'model = "x"\nmax_turns = = 3\n')
    with pytest.raises(ConfigError) as err:
        read_profile_file(path)
    assert str(path) in str(err.value)
    assert "line 2" in str(err.value)


def test_read_profile_file_missing_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        read_profile_file(tmp_path / "nope.toml")


def test_deep_merge_merges_tables_and_does_not_mutate() -> None:
    base = {"a": {"x": 1, "y": 2}, "b": 1}
    override = {"a": {"y": 3}, "c": [1]}
    merged = deep_merge(base, override)
    assert merged == {"a": {"x": 1, "y": 3}, "b": 1, "c": [1]}
    assert base == {"a": {"x": 1, "y": 2}, "b": 1}


def test_set_parses_toml_values_and_plain_strings() -> None:
    data = apply_set_overrides(
        {"context_editing": {"tool_uses": {"trigger": 1}}},
        [
            "context_editing.tool_uses.keep=5",
            "thinking.enabled=true",
            "model=claude-opus-5-5",
            'context_editing.tool_uses.exclude_tools=["memory", "read_file"]',
            "system = be brief = always",
        ],
    )
    assert data == {
        "context_editing": {
            "tool_uses": {"trigger": 1, "keep": 5, "exclude_tools": ["memory", "read_file"]}
        },
        "thinking": {"enabled": True},
        "model": "claude-opus-5-5",
        "system": "be brief = always",
    }


def test_set_quoted_key_segment() -> None:
    data = apply_set_overrides({}, ['prices."claude-x.1".input=2.5'])
    assert data == {"prices": {"claude-x.1": {"input": 2.5}}}


def test_set_multiline_injection_stays_a_string() -> None:
    data = apply_set_overrides({}, ["system=1\nmodel = 'x'"])
    assert data == {"system": "1\nmodel = 'x'"}


@pytest.mark.parametrize("item", ["novalue", "=5", "a..b=1", "a b=1"])
def test_set_bad_form_is_usage_error_naming_it(item: str) -> None:
    with pytest.raises(UsageError) as err:
        apply_set_overrides({}, [item])
    assert "--set" in str(err.value)
    assert repr(item) in str(err.value)


@pytest.mark.dates
def test_build_profile_empty_is_defaults_with_resolved_paths(tmp_path: Path) -> None:
    profile, warnings = build_profile({}, source="<built-in>", base_dir=tmp_path)
    assert warnings == []
    assert profile.memory.root == (tmp_path / "memory").resolve()
    assert profile.tools.workspace_root == tmp_path.resolve()
    assert profile.model == Profile().model
    assert profile.context_editing == Profile().context_editing


@pytest.mark.dates
def test_build_profile_paths_relative_absolute_and_home(tmp_path: Path) -> None:
    data = {"memory": {"root": "~/mem"}, "tools": {"workspace_root": "/srv/ws"}}
    profile, _ = build_profile(data, source="x", base_dir=tmp_path)
    assert profile.memory.root == Path.home() / "mem"
    assert profile.tools.workspace_root == Path("/srv/ws")


@pytest.mark.dates
def test_profile_to_dict_round_trips(tmp_path: Path) -> None:
    data = {
        "model": "claude-opus-5-5",
        "thinking": {"enabled": True, "budget_tokens": 2048},
        "context_editing": {
            "tool_uses": {
                "strategy": "server",
                "trigger_kind": "tool_uses",
                "trigger": 8,
                "keep": 2,
                "clear_tool_inputs": ["bash"],
            },
            "thinking": {"enabled": True, "keep": "all"},
        },
        "prices": {
            "claude-opus-5-5": {
                "input": 4,
                "output": 20,
                "cache_write_5m": 5,
                "cache_write_1h": 8,
                "cache_read": 0.2,
            }
        },
    }
    profile, _ = build_profile(data, source="s", base_dir=tmp_path)
    again, _ = build_profile(profile_to_dict(profile), source="s", base_dir=Path("/elsewhere"))
    assert again == profile
    assert profile.prices["claude-opus-5-5"].input == 4.0


def test_find_profile_path_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctl.home import user_profile_path

    monkeypatch.chdir(tmp_path)
    assert find_profile_path(None) is None
    user = write(user_profile_path(), "")
    assert find_profile_path(None) == user
    local = write(tmp_path / "agentctl.toml", "")
    assert find_profile_path(None) == Path("agentctl.toml")
    assert local.exists()
    env = write(tmp_path / "env.toml", "")
    monkeypatch.setenv("AGENTCTL_PROFILE", str(env))
    assert find_profile_path(None) == env
    explicit = write(tmp_path / "explicit.toml", "")
    assert find_profile_path(explicit) == explicit


def test_find_profile_path_missing_explicit_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        find_profile_path(tmp_path / "missing.toml")
    assert "missing.toml" in str(err.value)
    assert err.value.exit_code == 2


def test_find_profile_path_missing_env_names_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCTL_PROFILE", str(tmp_path / "gone.toml"))
    with pytest.raises(ConfigError, match="AGENTCTL_PROFILE"):
        find_profile_path(None)


@pytest.mark.dates
def test_resolve_profile_layers_file_extra_and_sets(tmp_path: Path) -> None:
    path = write(
        tmp_path / "conf" / "p.toml",
        'model = "claude-opus-5-5"\nmax_turns = 10\n[memory]\nroot = "mem"\n',
    )
    profile, _ = resolve_profile(
        path, sets=["max_turns=30"], extra={"max_turns": 20, "system": "hi"}
    )
    assert profile.model == "claude-opus-5-5"
    assert profile.max_turns == 30
    assert profile.system == "hi"
    assert profile.memory.root == (tmp_path / "conf" / "mem").resolve()
    assert profile.source == str(path)


@pytest.mark.dates
def test_resolve_profile_builtin_uses_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    profile, warnings = resolve_profile()
    assert profile.source == "<built-in>"
    assert profile.memory.root == (tmp_path / "memory").resolve()
    assert warnings == []


def test_resolve_profile_error_names_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", "[context_editing.tool_uses]\nkeep = true\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile(path)
    message = str(err.value)
    assert message.startswith(f"profile {path}: context_editing.tool_uses.keep: ")
    assert "boolean true" in message


def test_error_from_a_set_names_the_set(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", "max_turns = 5\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile(path, sets=["max_turns=7", "context_editing.tool_uses.keep=0"])
    assert str(err.value) == (
        f"profile {path}, --set context_editing.tool_uses.keep=0: "
        "context_editing.tool_uses.keep: must be an integer >= 1, got 0"
    )


def test_error_from_front_matter_says_so() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_profile(extra={"cache": {"ttl": 3}})
    assert str(err.value).startswith("profile <built-in>, task front matter: cache.ttl: ")


def test_error_in_the_file_names_only_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", "max_turns = 0\n")
    with pytest.raises(ConfigError) as err:
        resolve_profile(path, sets=["max_tokens=100"])
    assert str(err.value) == f"profile {path}: max_turns: must be an integer >= 1, got 0"


@pytest.mark.dates
def test_set_paths_are_relative_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "conf" / "p.toml", '[memory]\nroot = "mem"\n')
    monkeypatch.chdir(tmp_path)
    profile, _ = resolve_profile(path, sets=["tools.workspace_root=ws"])
    assert profile.tools.workspace_root == tmp_path / "ws"
    assert profile.memory.root == (tmp_path / "conf" / "mem").resolve()


toml_values = st.one_of(
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(),
    st.lists(st.integers(), max_size=4),
    st.lists(st.text(max_size=5), max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(value=toml_values, key=st.sampled_from(["model", "cache.ttl", 'prices."a.b".input']))
def test_set_value_written_as_toml_reads_back_exactly(value: object, key: str) -> None:
    text = tomli_w.dumps({"v": value}).removeprefix("v = ").strip()
    data = apply_set_overrides({}, [f"{key}={text}"])
    path = parse_dotted_key(key, key)
    assert data == nest(path, value)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
@pytest.mark.slow
def test_set_value_that_is_not_toml_is_the_plain_string(text: str) -> None:
    import tomllib

    try:
        parsed = tomllib.loads(f"v = {text.strip()}")
        is_one_value = len(parsed) == 1
    except tomllib.TOMLDecodeError:
        is_one_value = False
    if not is_one_value:
        assert apply_set_overrides({}, [f"system={text}"]) == {"system": text.strip()}
