"""Profile -> plain TOML-able dict, TOML text (tomli-w) and the commented `init` template."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import tomli_w

from agentctl.errors import UsageError
from agentctl.profile.keys import KEY_DOCS
from agentctl.profile.schema import to_plain
from agentctl.profile.settings import Profile


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """Every setting as TOML types (paths as strings, tuples as lists); `source` left out."""
    result = to_plain(profile)
    assert isinstance(result, dict)
    return result


def profile_to_toml(profile: Profile) -> str:
    """The profile as TOML text (no comments); loads back to an equal Profile."""
    text: str = tomli_w.dumps(profile_to_dict(profile))
    return text


TEMPLATE_HEADER = """\
# agentctl profile. Every key is shown with its built-in default: edit what you need,
# delete the rest. Relative paths are relative to this file.
# Check it with `agentctl profile check FILE`; see what the API will get with
# `agentctl profile show FILE`. Key reference: docs/profile.md.

"""

PRICES_EXAMPLE = """\
# [prices."claude-sonnet-5"]  # override the built-in price table (USD per million tokens)
# input = 2.0
# output = 10.0
# cache_write_5m = 2.5
# cache_write_1h = 4.0
# cache_read = 0.2
"""

MCP_EXAMPLE = """\
# [mcp.servers.files]  # an MCP server; its tools are offered as mcp__files__TOOL
# command = ["python", "files_server.py"]
# env = { LOG_LEVEL = "warning" }
# allow = []          # only these tools (empty: all)
# deny = []           # never these tools
# timeout_s = 60.0    # longest wait for one call
"""


def _optional_example(key: str, example: str) -> str:
    """A commented-out line for an optional key left out (TOML has no null to show)."""
    table, _, name = key.rpartition(".")
    doc = KEY_DOCS[key]
    head = f"\n# [{table}]  # {KEY_DOCS[table].meaning}\n"
    return f"{head}# {doc.meaning} (API: {doc.api})\n# {name} = {example}\n"


def commented_template(profile: Profile | None = None) -> str:
    """A complete profile as TOML text, each key preceded by a comment saying what it does."""
    data = profile_to_dict(profile or Profile())
    prices = data.pop("prices")
    servers = data.pop("mcp")
    output = data.pop("output")
    parts = [TEMPLATE_HEADER]
    for table, values in _tables("", data):
        if table:
            doc = KEY_DOCS.get(table)
            parts.append(f"\n[{table}]" + (f"  # {doc.meaning}" if doc else "") + "\n")
        for name, value in values.items():
            doc = KEY_DOCS[f"{table}.{name}" if table else name]
            api = f" (API: {doc.api})" if doc.api else ""
            parts.append(f"# {doc.meaning}{api}\n{tomli_w.dumps({name: value})}")
    parts.append("\n" + (tomli_w.dumps({"prices": prices}) if prices else PRICES_EXAMPLE))
    parts.append("\n" + (tomli_w.dumps({"mcp": servers}) if servers["servers"] else MCP_EXAMPLE))
    schema = '"answer.schema.json"'
    parts.append(tomli_w.dumps({"output": output}) if output else "")
    parts.append("" if output else _optional_example("output.schema", schema))
    return "".join(parts)


def write_template(path: Path, *, force: bool = False, text: str | None = None) -> None:
    """Write `text` (default `commented_template()`) to `path`; never clobbers a file unless
    `force`.

    Without `force` the file is created exclusively (no race with another writer); with it,
    the new text goes to a temporary file first and replaces the old one in one step.
    """
    if path.is_dir():
        raise UsageError(
            f"{path}: is a directory (give a file name, e.g. {path / 'agentctl.toml'})"
        )
    text = commented_template() if text is None else text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not force:
            with path.open("x", encoding="utf-8") as f:
                f.write(text)
            return
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except FileExistsError:
        raise UsageError(f"{path}: already exists (use --force to overwrite it)") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot write: {err.strerror or err}") from None


def _tables(prefix: str, data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(dotted table name, its scalar keys) in file order; tables with only sub-tables vanish."""
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
    result = [(prefix, scalars)] if scalars or not prefix else []
    for name, value in data.items():
        if isinstance(value, dict):
            result.extend(_tables(f"{prefix}.{name}" if prefix else name, value))
    return result
