"""Validation: unknown keys, wrong types, impossible values (errors) and risky ones (warnings)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from agentctl import clock
from agentctl.errors import ConfigError
from agentctl.profile.loader import apply_set_overrides, build_profile
from agentctl.profile.models import (
    FALLBACK_THINKING_DEPRECATED,
    KNOWN_END_OF_LIFE,
    deprecated_models,
    model_warning,
    parse_eol_date,
    sdk_data_file,
    sdk_deprecated_models,
    thinking_enabled_deprecated,
)

# Profiles are checked as of a fixed day: the model warnings depend on the date.
CHECKED_ON = datetime.date(2026, 6, 1)


def build(*sets: str) -> tuple[Any, list[str]]:
    data = apply_set_overrides({}, sets)
    return build_profile(data, source="t.toml", base_dir=Path("/p"), today=CHECKED_ON)


def error_of(*sets: str) -> str:
    with pytest.raises(ConfigError) as err:
        build(*sets)
    assert err.value.exit_code == 2
    message = str(err.value)
    assert message.startswith("profile t.toml: ")
    return message.removeprefix("profile t.toml: ")


def test_unknown_key_suggests_closest_sibling() -> None:
    assert error_of("context_editing.tool_uses.kep=3") == (
        "context_editing.tool_uses.kep: unknown key (did you mean 'keep'?)"
    )


def test_misplaced_key_names_the_tables_where_it_belongs() -> None:
    message = error_of("context_editing.keep=3")
    assert "[context_editing.tool_uses] or [context_editing.thinking]" in message
    assert "the top level" in error_of("cache.model=x")


def test_unknown_key_lists_known_keys_when_nothing_is_close() -> None:
    message = error_of("zzz=1")
    assert message.startswith("zzz: unknown key (known keys: model, max_tokens")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("context_editing.tool_uses.keep=true", "keep: expected an integer, got boolean true"),
        ("max_turns=2.5", "max_turns: expected an integer, got float 2.5"),
        ('max_tokens="8192"', "max_tokens: expected an integer, got string '8192'"),
        ("thinking=1", "thinking: expected a table, got integer 1"),
        ("cache.enabled=1", "cache.enabled: expected a boolean, got integer 1"),
        ("limits.max_usd=true", "limits.max_usd: expected a number, got boolean true"),
        ("context_editing.tool_uses.exclude_tools=[1]", "exclude_tools[0]: expected a string"),
        ("context_editing.tool_uses.clear_tool_inputs=3", "a boolean or a list of strings"),
        ('memory.root=""', "memory.root: expected a non-empty path string"),
    ],
)
def test_wrong_types_are_errors(item: str, expected: str) -> None:
    assert expected in error_of(item)


def test_unknown_trigger_kind_and_ttl() -> None:
    assert 'expected one of "input_tokens", "tool_uses"' in error_of(
        "context_editing.tool_uses.trigger_kind=tokens"
    )
    assert 'cache.ttl: expected one of "5m", "1h", got string \'1d\'' in error_of("cache.ttl=1d")


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "max_turns",
        "context_editing.tool_uses.trigger",
        "context_editing.tool_uses.keep",
        "memory.max_view_chars",
        "tools.max_result_chars",
    ],
)
@pytest.mark.parametrize("value", [0, -1])
def test_counts_must_be_positive(key: str, value: int) -> None:
    assert error_of(f"{key}={value}") == f"{key}: must be an integer >= 1, got {value}"


def test_zero_means_unset_where_documented() -> None:
    profile, _ = build(
        "context_editing.tool_uses.clear_at_least=0",
        "limits.max_input_tokens=0",
        "api.max_retries=0",
    )
    assert profile.api.max_retries == 0
    assert "must be an integer >= 0" in error_of("context_editing.tool_uses.clear_at_least=-5")


def test_negative_and_nan_amounts() -> None:
    assert error_of("limits.max_usd=-1") == "limits.max_usd: must be a number >= 0, got -1.0"
    assert "must be a finite number, got nan" in error_of("limits.max_usd=nan")
    assert "must be a finite number, got inf" in error_of("api.timeout_s=inf")
    assert "api.timeout_s: must be a number > 0" in error_of("api.timeout_s=0")


def test_thinking_budget_rules() -> None:
    assert "below the API minimum of 1024" in error_of(
        "thinking.enabled=true", "thinking.budget_tokens=1023"
    )
    message = error_of("thinking.enabled=true", "thinking.budget_tokens=8192", "max_tokens=8192")
    assert message.startswith("thinking.budget_tokens: 8192 must be less than max_tokens (8192)")
    # When thinking is off the budget is never sent, so it is not held to the API's rules.
    profile, _ = build("thinking.budget_tokens=100")
    assert profile.thinking.budget_tokens == 100


def test_clear_thinking_needs_thinking() -> None:
    message = error_of("context_editing.thinking.enabled=true")
    assert message.startswith(
        "context_editing.thinking.enabled: clear_thinking needs extended thinking"
    )
    profile, _ = build("context_editing.thinking.enabled=true", "thinking.enabled=true")
    assert profile.context_editing.thinking.enabled


def test_clear_thinking_keep_int_or_all() -> None:
    on = ("thinking.enabled=true", "context_editing.thinking.enabled=true")
    assert (
        build(*on, 'context_editing.thinking.keep="all"')[0].context_editing.thinking.keep == "all"
    )
    assert build(*on, "context_editing.thinking.keep=2")[0].context_editing.thinking.keep == 2
    assert 'expected an integer or "all"' in error_of(*on, "context_editing.thinking.keep=some")
    assert "must be an integer >= 1, got 0" in error_of(*on, "context_editing.thinking.keep=0")
    assert 'expected an integer or "all", got boolean true' in error_of(
        *on, "context_editing.thinking.keep=true"
    )


def test_price_override_tables() -> None:
    prices = [
        f'prices."claude-5.5".{k}={v}'
        for k, v in (
            ("input", 3),
            ("output", 15),
            ("cache_write_5m", 3.75),
            ("cache_write_1h", 6),
            ("cache_read", 0.3),
        )
    ]
    profile, _ = build(*prices)
    assert profile.prices["claude-5.5"].cache_write_1h == 6.0
    assert 'prices."claude-5.5".output: missing' in error_of(prices[0])
    assert 'prices."claude-5.5".cache_read: must be a number >= 0, got -0.3' in error_of(
        *prices, 'prices."claude-5.5".cache_read=-0.3'
    )
    assert 'prices."claude-5.5".inptu: unknown key' in error_of(
        *prices, 'prices."claude-5.5".inptu=1'
    )


def test_defaults_have_no_warnings() -> None:
    assert build()[1] == []


@pytest.mark.parametrize(
    ("sets", "fragment"),
    [
        (
            [
                "context_editing.tool_uses.trigger=4000",
                "context_editing.tool_uses.clear_at_least=0",
            ],
            "trigger: 4000 input tokens is so low",
        ),
        (
            [
                'context_editing.tool_uses.strategy="server"',
                'context_editing.tool_uses.trigger_kind="tool_uses"',
                "context_editing.tool_uses.trigger=3",
                "context_editing.tool_uses.keep=3",
            ],
            "keep (3) is not below the tool_uses trigger (3)",
        ),
        (
            [
                "context_editing.tool_uses.trigger=20000",
                "context_editing.tool_uses.clear_at_least=30000",
            ],
            "clear_at_least: 30000 is larger than the trigger (20000)",
        ),
        (["context_editing.tool_uses.clear_tool_inputs=true"], "memory tool calls will be cleared"),
        (["model=claude-sonnet-4-5"], "'claude-sonnet-4-5' is deprecated and reaches end of life"),
        (["model=claude-sonet-5"], "(did you mean 'claude-sonnet-5'? If not, add a [prices"),
        (["model=claude-mythos-5"], "no price is known for 'claude-mythos-5'"),
        (
            ["model=claude-opus-4-6", "thinking.enabled=true"],
            "deprecated on 'claude-opus-4-6' in favour of adaptive thinking",
        ),
    ],
)
def test_warnings(sets: list[str], fragment: str) -> None:
    _, warnings = build(*sets)
    assert len(warnings) == 1
    assert fragment in warnings[0]


def test_no_tool_use_warnings_when_clearing_is_off() -> None:
    _, warnings = build(
        "context_editing.tool_uses.enabled=false", "context_editing.tool_uses.trigger=10"
    )
    assert warnings == []


def test_excluding_memory_silences_the_inputs_warning() -> None:
    _, warnings = build(
        "context_editing.tool_uses.clear_tool_inputs=true",
        'context_editing.tool_uses.exclude_tools=["memory"]',
    )
    assert warnings == []


def test_a_price_override_silences_the_unknown_model_warning() -> None:
    prices = [
        f'prices."my-model".{k}=1'
        for k in ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
    ]
    assert build("model=my-model")[1] != []
    assert build("model=my-model", *prices)[1] == []


def test_thinking_deprecation_list_matches_the_sdk_file() -> None:
    assert thinking_enabled_deprecated() == FALLBACK_THINKING_DEPRECATED


def test_deprecated_table_is_the_sdk_file_over_the_known_dates() -> None:
    path = sdk_data_file("deprecated_models.py")
    assert path is not None and path.name == "deprecated_models.py"
    sdk = sdk_deprecated_models()
    assert sdk is not None and sdk, "the installed SDK's DEPRECATED_MODELS could not be read"
    table = deprecated_models()
    # Every SDK entry is there with the SDK's date; every known model stays listed even after
    # an SDK release drops it (anthropic 2.15.0 dropped claude-sonnet-4-5 once retired).
    assert {k: table[k] for k in sdk} == sdk
    assert set(KNOWN_END_OF_LIFE) <= set(table)
    assert table["claude-sonnet-4-5"] == sdk.get("claude-sonnet-4-5", "November 30th, 2026")
    for text in table.values():
        assert parse_eol_date(text) is not None, f"unparsed end-of-life date {text!r}"


def test_model_warning_wording_by_date() -> None:
    assert parse_eol_date("November 30th, 2026") == datetime.date(2026, 11, 30)
    assert parse_eol_date("sometime") is None
    before = model_warning("claude-sonnet-4-5", datetime.date(2026, 11, 1))
    today = model_warning("claude-sonnet-4-5", datetime.date(2026, 11, 30))
    after = model_warning("claude-sonnet-4-5", datetime.date(2026, 12, 1))
    assert before is not None and "is deprecated and reaches end of life on November 30th" in before
    assert today is not None and "reaches end of life today" in today
    assert (
        after is not None and "reached end of life on November 30th, 2026 and is retired" in after
    )
    assert model_warning("claude-sonnet-5", datetime.date(2026, 12, 1)) is None


# A model's life as the SDK sees it: not listed (current), then listed with an end-of-life date
# (deprecated until that day), then past it (retired). The SDK carries no deprecation date, so
# "before deprecation" is the table without the model.
LIFE = [
    ({}, datetime.date(2027, 1, 1), None),
    (
        {"m": "March 1st, 2027"},
        datetime.date(2027, 1, 1),
        "'m' is deprecated and reaches end of life on March 1st, 2027",
    ),
    (
        {"m": "March 1st, 2027"},
        datetime.date(2027, 3, 1),
        "'m' reaches end of life today, March 1st, 2027",
    ),
    (
        {"m": "March 1st, 2027"},
        datetime.date(2027, 3, 2),
        "'m' reached end of life on March 1st, 2027 and is retired",
    ),
    (
        {"m": "March 1st, 2027"},
        datetime.date(2030, 1, 1),
        "'m' reached end of life on March 1st, 2027 and is retired",
    ),
]


@pytest.mark.parametrize(("table", "day", "expected"), LIFE)
def test_model_warning_through_a_models_life(
    table: dict[str, str], day: datetime.date, expected: str | None
) -> None:
    warning = model_warning("m", day, table)
    if expected is None:
        assert warning is None
    else:
        assert warning is not None and warning.startswith(f"model: {expected}")


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (datetime.date(2026, 11, 1), "is deprecated and reaches end of life"),
        (datetime.date(2026, 11, 30), "reaches end of life today"),
        (datetime.date(2027, 6, 1), "reached end of life on November 30th, 2026"),
        (datetime.date(2030, 1, 1), "reached end of life on November 30th, 2026"),
    ],
)
def test_profile_check_follows_the_one_clock(day: datetime.date, expected: str) -> None:
    data = apply_set_overrides({}, ["model=claude-sonnet-4-5"])
    with clock.frozen(day):
        _, warnings = build_profile(data, source="t.toml", base_dir=Path("/p"))
    assert len(warnings) == 1 and expected in warnings[0]


@pytest.mark.slow
def test_checking_a_profile_does_not_import_the_sdk() -> None:
    from import_probe import loaded_after

    code = (
        "from agentctl.profile.loader import resolve_profile\n"
        "resolve_profile(sets=['model=claude-sonnet-4-5'])\n"
    )
    assert loaded_after(code, ["anthropic"])[1] == []


def test_parse_literal_assignment_reads_plain_and_annotated_literals() -> None:
    from agentctl.profile.models import parse_literal_assignment

    source = (
        'from typing import Dict\nA: Dict[str, str] = {"m": "May 1st, 2027"}\nB = ["x"]\nC = f()\n'
    )
    assert parse_literal_assignment(source, "A") == {"m": "May 1st, 2027"}
    assert parse_literal_assignment(source, "B") == ["x"]
    assert parse_literal_assignment(source, "missing") is None
    with pytest.raises(ValueError):
        parse_literal_assignment(source, "C")  # not a literal: the caller falls back


def test_a_tool_uses_trigger_needs_the_server_strategy_now_that_batched_is_the_default() -> None:
    message = error_of('context_editing.tool_uses.trigger_kind="tool_uses"')
    assert "context_editing.tool_uses.trigger_kind" in message
    assert 'set strategy = "server" for a tool_uses trigger' in message
    profile, _ = build(
        'context_editing.tool_uses.trigger_kind="tool_uses"',
        'context_editing.tool_uses.strategy="server"',
        "context_editing.tool_uses.trigger=10",
    )
    assert profile.context_editing.tool_uses.trigger == 10


def test_batched_low_water_zero_means_as_far_as_keep_allows_and_must_stay_below_trigger() -> None:
    profile, _ = build("context_editing.tool_uses.low_water=0")
    assert profile.context_editing.tool_uses.low_water == 0
    message = error_of(
        "context_editing.tool_uses.trigger=10000", "context_editing.tool_uses.low_water=10000"
    )
    assert "low_water: 10000: batched clearing needs low_water < trigger (10000)" in message
    assert "only used with" in error_of(
        'context_editing.tool_uses.strategy="server"', "context_editing.tool_uses.low_water=5"
    )


def test_adaptive_thinking_needs_thinking_on_and_no_budget_rule() -> None:
    message = error_of("thinking.adaptive=true")
    assert "thinking.adaptive: adaptive thinking is a kind of extended thinking" in message
    # No budget is sent with adaptive, so the budget rules do not apply.
    profile, warnings = build(
        "thinking.enabled=true", "thinking.adaptive=true", "thinking.budget_tokens=9000"
    )
    assert profile.thinking.request_field() == {"type": "adaptive"}
    assert warnings == []
    assert "must be less than max_tokens" in error_of(
        "thinking.enabled=true", "thinking.budget_tokens=9000"
    )


def test_adaptive_thinking_silences_the_enabled_deprecation_warning() -> None:
    on = ("model=claude-opus-4-6", "thinking.enabled=true")
    assert any("set thinking.adaptive = true" in w for w in build(*on)[1])
    assert build(*on, "thinking.adaptive=true", "context_editing.thinking.enabled=true")[1] == []
