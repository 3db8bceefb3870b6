"""ServerModel: the open server rules as one value, its specs, aliases and calibration file.

What the default reproduces (the recorded runs) is tests/context/test_recorded_rules.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.context.calibration import load_calibration, resolve_server_model, save_calibration
from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    LEGACY_ALIASES,
    PRESETS,
    SERVER_MODELS,
    ServerModel,
    ServerModelError,
    default_thinking_keep,
    from_table,
    parse_server_model,
)
from agentctl.errors import ConfigError


def _history(sizes: list[int]) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for i, words in enumerate(sizes):
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {}}
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "word " * words}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return messages


def _cleared(server: ServerModel, sizes: list[int]) -> int:
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 0},
            "keep": {"type": "tool_uses", "value": 1}}  # fmt: skip
    out = apply_context_edits({"messages": _history(sizes)}, [edit], server=server)
    return sum(int(e["cleared_tool_uses"]) for e in out.applied_edits)


def test_the_line_is_a_number_of_content_tokens_or_the_placeholders_size() -> None:
    # 10- and 11-word results (11 and 12 tokens) around the default line of 12; the newest
    # counts (keep 1).
    assert _cleared(DEFAULT_SERVER_MODEL, [10, 11, 500]) == 1
    assert _cleared(parse_server_model("default,min_result_tokens=0"), [10, 11, 500]) == 2
    # The placeholder is 8 tokens: a 9-word result shrinks and counts, an 8-word one not.
    line = parse_server_model("default,min_result_tokens=placeholder")
    assert _cleared(line, [8, 9, 500]) == 1
    assert "no larger than the placeholder" in line.describe()


def test_a_result_that_would_not_shrink_never_counts() -> None:
    """Even with no line: a 3-word result is cheaper than the placeholder."""
    every = parse_server_model("default,min_result_tokens=0")
    assert _cleared(every, [500, 3, 3, 3]) == 0  # the 3-word results neither count nor clear
    assert _cleared(every, [500, 500, 3]) == 1


@pytest.mark.parametrize(
    ("model", "keep"),
    [
        ("claude-opus-4-5-20251101", None),
        ("claude-opus-4-1-20250805", 1),
        ("claude-opus-4-20250514", 1),
        ("claude-sonnet-4-6", None),
        ("claude-sonnet-4-5", 1),
        ("claude-haiku-4-5", 1),
        ("claude-haiku-5-5", None),
        ("claude-3-7-sonnet-20250219", 1),
        ("claude-sonnet-5", None),
        ("claude-fable-5-1", None),
        ("claude-mythos-preview", None),
        ("some-future-model", None),
    ],
)
def test_clear_thinking_default_keep_follows_the_docs_table(model: str, keep: int | None) -> None:
    assert default_thinking_keep(model) == keep


def test_a_fixed_thinking_keep_overrides_the_table() -> None:
    assert parse_server_model("default,thinking_keep=2").default_thinking_keep("x") == 2
    assert (
        parse_server_model("default,thinking_keep=all").default_thinking_keep("claude-3-7-x")
        is None
    )


def test_specs_and_tables_parse_and_describe_themselves() -> None:
    assert parse_server_model("default") is DEFAULT_SERVER_MODEL
    assert DEFAULT_SERVER_MODEL.spec() == "default"
    custom = parse_server_model("default,min_result_tokens=50,placeholder=[a, b]")
    assert (custom.name, custom.trigger_basis, custom.min_result_tokens) == ("custom", "edited", 50)
    assert custom.placeholder == "[a, b]"
    assert "results under 50 tokens neither count nor clear" in custom.describe()
    assert from_table(custom.to_json() | {"name": "mine"}).placeholder == "[a, b]"
    assert parse_server_model(custom.spec()) == custom
    assert [m.name for m in SERVER_MODELS] == ["default", "unedited-basis", "placeholder-line"]


@pytest.mark.parametrize(
    ("alias", "basis", "line"),
    [("unedited", "unedited", 0), ("edited", "edited", 0),
     ("unedited-large", "unedited", 100), ("edited-large", "edited", 100)],
)  # fmt: skip
def test_the_names_of_earlier_versions_name_the_rules_they_always_did(
    alias: str, basis: str, line: int
) -> None:
    """Old profiles and transcripts name them: they keep replaying as recorded."""
    model = parse_server_model(alias)
    assert model is LEGACY_ALIASES[alias] is PRESETS[alias]
    assert (model.trigger_basis, model.min_result_tokens) == (basis, line)
    assert model.spec() == alias
    assert parse_server_model(f"{alias},placeholder=[x]").placeholder == "[x]"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nope", "unknown server model 'nope' .*older names: unedited, edited"),
        ("default,min_result_tokens=x", "expected a whole number >= 0 or placeholder"),
        ("default,trigger_basis=both", "expected one of unedited, edited"),
        ("default,colour=red", "unknown key 'colour'"),
        ("default,thinking_keep=0", "thinking_keep 0"),
        ("default,oops", "expected KEY=VALUE"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ServerModelError, match=words):
        parse_server_model(spec)


def test_an_explicit_model_beats_the_calibration_which_beats_the_default(tmp_path: Path) -> None:
    assert resolve_server_model("").source == "default"
    calibrated = parse_server_model("default,min_result_tokens=placeholder,placeholder=[seen]")
    path = save_calibration(calibrated, {"note": "test"})
    assert load_calibration() == calibrated
    found = resolve_server_model("")
    assert (found.model, found.source) == (calibrated, f"calibration {path}")
    assert resolve_server_model("unedited", source="--server-model").model is PRESETS["unedited"]
    assert resolve_server_model("").model != DEFAULT_SERVER_MODEL


def test_a_broken_calibration_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    path = save_calibration(DEFAULT_SERVER_MODEL, {})
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"server-model\.json: cannot read it"):
        resolve_server_model("")
