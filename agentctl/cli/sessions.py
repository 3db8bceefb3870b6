"""`agentctl sessions ...`, `stats`, `simulate` and `tune`: recorded runs and what-if tuning."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Recorded runs (transcripts): list, show, remove, export.", no_args_is_help=True
)


def register(root: typer.Typer) -> None:
    """Attach the `sessions` group (and, as they land, stats/simulate/tune) to the root app."""
    root.add_typer(app, name="sessions")
