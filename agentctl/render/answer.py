"""The final answer on stdout: rendered Markdown for a person, the raw text for a pipe."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console, RenderableType

from agentctl.render.format import color_system, isatty
from agentctl.render.safe import visible


def render_answer(
    text: str, stdout: TextIO, *, is_tty: bool | None = None, structured: bool = False
) -> None:
    """Print the model's final answer; piped output is exactly the text plus one newline.

    On a terminal the answer is Markdown with its control characters made visible, and its
    links shown as `text (url)`, never as live hyperlinks (the model chose the target); a
    `structured` answer (JSON) is shown as a JSON code block.
    """
    tty = isatty(stdout) if is_tty is None else is_tty
    if not tty:
        body = text.rstrip("\n")
        stdout.write(f"{body}\n" if body else "")
        stdout.flush()
        return
    console = Console(file=stdout, force_terminal=True, color_system=color_system())
    # The summary (stderr) ends just above on the same terminal: mark where the answer starts.
    console.rule("answer", style="dim", characters="─")
    shown = f"```json\n{text.strip()}\n```" if structured else text
    console.print(typed_markdown(visible(shown)))


def typed_markdown(text: str) -> RenderableType:
    """Markdown with HTML read as text: `Vec<u8>` and `<built-in>` are shown as typed (Rich's
    parser takes them for HTML tags and drops them); links are shown as `text (url)`."""
    # markdown-it and Rich's Markdown are only needed on a terminal.
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    rendered = Markdown("", hyperlinks=False)
    parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    rendered.markup, rendered.parsed = text, parser.parse(text)
    return rendered
