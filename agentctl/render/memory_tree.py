"""Terminal presentation of view results: the model's listing text as a Rich tree (pure).

File names are data written by the model: shown with controls visible, never as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctl.render.safe import safe_text, visible

if TYPE_CHECKING:
    from rich.console import RenderableType


def parse_listing(text: str) -> list[tuple[str, str]]:
    """(size, path) per line of a directory view; the header and any truncation note dropped."""
    rows: list[tuple[str, str]] = []
    for line in text.split("\n")[1:]:
        size, tab, path = line.partition("\t")
        if tab:
            rows.append((size, path))
    return rows


def listing_tree(text: str) -> RenderableType:
    """A Rich Tree of a directory view: names with sizes, directories bold."""
    from rich.text import Text
    from rich.tree import Tree

    rows = parse_listing(text)
    if not rows:
        return safe_text(text)
    top_size, top = rows[0]
    tree = Tree(Text.assemble((visible(top, keep=""), "bold"), (f"  {top_size}", "dim")))
    nodes = {top.rstrip("/"): tree}
    for size, path in rows[1:]:
        parent_key, _, name = path.rstrip("/").rpartition("/")
        parent = nodes.get(parent_key, tree)
        shown = visible(name, keep="") + ("/" if path.endswith("/") else "")
        label = Text.assemble((shown, "bold" if path.endswith("/") else ""), (f"  {size}", "dim"))
        nodes[path.rstrip("/")] = parent.add(label)
    note = text.rsplit("\n", 1)[-1]
    if note.startswith("["):
        tree.add(safe_text(note, "yellow", keep=""))
    return tree
