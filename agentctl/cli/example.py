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
  agentctl example copy --all                    ./examples, as the docs name them
""",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# A task's first line as its description, cut to fit `list` in 80 columns (16 + tab + 56).
SHORT = 56
# What a run of an example leaves behind: not part of a copy.
IGNORED = shutil.ignore_patterns("memory", "__pycache__", "*.pyc")


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="example")


@app.command(name="list")
def list_() -> None:
    """Print the example names, one per line, each with its task's first heading (or its
    first line, cut to fit 80 columns).

    \b
    Examples:
      agentctl example list
    """
    for name in example_names():
        print(f"{name}\t{heading(examples_dir() / name / 'task.md')}")


@app.command()
def copy(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="An example (see `list`).")
    ] = None,
    folder: Annotated[
        Path | None, typer.Argument(metavar="DIR", help="Where to put it (default: ./NAME).")
    ] = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Copy every example, emulator scripts too, to DIR (default: ./examples): "
            "the folder the docs' commands name, as in a checkout.",
        ),
    ] = False,
) -> None:
    """Copy example NAME (its task, workspace and scripts; no memory) to DIR, a new folder;
    with --all, every example to DIR/NAME.

    Exit codes: 0 copied, 2 unknown NAME, DIR exists, or DIR cannot be written.

    \b
    Examples:
      agentctl example copy research
      agentctl example copy research examples/research    where the README runs it
      agentctl example copy --all                         ./examples/research, ...
    """
    if every:
        if folder is not None:
            raise UsageError("--all takes one folder (DIR), not an example name")
        target = Path(name) if name is not None else Path("examples")
        _copy_tree(examples_dir(), target)
        print(f"copied every example to {target}: {listing(sorted(_shipped(target)))}")
        return
    if name is None:
        raise UsageError(f"give an example NAME or --all (examples: {listing(example_names())})")
    if name not in example_names():
        raise UsageError(f"example {name}: no such example (examples: {listing(example_names())})")
    target = folder if folder is not None else Path(name)
    _copy_tree(examples_dir() / name, target)
    print(f"copied example {name} to {target}; run it: agentctl run {target / 'task.md'} --offline")


def _copy_tree(source: Path, target: Path) -> None:
    """`source` copied to `target`, a new folder, without what runs left behind; exit 2 else."""
    if target.exists():
        raise UsageError(f"{target}: already exists (give a new folder)")
    try:
        shutil.copytree(source, target, ignore=IGNORED)
    except OSError as err:
        raise UsageError(f"{target}: cannot write: {err.strerror or err}") from None


def _shipped(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.is_dir()]


def heading(task: Path) -> str:
    """The first Markdown heading below a task's front matter, else its first line."""
    # The task reader (about 50 modules) only where headings are shown: not for --help or copy.
    from agentctl.agent.task import split_front_matter

    _, body = split_front_matter(task.read_text(encoding="utf-8"), str(task))
    lines = [line[2:].strip() for line in body.splitlines() if line.startswith("# ")]
    first = [short(line.strip()) for line in body.splitlines() if line.strip()]
    return (lines or first or [""])[0]


def short(line: str, width: int = SHORT) -> str:
    """`line` cut at a word to `width` characters, with an ellipsis when cut."""
    if len(line) <= width:
        return line
    return line[: width - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
