"""`agentctl memory ...` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="memory commands.", no_args_is_help=True)


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="memory")
