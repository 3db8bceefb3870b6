"""Seed layouts for a memory root (`agentctl memory init --template NAME`).

`project-log` is the pattern for work that spans sessions: before real work, a progress log, a
feature checklist and a start-up note, so each new session reads where the last one stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentctl.errors import UsageError
from agentctl.memory.history import contents_at

if TYPE_CHECKING:
    from agentctl.memory.store import MemoryStore

PROJECT_LOG = {
    "/memories/progress.md": (
        "# Progress log\n"
        "Newest entry last. Each session adds one: what it did, what it left open, what comes"
        " next.\n"
        "\n"
        "## Sessions\n"
    ),
    "/memories/features.md": (
        "# Feature checklist\n"
        "One line per feature. Tick it ([x]) only once it is tested and working.\n"
        "\n"
    ),
    "/memories/startup.md": (
        "# Start-up note\n"
        "Read this first, then progress.md and features.md.\n"
        "\n"
        "- start: (the script that brings the project up, e.g. ./init.sh)\n"
        "- check: (the command that tests it)\n"
        "- where: (the folders that matter)\n"
    ),
}
TEMPLATES = {"project-log": PROJECT_LOG}


def seed(store: MemoryStore, template: str) -> list[str]:
    """Create the template's files in the store (journaled); the paths created.

    UsageError (nothing written) for an unknown template or a file that exists already.
    """
    files = TEMPLATES.get(template)
    if files is None:
        known = ", ".join(TEMPLATES)
        raise UsageError(f"memory init: no template {template!r} (templates: {known})")
    with store.opened() as fd:
        taken = [path for path in files if contents_at(fd, path)]
    if taken:
        raise UsageError(f"memory init: {taken[0]} exists already; nothing was written")
    for path, text in files.items():
        store.execute({"command": "create", "path": path, "file_text": text})
    return list(files)
