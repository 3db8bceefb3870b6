"""Structured output in the emulator: the format is checked as the API does, and the emulated
model's own answers match the schema; through the real SDK over HTTP."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from agentctl.emulator import Script, ScriptTurn, running
from agentctl.emulator.structured import example, shaped_answer

from .helpers import MODEL, make_client, user

REPORT = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "count": {"type": "integer", "minimum": 2},
        "level": {"type": "string", "enum": ["low", "high"]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "note": {"anyOf": [{"type": "null"}, {"type": "string"}]},
    },
    "required": ["summary", "count", "level", "tags", "items", "note"],
    "additionalProperties": False,
    "$defs": {
        "Item": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "ok": {"type": "boolean"}},
            "required": ["path", "ok"],
            "additionalProperties": False,
        }
    },
}


def fmt(schema: dict[str, Any]) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "schema": schema}}


@pytest.mark.parametrize(
    "schema",
    [
        REPORT,
        {"type": "string"},
        {"type": "array", "items": {"type": "number", "exclusiveMinimum": 4}},
        {
            "type": "object",
            "properties": {"x": {"const": "fixed"}, "y": {"type": ["null", "integer"]}},
        },
        {"allOf": [{"type": "object", "properties": {"a": {"type": "boolean"}}}]},
    ],
)
def test_the_example_matches_its_schema(schema: dict[str, Any]) -> None:
    value = example(schema, "the answer")
    assert list(validator_for(schema)(schema).iter_errors(value)) == []


def test_a_formatted_string_gets_an_example_of_its_format() -> None:
    # jsonschema checks formats only when asked to (a format checker): the check can fail.
    formats = ["date-time", "date", "email", "uri", "ipv4", "ipv6", "uuid"]
    schema = {
        "type": "object",
        "properties": {f: {"type": "string", "format": f} for f in formats},
    }
    value = example({**schema, "properties": {"text": {"type": "string"}, **schema["properties"]}})
    checker = Draft202012Validator.FORMAT_CHECKER
    assert list(Draft202012Validator(schema, format_checker=checker).iter_errors(value)) == []
    assert value["date"] == "2026-01-01" and value["text"] == ""


def test_the_example_carries_the_answer_in_its_first_string() -> None:
    value = example(REPORT, "From my notes: 2 files.")
    assert value["summary"] == "From my notes: 2 files."
    assert value["count"] == 2 and value["level"] == "low"
    assert value["tags"] == ["tags", "tags"]
    assert value["items"] == [{"path": "path", "ok": True}]


def test_without_a_format_the_answer_is_the_text() -> None:
    assert shaped_answer({"messages": []}, "plain") == "plain"
    request = {"output_config": fmt({"type": "object", "properties": {"a": {"type": "string"}}})}
    assert json.loads(shaped_answer(request, "plain")) == {"a": "plain"}


def test_the_scripts_final_text_follows_the_format_over_http() -> None:
    with running(script=Script(final_text="All done.")) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            model=MODEL, max_tokens=500, messages=[user("Report.")], output_config=fmt(REPORT)
        )
        body = emu.requests[-1].body
    assert body["output_config"] == fmt(REPORT)  # what the SDK sent, as the emulator got it
    answer = json.loads(message.content[0].text)  # type: ignore[union-attr]
    assert list(validator_for(REPORT)(REPORT).iter_errors(answer)) == []
    assert answer["summary"] == "All done."


def test_a_script_turn_is_played_as_written_even_if_it_does_not_match() -> None:
    script = Script(turns=(ScriptTurn(text="not JSON at all"),))
    with running(script=script) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            model=MODEL, max_tokens=500, messages=[user("Report.")], output_config=fmt(REPORT)
        )
    assert message.content[0].text == "not JSON at all"  # type: ignore[union-attr]


def test_the_default_model_answers_with_json_when_asked() -> None:
    with running() as emu:
        message = make_client(emu.base_url).beta.messages.create(
            model=MODEL, max_tokens=500, messages=[user("Say hi.")], output_config=fmt(REPORT)
        )
    answer = json.loads(message.content[0].text)  # type: ignore[union-attr]
    assert set(answer) == set(REPORT["properties"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("json", "output_config: Input should be a valid dictionary"),
        ({"formats": {}}, "output_config.formats: Extra inputs are not permitted"),
        ({"format": "json"}, "output_config.format: Input should be a valid dictionary"),
        ({"format": {"schema": {}}}, "output_config.format.type: Field required"),
        (
            {"format": {"type": "json", "schema": {}}},
            "output_config.format.type: Input should be 'json_schema'",
        ),
        ({"format": {"type": "json_schema"}}, "output_config.format.schema: Field required"),
        (
            {"format": {"type": "json_schema", "schema": []}},
            "output_config.format.schema: Input should be a valid dictionary",
        ),
        (
            {"format": {"type": "json_schema", "schema": {}, "strict": True}},
            "output_config.format.strict: Extra inputs are not permitted",
        ),
    ],
)
def test_a_malformed_format_is_the_apis_400(config: Any, message: str) -> None:
    with running() as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).beta.messages.create(
            model=MODEL, max_tokens=100, messages=[user("hi")], output_config=config
        )
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"] == {"type": "invalid_request_error", "message": message}
