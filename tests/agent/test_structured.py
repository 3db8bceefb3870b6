"""agent/structured.py: the request field (the SDK's shape), the schema file, the answer's check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaJSONOutputFormatParam, BetaOutputConfigParam

from agentctl.agent.request import build_compaction_request, build_request
from agentctl.agent.structured import (
    load_schema,
    output_config,
    parse_output,
    schema_argument,
)
from agentctl.errors import ConfigError, OutputError, UsageError
from agentctl.profile.settings import Profile

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
            },
        }
    },
    "required": ["items"],
}


def test_the_request_field_is_the_sdks_output_config_format() -> None:
    config = output_config(SCHEMA)
    assert set(config) <= set(BetaOutputConfigParam.__annotations__)
    assert set(config["format"]) == set(BetaJSONOutputFormatParam.__annotations__)
    assert config == {"format": {"type": "json_schema", "schema": SCHEMA}}


def test_build_request_sends_the_format_and_a_compaction_request_does_not() -> None:
    messages = [{"role": "user", "content": "hi"}]
    request = build_request(Profile(), messages, [], output_schema=SCHEMA)
    assert request["output_config"] == output_config(SCHEMA)
    assert "output_config" not in build_request(Profile(), messages, [])
    assert "format" not in build_compaction_request(Profile(), messages, []).get(
        "output_config", {}
    )


def test_a_matching_answer_is_parsed() -> None:
    assert parse_output('{"items": [{"count": 3}]}', SCHEMA) == {"items": [{"count": 3}]}


@pytest.mark.parametrize(
    ("text", "stop", "words"),
    [
        (
            "Here you are: {}",
            "end_turn",
            "the answer is not JSON (line 1 column 1: Expecting value)",
        ),
        ('{"items": [{"count": "3"}]}', "end_turn", "at $.items[0].count: '3' is not of type"),
        ('{"item": []}', "end_turn", "at $: 'items' is a required property"),
        ("I can't help with that.", "refusal", "the model refused"),
    ],
)
def test_an_answer_that_does_not_parse_or_match_says_why_and_where(
    text: str, stop: str, words: str
) -> None:
    with pytest.raises(OutputError) as caught:
        parse_output(text, SCHEMA, stop)
    assert words in str(caught.value)
    assert caught.value.exit_code == 1


def test_a_schema_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    assert load_schema(path) == SCHEMA
    assert schema_argument(str(path)) == SCHEMA
    assert schema_argument(SCHEMA) == SCHEMA


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "cannot read: No such file or directory"),
        ("{not json", "not JSON (line 1 column 2"),
        ("[1, 2]", "must be a JSON object (a JSON Schema), got an array"),
        ('{"type": "objekt"}', "not a valid JSON Schema at $.type:"),
        ('{"properties": {"n": {"minimum": "one"}}}', "at $.properties.n.minimum:"),
    ],
)
def test_a_bad_schema_file_is_a_config_error_naming_it(
    tmp_path: Path, content: str | None, words: str
) -> None:
    path = tmp_path / "answer.schema.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError) as caught:
        load_schema(path)
    assert str(caught.value).startswith(f"output schema {path}: ")
    assert words in str(caught.value)
    assert caught.value.exit_code == 2


def test_a_bad_schema_given_in_python_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"^output_schema: not a valid JSON Schema at \$\.type"):
        schema_argument({"type": 3})
