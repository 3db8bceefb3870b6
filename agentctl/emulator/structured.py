"""Structured output on the emulator's side: the `output_config.format` of a request, checked
as the API checks it, and the JSON the emulated model answers with when one is asked for.

The emulator's own answers (the default policy's, a script's `final_text`) follow the format:
a deterministic example of the schema, built here, whose first string holds the answer the
model would have written. A script turn's `text` is played as written, so a script can answer
with text that does not match (to test a client's handling of it).
"""

from __future__ import annotations

import json
from typing import Any

from agentctl.emulator.protocol import invalid

Json = dict[str, Any]
FORMAT_KEYS = frozenset({"type", "schema"})
CONFIG_KEYS = frozenset({"format", "effort", "task_budget"})
MAX_DEPTH = 12  # a recursive schema ($ref to itself) stops here
_SCALARS: dict[str, Any] = {"integer": 0, "number": 0, "boolean": True, "null": None}
# An example of each string format the API's structured outputs support.
FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "date": "2026-01-01",
    "duration": "P1D",
    "email": "someone@example.com",
    "hostname": "example.com",
    "uri": "https://example.com/",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def check_output_config(request: Json) -> None:
    """The API's 400 for an `output_config` of the wrong shape (pydantic-style messages)."""
    config = request.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict):
        raise invalid("output_config: Input should be a valid dictionary")
    extra = sorted(set(config) - CONFIG_KEYS)
    if extra:
        raise invalid(f"output_config.{extra[0]}: Extra inputs are not permitted")
    fmt = config.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, dict):
        raise invalid("output_config.format: Input should be a valid dictionary")
    if "type" not in fmt:
        raise invalid("output_config.format.type: Field required")
    if fmt["type"] != "json_schema":
        raise invalid("output_config.format.type: Input should be 'json_schema'")
    if "schema" not in fmt:
        raise invalid("output_config.format.schema: Field required")
    if not isinstance(fmt["schema"], dict):
        raise invalid("output_config.format.schema: Input should be a valid dictionary")
    extra = sorted(set(fmt) - FORMAT_KEYS)
    if extra:
        raise invalid(f"output_config.format.{extra[0]}: Extra inputs are not permitted")


def requested_schema(request: Json) -> Json | None:
    """The JSON Schema a (valid) request asks the answer to match, or None."""
    config = request.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    return fmt.get("schema") if isinstance(fmt, dict) else None


def shaped_answer(request: Json, text: str) -> str:
    """The model's final `text`, as JSON matching the request's schema when it asks for one."""
    schema = requested_schema(request)
    if schema is None:
        return text
    return json.dumps(example(schema, text), ensure_ascii=False)


def example(schema: Json, text: str = "") -> Any:
    """A value matching `schema` (the subset structured outputs use: types, properties,
    items, enum, const, anyOf/oneOf/allOf, local `$ref`s), deterministic; its first string
    is `text`, every other string the name of its property (one with a `format`: an example
    of it)."""
    strings = [text]
    return _value(schema, schema, "value", strings, 0)


def _value(schema: Any, root: Json, name: str, strings: list[str], depth: int) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    if "$ref" in schema:
        return _value(_resolve(root, str(schema["$ref"])), root, name, strings, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _value(schema[key][0], root, name, strings, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, strings, depth)
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 0))
        return [_value(schema.get("items", {}), root, name, strings, depth + 1)] * count
    if kind == "string" and schema.get("format") in FORMATS:
        return FORMATS[schema["format"]]
    if kind == "string":
        return strings.pop(0) if strings else name
    if kind in ("integer", "number"):
        return schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
    return _SCALARS.get(str(kind))


def _object(schema: Json, root: Json, strings: list[str], depth: int) -> Json:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {key: _value(sub, root, key, strings, depth + 1) for key, sub in properties.items()}


def _resolve(root: Json, ref: str) -> Any:
    """A local reference (`#/$defs/Item`); anything else resolves to nothing."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        node = (
            node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        )
    return node
