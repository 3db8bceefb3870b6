"""`agentctl example list|copy`: the shipped example tasks, copied to a folder to run. Thin."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from agentctl.errors import UsageError
from agentctl.profile.preset import example_names, examples_dir, listing

app = typer.Typer(
    help="""The shipped example tasks (examples/ in a checkout, inside the installed package).

Exit codes: 0 done, 2 unknown example or a folder that cannot be written.

\b
Examples:
  agentctl example list
  agentctl example copy research                 ./research, then:
  agentctl run research/task.md --offline
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# What a run of an example leaves behind: not part of a fresh copy.
LEFT_BEHIND = shutil.ignore_patterns("memory", "__pycache__", "*.pyc")


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="example")


@app.command(name="list")
def list_() -> None:
    """Print the example names, one per line, each with its task's first heading.

    \b
    Examples:
      agentctl example list
    """
    for name in example_names():
        print(f"{name}\t{heading(examples_dir() / name / 'task.md')}")


@app.command()
def copy(
    name: Annotated[str, typer.Argument(metavar="NAME", help="An example (see `list`).")],
    folder: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="Where to put it (default: ./NAME).")
    ] = None,
) -> None:
    """Copy example NAME (its task, workspace and scripts; no memory) to DIR, a new folder.

    Exit codes: 0 copied, 2 unknown NAME, DIR exists, or DIR cannot be written.

    \b
    Examples:
      agentctl example copy research
      agentctl example copy research examples/research    where the README runs it
    """
    if name not in example_names():
        raise UsageError(f"example {name}: no such example (examples: {listing(example_names())})")
    target = folder if folder is not None else Path(name)
    if target.exists():
        raise UsageError(f"{target}: already exists (give a new folder)")
    try:
        shutil.copytree(examples_dir() / name, target, ignore=LEFT_BEHIND)
    except OSError as err:
        raise UsageError(f"{target}: cannot write: {err.strerror or err}") from None
    print(f"copied example {name} to {target}; run it: agentctl run {target / 'task.md'} --offline")


def heading(task: Path) -> str:
    """The first Markdown heading below a task's front matter ('' if none)."""
    # The task reader (about 50 modules) only where headings are shown: not for --help or copy.
    from agentctl.agent.task import split_front_matter

    _, body = split_front_matter(task.read_text(encoding="utf-8"), str(task))
    lines = [line[2:].strip() for line in body.splitlines() if line.startswith("# ")]
    return lines[0] if lines else ""
