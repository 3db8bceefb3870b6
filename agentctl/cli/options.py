"""Options several commands share, defined once."""

from __future__ import annotations

from typing import Annotated, Any

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


def refuse_repeats(command: Any) -> None:
    """Make a Click `command` (and every subcommand) refuse an option given twice that takes
    one value (`simulate --profile a --profile b` compared only b): exit 2 naming it."""
    original = command.parse_args

    def parse_args(ctx: Any, args: list[str]) -> Any:
        try:
            _, _, order = command.make_parser(ctx).parse_args(args=list(args))
        except Exception:  # a bad argument: the real parse below reports it, in its words
            order = []
        seen: set[str] = set()
        for param in filter(_single, order):
            if param.name in seen:
                ctx.fail(f"{'/'.join(param.opts)} given twice: give it once")
            seen.add(str(param.name))
        return original(ctx, args)

    command.parse_args = parse_args
    for sub in getattr(command, "commands", {}).values():
        refuse_repeats(sub)


def _single(param: Any) -> bool:
    """An option that takes one value (not a flag, not repeatable). Typer ships its own copy
    of Click, so the test is by attribute, not by class."""
    return getattr(param, "param_type_name", "") == "option" and not (
        param.multiple or param.count or param.is_flag
    )
