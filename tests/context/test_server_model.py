"""ServerModel: the open server rules as one value; the cookbook's real run under each model.

The cookbook run (API-NOTES E.10; Sonnet 4.6, trigger 30k, keep 4, clear_at_least 10k)
reported 0/4/4/4/4 cleared tool uses over five requests where the emulator's "all results
count" model clears 1/5/6/7/8. The history below has that shape: four large results
(4,010 estimated tokens x 3 = 12k each) and one one-line result (26 tokens), then four more
large ones, then a one-line result per request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl.context.calibration import load_calibration, resolve_server_model, save_calibration
from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import (
    PRESETS,
    SERVER_MODELS,
    ServerModel,
    ServerModelError,
    default_thinking_keep,
    from_table,
    parse_server_model,
)
from agentctl.context.tokens import estimate_block_tokens
from agentctl.errors import ConfigError

LARGE = "alpha beta gamma delta " * 3000
SMALL = "Saved note 3: the quarterly report mentions latency in section 4; owner Dana."
COOKBOOK_EDIT = {
    "type": "clear_tool_uses_20250919",
    "trigger": {"type": "input_tokens", "value": 30_000},
    "keep": {"type": "tool_uses", "value": 4},
    "clear_at_least": {"type": "input_tokens", "value": 10_000},
}
# The five requests: what each adds to the history (L = large result, S = one-line result).
STEPS = ["LLLLS", "LLLL", "S", "S", "S"]


def _history(kinds: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Research the reports."}]
    for i, kind in enumerate(kinds):
        use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"n": i}}
        text = LARGE if kind == "L" else SMALL
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": text}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    return messages


def _cleared_per_request(server: ServerModel) -> list[int]:
    counts, kinds = [], ""
    for step in STEPS:
        kinds += step
        request = {"model": "claude-sonnet-4-6", "messages": _history(kinds)}
        out = apply_context_edits(request, [COOKBOOK_EDIT], server=server)
        counts.append(sum(int(e["cleared_tool_uses"]) for e in out.applied_edits))
    return counts


def test_the_history_has_the_sizes_the_docstring_gives() -> None:
    def size(text: str) -> int:
        return estimate_block_tokens({"type": "tool_result", "tool_use_id": "t0", "content": text})

    assert size(LARGE) > 12_000 > 10_000  # one large result alone meets clear_at_least
    assert 18 < size(SMALL) < 100  # longer than the placeholder, under LARGE_RESULT_TOKENS


@pytest.mark.parametrize(
    ("name", "cleared"),
    [
        ("unedited", [1, 5, 6, 7, 8]),  # the emulator's figures in E.10
        # Request 2 stops at 4 (clearing the one-line result would free < clear_at_least);
        # request 5 does not fire: two large results left, the edited prompt is under 30k.
        ("edited", [1, 4, 6, 7, 7]),
    ],
)
def test_when_every_result_counts_the_cookbook_run_is_not_reproduced(
    name: str, cleared: list[int]
) -> None:
    assert _cleared_per_request(PRESETS[name]) == cleared


@pytest.mark.parametrize("name", ["unedited-large", "edited-large"])
def test_when_small_results_do_not_count_the_cookbook_run_is_reproduced(name: str) -> None:
    assert _cleared_per_request(PRESETS[name]) == [0, 4, 4, 4, 4]


def test_small_results_are_never_cleared_under_the_large_rule() -> None:
    request = {"model": "m", "messages": _history("SSSSSSLLLLL")}
    out = apply_context_edits(request, [COOKBOOK_EDIT], server=PRESETS["unedited-large"])
    contents = [b["content"] for m in out.request["messages"][2::2] for b in m["content"]]
    assert contents[:6] == [SMALL] * 6
    assert out.applied_edits[0]["cleared_tool_uses"] == 1  # 5 large, keep 4


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
    assert parse_server_model("unedited,thinking_keep=2").default_thinking_keep("x") == 2
    assert (
        parse_server_model("unedited,thinking_keep=all").default_thinking_keep("claude-3-7-x")
        is None
    )


def test_specs_and_tables_parse_and_describe_themselves() -> None:
    assert parse_server_model("edited") is PRESETS["edited"]
    custom = parse_server_model("edited,min_result_tokens=50,placeholder=[a, b]")
    assert (custom.name, custom.trigger_basis, custom.min_result_tokens) == ("custom", "edited", 50)
    assert custom.placeholder == "[a, b]"
    assert "results under 50 tokens neither count nor clear" in custom.describe()
    assert from_table(custom.to_json() | {"name": "mine"}).placeholder == "[a, b]"
    assert [m.name for m in SERVER_MODELS] == list(PRESETS)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nope", "unknown server model 'nope'"),
        ("edited,min_result_tokens=x", "expected a whole number"),
        ("edited,trigger_basis=both", "expected one of unedited, edited"),
        ("edited,colour=red", "unknown key 'colour'"),
        ("edited,thinking_keep=0", "thinking_keep 0"),
        ("edited,oops", "expected KEY=VALUE"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, words: str) -> None:
    with pytest.raises(ServerModelError, match=words):
        parse_server_model(spec)


def test_an_explicit_model_beats_the_calibration_which_beats_the_default(tmp_path: Path) -> None:
    assert resolve_server_model("").source == "default"
    calibrated = parse_server_model("edited-large,placeholder=[seen]")
    path = save_calibration(calibrated, {"note": "test"})
    assert load_calibration() == calibrated
    found = resolve_server_model("")
    assert (found.model, found.source) == (calibrated, f"calibration {path}")
    assert resolve_server_model("unedited", source="--server-model").model is PRESETS["unedited"]


def test_a_broken_calibration_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    path = save_calibration(PRESETS["edited"], {})
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"server-model\.json: cannot read it"):
        resolve_server_model("")
