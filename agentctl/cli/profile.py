"""`agentctl profile init|show|check`: write, inspect and validate TOML profiles. Thin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentctl.errors import UsageError
from agentctl.profile.loader import resolve_profile
from agentctl.profile.preset import preset_path, unknown_preset
from agentctl.profile.show import (
    api_field,
    batched_note,
    flatten,
    origin_of,
    profile_origins,
    show_data,
)
from agentctl.profile.to_toml import commented_template, write_template
from agentctl.render.safe import safe_text, visible

if TYPE_CHECKING:
    from rich.console import Console

# Lazy imports: Rich only when a table is drawn on a terminal, the request builder only for
# `profile show`, so `profile --help` and the plain output stay light.

app = typer.Typer(
    help="""Write, inspect and validate TOML profiles.

Without a FILE, show and check use the lookup order a run uses: $AGENTCTL_PROFILE,
./agentctl.toml, the user profile, else the built-in defaults.

\b
Examples:
  agentctl profile init                        write ./agentctl.toml, all keys
  agentctl profile show configs/balanced.toml  the settings, the API fields
  agentctl profile check --strict              check the profile a run uses
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override one setting, e.g. --set context_editing.tool_uses.keep=5 (repeatable).",
    ),
]


ProfileArg = Annotated[
    str | None,
    typer.Argument(metavar="FILE", help="Profile file (default: the lookup order)."),
]


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="profile")


@app.command()
def init(
    path: Annotated[
        str, typer.Argument(metavar="FILE", help="File to write; - for stdout.")
    ] = "agentctl.toml",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    preset: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Copy a shipped preset (balanced, ...) instead."),
    ] = None,
) -> None:
    """Write a complete, commented profile with the built-in defaults, or a copy of a preset.

    Exit codes: 0 written, 2 FILE exists (without --force), cannot be written, or NAME is no
    preset.

    \b
    Examples:
      agentctl profile init                  ./agentctl.toml, used by runs in this folder
      agentctl profile init - | less         read it without writing a file
      agentctl profile init --preset balanced tuned.toml   start from a preset
    """
    text = commented_template() if preset is None else preset_text(preset)
    if path == "-":
        sys.stdout.write(text)
        return
    write_template(Path(path), force=force, text=text)
    print(f"wrote {path}" + (f" (preset {preset})" if preset else ""))


def preset_text(name: str) -> str:
    """The text of preset `name`, or exit 2 listing the presets."""
    found = preset_path(name)
    if found is None:
        raise unknown_preset(name, "--preset", files=False)
    return found.read_text(encoding="utf-8")


@app.command()
def show(
    profile: ProfileArg = None,
    sets: SetOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show resolved settings, and the context_management and betas a run sends.

    Lookup when FILE is not given: $AGENTCTL_PROFILE, ./agentctl.toml, the user profile,
    else the built-in defaults.

    \b
    Examples:
      agentctl profile show
      agentctl profile show configs/aggressive.toml --set context_editing.tool_uses.keep=3
      agentctl profile show --json | jq .context_management
    """
    resolved, warnings = resolve_profile(profile, sets or ())
    print_warnings(warnings)
    from agentctl.agent.request import betas, build_context_management

    first = build_context_management(resolved.context_editing)
    data = show_data(resolved, betas(resolved), first)
    note = batched_note(resolved)
    if note:
        typer.echo(note, err=True)
    if as_json:
        print(json.dumps(data, indent=2))
    elif sys.stdout.isatty():
        render_rich(data, profile_origins(profile, sets or ()))
    else:
        sys.stdout.write(render_plain(data))


@app.command()
def check(
    profile: ProfileArg = None,
    sets: SetOption = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Treat warnings as errors (exit 2).")
    ] = False,
) -> None:
    """Validate a profile: "ok" and exit 0 (warnings on stderr), or exit 2 on an error.

    Lookup when FILE is not given: as for `profile show` (the profile a run would use).

    \b
    Examples:
      agentctl profile check configs/balanced.toml
      agentctl profile check --strict           the profile a run here would use
    """
    resolved, warnings = resolve_profile(profile, sets or ())
    if resolved.output.schema is not None:
        # Read only when a profile names a schema (jsonschema loads with it).
        from agentctl.agent.structured import load_schema

        load_schema(resolved.output.schema)  # ConfigError naming the file, as a run would
    print_warnings(warnings)
    if strict and warnings:
        count = f"{len(warnings)} warning" + ("s" if len(warnings) > 1 else "")
        raise UsageError(
            f"profile {resolved.source}: {count} and --strict (fix them, or drop --strict)"
        )
    noun = "warning" if len(warnings) == 1 else "warnings"
    print(f"ok: {resolved.source} ({len(warnings)} {noun})")


def print_warnings(warnings: list[str]) -> None:
    """Warnings go to stderr, one line each, so stdout stays parseable."""
    for warning in warnings:
        print(f"warning: {visible(warning, keep='')}", file=sys.stderr)


def render_plain(data: dict[str, Any]) -> str:
    """Piped output: one `key = value` line per setting (JSON values), then the API view."""
    lines = [f"source = {json.dumps(data['source'])}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in flatten(data["profile"])]
    cm = data["context_management"]
    lines.append(f"context_management = {json.dumps(cm)}")
    lines.append(f"betas = {json.dumps(data['betas'])}")
    return "\n".join(lines) + "\n"


def render_rich(
    data: dict[str, Any], origins: dict[str, str], console: Console | None = None
) -> None:
    """Terminal output: a settings table and the request JSON, highlighted.

    Keys and numbers are never cut: where they do not fit with the API field column, it is
    left out; where they do not fit at all, the plain `key = value` lines are printed."""
    from rich.console import Console
    from rich.json import JSON
    from rich.table import Table

    from agentctl.render.format import color_system

    console = console or Console(color_system=color_system())
    rows = flatten(data["profile"])
    key_width = max(len(key) for key, _ in rows)
    figures = [json.dumps(v) for _, v in rows if isinstance(v, int | float)]
    value_width = max(map(len, figures), default=1)
    core = key_width + value_width + len("default") + 10  # three columns: 4 bars, 6 padding
    if console.width < core:
        console.print(safe_text(render_plain(data).rstrip("\n"), keep="\n"))
        return
    with_api = console.width >= core + 3 + API_FIELD_MIN
    # Values, paths and betas may come from a task file: shown as text, never as markup.
    table = Table(title=safe_text(f"profile {data['source']}", keep=""), title_justify="left")
    table.add_column("key", no_wrap=True, min_width=key_width)
    table.add_column("value", overflow="fold", min_width=value_width)
    table.add_column("from", no_wrap=True)
    if with_api:
        table.add_column("API field", overflow="fold", min_width=API_FIELD_MIN)
    for key, value in rows:
        cells = [safe_text(c, keep="") for c in (key, json.dumps(value), origin_of(key, origins))]
        table.add_row(*cells, *([api_field(key)] if with_api else []))
    console.print(table)
    cm = data["context_management"]
    console.print("context_management:", JSON.from_data(cm) if cm else "null (no edits)")
    console.print("betas:", safe_text(", ".join(data["betas"]) or "(none)", keep=""))


API_FIELD_MIN = 12
