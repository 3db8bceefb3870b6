"""`agentctl mcp list`: each MCP server of a profile, whether it starts, and its tools. Thin."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.profile import SetOption
from agentctl.errors import EXIT_USAGE
from agentctl.profile.loader import resolve_profile
from agentctl.render.safe import visible

if TYPE_CHECKING:
    from agentctl.tools.mcp import ServerStatus

app = typer.Typer(
    help="""MCP servers declared in the profile ([mcp.servers.NAME]).

\b
Examples:
  agentctl mcp list                               start each server, list its tools, stop it
  agentctl mcp list --profile examples/mcp/agentctl.toml --json
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="mcp")


@app.command(name="list")
def list_servers(
    profile: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="Profile file or preset (default: the ambient profile)."),
    ] = None,
    sets: SetOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Start each server of the profile, show its status and the tools the model is offered
    (as mcp__NAME__TOOL, with the first line of each description), then stop it.

    Exit codes: 0 every server started, 2 a server did not start or a bad profile.

    \b
    Examples:
      agentctl mcp list --profile examples/mcp/agentctl.toml
      agentctl mcp list --json | jq '.[].tools'
      agentctl mcp list --profile examples/mcp/agentctl.toml \\
          --set 'mcp.servers.units.command=["/path/to/venv/bin/python", "server.py"]'
    """
    from agentctl.tools.mcp import probe

    resolved, _ = resolve_profile(profile, sets or ())
    statuses = probe(resolved.mcp.servers)
    if as_json:
        sys.stdout.write(json.dumps([asdict(s) for s in statuses], indent=2) + "\n")
    else:
        sys.stdout.write(format_statuses(statuses, resolved.source))
    if any(not status.ok for status in statuses):
        raise typer.Exit(EXIT_USAGE)


def format_statuses(statuses: list[ServerStatus], source: str) -> str:
    """One block per server: `NAME  ok, N tools` and the tool names, or the error line."""
    if not statuses:
        return f"no MCP servers in {source} (add a [mcp.servers.NAME] table)\n"
    return "".join(format_status(status) for status in statuses)


def format_status(status: ServerStatus) -> str:
    from agentctl.tools.mcp import TASKS_NOTE  # the module, like `probe`, loads with the command

    if not status.ok:
        return visible(f"{status.name}  failed: {status.error}", keep="") + "\n"
    lines = [f"{status.name}  ok, {len(status.tools)} tool(s)"]
    width = max(map(len, status.tools), default=0)
    for name in status.tools:
        about = status.descriptions.get(name, "")
        lines.append(f"  {name:<{width}}  {about}".rstrip() if about else f"  {name}")
    if status.hidden:
        lines.append("  not offered (allow/deny): " + ", ".join(status.hidden))
    if status.needs_tasks:
        lines.append(f"  not offered ({TASKS_NOTE}): " + ", ".join(status.needs_tasks))
    # Names and descriptions come from the server: each shown on its own line, made safe.
    return "\n".join(visible(line, keep="") for line in lines) + "\n"


def summary(status: ServerStatus) -> str:
    """One line for `doctor`."""
    if not status.ok:
        return visible(status.error, keep="")
    return visible(f"starts; {len(status.tools)} tool(s): " + ", ".join(status.tools), keep="")
