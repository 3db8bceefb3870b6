"""`agentctl run`: parse flags, build the run, render its events. Thin."""

from __future__ import annotations

import typer


def register(root: typer.Typer) -> None:
    """Attach the `run` command to the root app (filled in by the run-loop work)."""
    del root
