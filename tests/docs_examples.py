"""The examples of README.md and docs/*.md, as a reader meets them: each fenced block that tells
the reader to run something (shell commands, Python), with what the page shows it printing.

A block the suite cannot run here carries a marker on the line before its fence, with the
reason: `<!-- docs-test: skip: needs an API key -->`. Every other example runs in
tests/test_docs_examples.py (from a copy of the checkout) and many in
tests/test_wheel_install.py (from a wheel installed outside it), except there those marked
`<!-- docs-test: checkout: needs tests/recordings/ -->` (parts of a marker are joined by `;`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_MARKER = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")
# A shell line a reader is told to type, in a block without `$ ` prompts (after any
# `NAME=value` environment assignments).
_COMMAND = re.compile(
    r"(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(agentctl|python|pytest|pip|make|jq|printf|echo|export|\.venv/bin/\S+)( |$)"
)
_SHELLS = ("", "sh", "bash", "console", "shell")


@dataclass(frozen=True)
class Command:
    """One command line (continuations joined) and the output lines the page shows for it."""

    line: str
    shown: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    page: str
    lineno: int  # the line of the opening fence
    kind: str  # "shell" or "python"
    text: str
    commands: tuple[Command, ...] = ()
    skip: str | None = None  # the reason given by the marker
    marker: str | None = None  # the marker's whole text (None: no marker)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.lineno}"


@dataclass
class _Parsed:
    examples: list[Example] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)  # markers before a block that is no example


def examples(page: str) -> list[Example]:
    return _parse(page).examples


def stray_markers(page: str) -> list[str]:
    return _parse(page).stray


def _parse(page: str) -> _Parsed:
    text = (ROOT / page).read_text()
    parsed = _Parsed()
    for match in _FENCE.finditer(text):
        lineno = text.count("\n", 0, match.start()) + 1
        marker = _marker_before(text, match.start())
        example = _example(page, lineno, match[1], match[2], marker)
        if example is not None:
            parsed.examples.append(example)
        elif marker is not None:
            parsed.stray.append(f"{page}:{lineno}: {marker}")
    return parsed


def _marker_before(text: str, start: int) -> str | None:
    before = text[:start].rstrip("\n").rsplit("\n", 1)[-1]
    found = _MARKER.fullmatch(before.strip())
    return found[1] if found else None


def _example(page: str, lineno: int, lang: str, body: str, marker: str | None) -> Example | None:
    whole = re.fullmatch(r"skip:\s*(.*)", marker or "")
    skip = whole[1].strip() if whole else None
    if lang == "python":
        return Example(page, lineno, "python", body, skip=skip, marker=marker)
    if lang not in _SHELLS:
        return None
    commands = _commands(body)
    if not commands:
        return None
    return Example(page, lineno, "shell", body, tuple(commands), skip=skip, marker=marker)


def _commands(body: str) -> list[Command]:
    lines = _joined(body.splitlines())
    if any(line.startswith("$ ") for line in lines):
        return _prompted(lines)
    return [Command(line) for line in lines if _COMMAND.match(line) and not _is_output(line)]


def _joined(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def _prompted(lines: list[str]) -> list[Command]:
    commands: list[Command] = []
    for line in lines:
        if line.startswith("$ "):
            commands.append(Command(line[2:].strip()))
        elif commands:
            last = commands[-1]
            commands[-1] = Command(last.line, (*last.shown, line))
    return commands


def _is_output(line: str) -> bool:
    return line.startswith("agentctl:") or line.startswith("agentctl probe:")


def skipped_commands(example: Example) -> dict[int, str]:
    """`skip N: reason` markers: the commands (1-based) of a block not run, with the reason;
    `skip: reason` is the whole block."""
    if example.marker is None:
        return {}
    out: dict[int, str] = {}
    for part in example.marker.split(";"):
        found = re.fullmatch(r"\s*skip\s+([\d, ]+):\s*(.+)", part)
        if found:
            for n in found[1].replace(",", " ").split():
                out[int(n)] = found[2].strip()
    return out


def checkout_only(example: Example) -> str | None:
    """The reason of a `checkout: reason` marker part: the example needs files only a checkout
    has (tests/recordings/), so the wheel-install run leaves it out; None when it has none."""
    for part in (example.marker or "").split(";"):
        found = re.fullmatch(r"\s*checkout:\s*(.+)", part)
        if found:
            return found[1].strip()
    return None


_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
FIGURE = re.compile(r"\$\d+\.\d+|\b\d{1,3}(?:,\d{3})+\b|\b\d+(?:\.\d+)?%")


def line_pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern for the printed one: session ids, home folders (`/home/you/...`,
    `~/...`) and elisions (`...`, `…`) stand for whatever was printed there."""
    text = " ".join(shown.split())
    parts = re.split(r"(\d{8}-\d{6}-[0-9a-f]{6}|/home/you\S*?(?=[\s:,)]|$)|\.\.\.|…)", text)
    out = []
    for n, part in enumerate(parts):
        if n % 2 == 0:
            out.append(re.escape(part))
        elif _ID.fullmatch(part):
            out.append(r"\d{8}-\d{6}-[0-9a-f]{6}")
        elif part.startswith("/home/you"):
            out.append(r"/\S*?")
        else:
            out.append(r".*?")
    return re.compile("".join(out))
