"""Structured output: the JSON Schema a run's final answer must match, the request field that
asks the API for it (`output_config.format`), and the check of the answer against it.

The request shape is the installed SDK's `BetaOutputConfigParam` / `BetaJSONOutputFormatParam`
(`{"format": {"type": "json_schema", "schema": {...}}}`), the one its `messages.stream` sends.
The schema is sent as written; the API constrains the model's text to it, and the answer is
still parsed and validated here (a refusal, or a server that does not honour the format, would
otherwise pass unnoticed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentctl.errors import ConfigError, OutputError, UsageError

Schema = dict[str, Any]
PREVIEW_CHARS = 80


def output_config(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The request's `output_config` asking for answers that match `schema`."""
    return {"format": {"type": "json_schema", "schema": dict(schema)}}


def load_schema(path: Path) -> Schema:
    """The JSON Schema in file `path`; ConfigError (exit 2) naming the file when it cannot be
    read, is not JSON, or is not a valid JSON Schema."""
    where = f"output schema {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{where}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        why = f"line {err.lineno} column {err.colno}: {err.msg}"
        raise ConfigError(f"{where}: not JSON ({why})") from None
    return checked_schema(data, where, ConfigError)


def require_schema_argument(value: object) -> None:
    """UsageError unless `value` is an `output_schema=` the Python API takes (None too)."""
    if value is not None and not isinstance(value, Mapping | str | Path):
        raise UsageError(
            "output_schema: must be a JSON Schema (a dict) or the path of its file,"
            f" got {type(value).__name__}"
        )


def schema_argument(value: Mapping[str, Any] | str | Path) -> Schema:
    """`output_schema=` of the Python API: a schema (dict) or the path of a schema file."""
    if isinstance(value, str | Path):
        return load_schema(Path(value).expanduser())
    return checked_schema(dict(value), "output_schema", UsageError)


def checked_schema(
    data: object, where: str, error: type[ConfigError] | type[UsageError] = ConfigError
) -> Schema:
    """`data` if it is a valid JSON Schema object, else `error` naming `where` and the place in
    the schema that is wrong."""
    # jsonschema (and referencing, rpds) load only when a run asks for structured output.
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(data, dict):
        raise error(f"{where}: must be a JSON object (a JSON Schema), got {_json_type(data)}")
    try:
        validator_for(data).check_schema(data)
    except SchemaError as err:
        raise error(f"{where}: not a valid JSON Schema at {err.json_path}: {err.message}") from None
    return data


def parse_output(text: str, schema: Mapping[str, Any], stop_reason: str = "end_turn") -> Any:
    """The final answer `text` as JSON checked against `schema`; OutputError saying why not
    (a refusal, not JSON, or the first mismatch with its JSON path, e.g. `$.items[0].count`)."""
    # jsonschema loads only when a run asks for structured output (as above).
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for

    if stop_reason == "refusal":
        raise OutputError(f"the model refused, so there is no structured output: {_preview(text)}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise OutputError(
            f"the answer is not JSON (line {err.lineno} column {err.colno}: {err.msg}): "
            f"{_preview(text)}"
        ) from None
    validator = validator_for(schema)(dict(schema))
    mismatch = best_match(validator.iter_errors(value))
    if mismatch is not None:
        raise OutputError(
            f"the answer does not match the output schema at {mismatch.json_path}: "
            f"{_short(mismatch.message)}"
        )
    return value


def _preview(text: str) -> str:
    body = text.strip()
    return repr(body[:PREVIEW_CHARS] + ("…" if len(body) > PREVIEW_CHARS else "")) if body else "''"


def _short(message: str) -> str:
    return message if len(message) <= 300 else message[:297] + "..."


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
