"""Load scripted-model TOML files into a Script (see docs/emulator.md for the format)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from agentctl.emulator.model import STOP_REASONS, Script, ScriptTurn, ToolCall
from agentctl.emulator.server_tools import CODE_SUBTOOLS, SERVER_TOOL_NAMES
from agentctl.errors import ConfigError

Json = dict[str, Any]


def load_script(path: Path) -> Script:
    """Read and parse a script file; ConfigError names the file and key on any problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"script {path}: cannot read: {err.strerror}") from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"script {path}: not valid TOML: {err}") from err
    return parse_script(data, str(path))


def parse_script(data: Json, source: str = "<script>") -> Script:
    """A Script from the TOML document's dict."""
    unknown = set(data) - {"turn", "final_text", "context_window"}
    if unknown:
        key = sorted(unknown)[0]
        raise ConfigError(
            f"script {source}: {key}: unknown key (use turn, final_text, context_window)"
        )
    turns = data.get("turn", [])
    if not isinstance(turns, list):
        raise ConfigError(f"script {source}: turn: must be an array of tables ([[turn]])")
    final = data.get("final_text", Script.final_text)
    if not isinstance(final, str) or not final:
        raise ConfigError(f"script {source}: final_text: must be a non-empty string")
    parsed = tuple(_parse_turn(t, f"script {source}: turn.{i}") for i, t in enumerate(turns))
    window = _positive_int(data.get("context_window"), f"script {source}: context_window")
    return Script(parsed, final, source, window)


def _optional_str(turn: Json, key: str, where: str) -> str | None:
    value = turn.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}.{key}: must be a string")
    return value


def _parse_turn(turn: object, where: str) -> ScriptTurn:
    if not isinstance(turn, dict):
        raise ConfigError(f"{where}: must be a table")
    allowed = {"thinking", "text", "tool_use", "stop_reason", "stop_sequence", "output_tokens"}
    unknown = set(turn) - allowed
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown key")
    calls = turn.get("tool_use", [])
    if not isinstance(calls, list):
        raise ConfigError(f"{where}.tool_use: must be an array of tables ([[turn.tool_use]])")
    parsed = tuple(_parse_call(c, f"{where}.tool_use.{i}") for i, c in enumerate(calls))
    if len(parsed) > 1 and any(c.name in (*SERVER_TOOL_NAMES, *CODE_SUBTOOLS) for c in parsed):
        raise ConfigError(
            f"{where}.tool_use: a server tool call ({', '.join(SERVER_TOOL_NAMES)}) must be"
            " the turn's only call (the model continues after it in the same response)"
        )
    return ScriptTurn(
        thinking=_optional_str(turn, "thinking", where),
        text=_optional_str(turn, "text", where),
        tool_calls=parsed,
        stop_reason=_stop_reason(turn, where),
        stop_sequence=_optional_str(turn, "stop_sequence", where),
        output_tokens=_positive_int(turn.get("output_tokens"), f"{where}.output_tokens"),
    )


def _parse_call(call: object, where: str) -> ToolCall:
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise ConfigError(f"{where}.name: must be a string")
    arguments = call.get("input", {})
    if not isinstance(arguments, dict):
        raise ConfigError(f"{where}.input: must be a table")
    return ToolCall(call["name"], arguments)


def _stop_reason(turn: Json, where: str) -> str | None:
    value = _optional_str(turn, "stop_reason", where)
    if value is not None and value not in STOP_REASONS:
        raise ConfigError(f"{where}.stop_reason: must be one of {', '.join(STOP_REASONS)}")
    return value


def _positive_int(value: object, name: str) -> int | None:
    """None when absent; ConfigError naming `name` unless a positive integer."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{name}: must be a positive integer")
    return value
