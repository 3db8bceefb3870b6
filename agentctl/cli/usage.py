"""One placeholder style in every usage line: NAME for a required argument, [NAME] optional."""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand


class PlainUsageCommand(TyperCommand):
    """Typer writes a required argument as `{NAME}`; Click, man pages and our docs write `NAME`."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [piece.replace("{", "").replace("}", "") for piece in pieces]


def plain_usage(command: Any) -> None:
    """Give `command` and every command under it the plain usage line."""
    if type(command) is TyperCommand:
        command.__class__ = PlainUsageCommand
    for sub in getattr(command, "commands", {}).values():
        plain_usage(sub)
