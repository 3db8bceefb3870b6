"""Options several commands share, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

SERVER_MODEL_HELP = (
    "The server rules to play: default, unedited-basis or placeholder-line, with overrides"
    " (e.g. 'default,min_result_tokens=20,placeholder=[cleared]'; the old names unedited,"
    " edited, unedited-large, edited-large still work). Default: the profile's"
    " context_editing.server_model if set, else the calibration from `agentctl probe`, else"
    " default."
)
ServerModelOption = Annotated[
    str, typer.Option("--server-model", metavar="SPEC", help=SERVER_MODEL_HELP)
]
ReplayServerModelOption = Annotated[
    str,
    typer.Option(
        "--server-model",
        metavar="SPEC",
        help=SERVER_MODEL_HELP + " `all`: also report the figures under every preset.",
    ),
]
