"""Options several commands share, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

SERVER_MODEL_HELP = (
    "The server rules to play: unedited, edited, unedited-large or edited-large, with overrides"
    " (e.g. 'edited,min_result_tokens=50,placeholder=[cleared]'). Default: the profile's"
    " context_editing.server_model if set, else the calibration from `agentctl probe`, else"
    " unedited."
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
