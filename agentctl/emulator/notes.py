"""The default policy's notes file: its name, its format, and reading it back from views.

Format (ours):
    # Notes for: <first line of the task>
    Plan: a.py | b.py | ... (10 paths per Plan line)
    Sampled: 416 files listed (only for a workspace too large to read whole)

    ## Files
    - a.py: fact | fact | fact
    - big.txt (from line 2001): fact
    (end of notes)
"""

from __future__ import annotations

import re

NOTES_END = "(end of notes)"
CHUNK_MARK = " (from line "
PLAN_PREFIX = "Plan: "
SAMPLED_PREFIX = "Sampled: "
PLAN_PER_LINE = 10  # short lines: a memory view truncates long files, and cuts long lines
_STOPWORD_TEXT = """
that this with from have what which when where will would your their there these those
them then than into about each every other some such only also just more most very
file files task please make sure list should could does done using used
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def keywords(task: str) -> list[str]:
    """Words of 4+ letters of the task, lowercased, stopwords removed, in first-seen order."""
    words = (w.lower() for w in re.findall(r"[A-Za-z]{4,}", task))
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS))


def notes_path(task: str) -> str:
    """`/memories/<slug>-<shorthash>.md`: the same task always finds the same notes."""
    slug = "-".join(keywords(task)[:3]) or "task"
    import hashlib  # here: its OpenSSL start-up is paid only by a task that takes notes

    digest = hashlib.sha256(task.strip().encode()).hexdigest()[:8]
    return f"/memories/{slug[:40]}-{digest}.md"


def notes_text(
    task: str, files: list[str] | None, line: str | None, *, listed: int | None = None
) -> str:
    """A new notes file: header, the plan (`listed`: how many files the sampled workspace
    listed), maybe a first note, the end marker."""
    first = task.strip().split("\n")[0][:100]
    paths = files or []
    plan = [
        PLAN_PREFIX + " | ".join(paths[i : i + PLAN_PER_LINE])
        for i in range(0, len(paths), PLAN_PER_LINE)
    ] or [PLAN_PREFIX + "(no files)"]
    if listed is not None:
        plan.append(f"{SAMPLED_PREFIX}{listed} files listed")
    body = f"{line}\n" if line else ""
    return f"# Notes for: {first}\n" + "\n".join(plan) + f"\n\n## Files\n{body}{NOTES_END}\n"


def plan_files(notes: str | None) -> list[str] | None:
    """The workspace listing as saved in the notes' `Plan:` lines, None if there are none."""
    lines = [line for line in (notes or "").split("\n") if line.startswith(PLAN_PREFIX)]
    if not lines:
        return None
    parts = (p.strip() for line in lines for p in line[len(PLAN_PREFIX) :].split(" | "))
    return [p for p in parts if p and p != "(no files)"]


def sampled_note(notes: str | None) -> str | None:
    """The notes' `Sampled:` line, None if the plan is the whole workspace."""
    found = [line for line in (notes or "").split("\n") if line.startswith(SAMPLED_PREFIX)]
    return found[0] if found else None


def recorded_files(notes: str) -> dict[str, str]:
    """`- key: facts` lines of a notes text -> {key: facts} (key = path or chunk key)."""
    found: dict[str, str] = {}
    for line in notes.split("\n"):
        if line.startswith("- ") and ": " in line:
            key, _, facts = line[2:].partition(": ")
            found[key] = facts
    return found


def chunk_key(path: str, offset: int) -> str:
    """How the notes name a read: the path, plus the first line for a later chunk."""
    return path if offset <= 1 else f"{path}{CHUNK_MARK}{offset})"


def note_path(key: str) -> str:
    """The file a notes key is about (`a.py (from line 401)` -> `a.py`)."""
    return key.split(CHUNK_MARK, 1)[0]


def numbered(text: str) -> list[tuple[int, str]]:
    """(line number, text) of a numbered view (`{n:>6}\\t{line}`); other lines dropped."""
    lines = []
    for line in text.split("\n"):
        number, tab, rest = line.partition("\t")
        if tab and number.strip().isdigit():
            lines.append((int(number), rest))
    return lines


def unnumber(text: str) -> list[str]:
    """The text of a numbered view's lines."""
    return [line for _, line in numbered(text)]


def next_page(text: str) -> int | None:
    """The line a truncated memory view asks to continue from (`view_range [N, -1]`)."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    if not last.startswith("[Output truncated"):
        return None
    found = re.search(r"view_range \[(\d+), -1\]", last)
    return int(found.group(1)) if found else None
