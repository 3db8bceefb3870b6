"""The offline web behind the emulator's web_search and web_fetch: pages from a folder or JSON.

A folder: every `*.md`, `*.txt` or `*.html` file is a page; its URL is `https://` + its path
below the folder (`web/docs.example.com/guide.md` -> `https://docs.example.com/guide.md`), its
title the first line (without leading `#`). A folder is indexed (names and sizes) when loaded
and each page is read when a search or fetch asks for it, so its size never decides the
memory a run takes; a page holds at most MAX_PAGE_BYTES. A JSON file: `{"pages": [{"url",
"title", "text", "page_age"?}], "code": {"<code>": {"stdout", "stderr", "return_code"}}}`;
`code` answers code_execution calls with exactly that code.
Without either, a tiny built-in corpus serves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentctl.errors import ConfigError

PAGE_SUFFIXES = (".md", ".txt", ".html")
MAX_PAGE_BYTES = 1_000_000  # a corpus is test data: larger files are refused, not cut
MAX_PAGES = 10_000


@dataclass(frozen=True)
class Page:
    """One page of the corpus."""

    url: str
    title: str
    text: str
    page_age: str | None = None

    @property
    def domain(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()


@dataclass(frozen=True)
class CodeRun:
    """The scripted outcome of one code_execution call."""

    stdout: str = ""
    stderr: str = ""
    return_code: int = 0


@dataclass(frozen=True)
class Corpus:
    """Pages by URL and scripted code runs; `source` names it in messages."""

    pages: Mapping[str, Page] = field(default_factory=dict)
    code: dict[str, CodeRun] = field(default_factory=dict)
    source: str = "<built-in>"

    def search(self, query: str, limit: int, keep: Callable[[Page], bool] = bool) -> list[Page]:
        """Pages `keep` lets through sharing words with the query, most shared words first,
        then by URL. One page is held at a time while scoring (a folder's are read in turn)."""
        words = set(_words(query))
        hits: list[tuple[int, str]] = []
        for url in self.pages:
            page = self.pages[url]
            score = len(words & set(_words(f"{page.title} {page.text}"))) if keep(page) else 0
            if score > 0:
                hits.append((score, url))
        hits.sort(key=lambda hit: (-hit[0], hit[1]))
        return [self.pages[url] for _, url in hits[:limit]]


class FolderPages(Mapping[str, Page]):
    """A folder's pages by URL: the index holds paths only; a page is read when looked up."""

    def __init__(self, folder: Path) -> None:
        self._paths: dict[str, Path] = {}
        for path in sorted(folder.rglob("*")):
            if path.suffix not in PAGE_SUFFIXES or not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size > MAX_PAGE_BYTES:
                raise ConfigError(f"web corpus {path}: larger than {MAX_PAGE_BYTES} bytes")
            if len(self._paths) >= MAX_PAGES:
                raise ConfigError(f"web corpus {folder}: more than {MAX_PAGES} pages")
            self._paths["https://" + path.relative_to(folder).as_posix()] = path

    def __getitem__(self, url: str) -> Page:
        path = self._paths[url]
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_PAGE_BYTES)  # a file grown since it was indexed is cut
        except OSError:
            data = b""  # gone or unreadable since it was indexed: an empty page
        text = data.decode("utf-8", errors="replace")
        title = (text.strip().split("\n", 1)[0].lstrip("# ").strip() or path.name)[:200]
        return Page(url, title, text)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]{3,}", text.lower())


def load_corpus(path: Path | None) -> Corpus:
    """The corpus at `path` (folder or JSON file), or the built-in one for None."""
    if path is None:
        return builtin_corpus()
    if path.is_dir():
        return _from_folder(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"web corpus {path}: cannot read: {err.strerror or err}") from err
    except ValueError as err:
        raise ConfigError(f"web corpus {path}: not valid JSON: {err}") from err
    return corpus_from_json(data, str(path))


def _from_folder(folder: Path) -> Corpus:
    return Corpus(FolderPages(folder), {}, str(folder))


def corpus_from_json(data: Any, source: str) -> Corpus:
    """A corpus from the JSON form; ConfigError naming the source and the bad key."""
    if not isinstance(data, dict) or not isinstance(data.get("pages", []), list):
        raise ConfigError(f"web corpus {source}: pages: expected a list of pages")
    pages = {}
    for index, item in enumerate(data.get("pages", [])):
        page = _page(item, f"web corpus {source}: pages[{index}]")
        pages[page.url] = page
    code = data.get("code", {})
    if not isinstance(code, dict):
        raise ConfigError(f"web corpus {source}: code: expected a table of code -> result")
    runs = {str(k): _code_run(v, f"web corpus {source}: code") for k, v in code.items()}
    return Corpus(pages, runs, source)


def _page(item: Any, where: str) -> Page:
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: expected an object")
    for key in ("url", "title", "text"):
        if not isinstance(item.get(key), str):
            raise ConfigError(f"{where}.{key}: expected a string")
    if not item["url"].startswith(("https://", "http://")):
        raise ConfigError(f"{where}.url: expected an http(s) URL, got {item['url']!r}")
    age = item.get("page_age")
    if age is not None and not isinstance(age, str):
        raise ConfigError(f"{where}.page_age: expected a string")
    return Page(item["url"], item["title"], item["text"], age)


def _code_run(value: Any, where: str) -> CodeRun:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: each result must be an object")
    code = value.get("return_code", 0)
    if not isinstance(code, int) or isinstance(code, bool):
        raise ConfigError(f"{where}: return_code must be an integer")
    return CodeRun(str(value.get("stdout", "")), str(value.get("stderr", "")), code)


def builtin_corpus() -> Corpus:
    """Three short pages, enough to try web_search and web_fetch offline."""
    pages = [
        Page(
            "https://docs.example.com/context-editing.md",
            "Context editing",
            "Context editing clears old tool results once the prompt passes a trigger.\n"
            "The most recent tool uses are kept; cleared results are replaced by a placeholder.",
        ),
        Page(
            "https://docs.example.com/prompt-caching.md",
            "Prompt caching",
            "Prompt caching stores a prompt prefix; reads cost a tenth of the input price.\n"
            "Clearing a tool result invalidates the cache from that point on.",
        ),
        Page(
            "https://blog.example.org/memory-tool.md",
            "The memory tool",
            "The memory tool lets the model keep notes in a /memories directory across sessions.",
        ),
    ]
    return Corpus({p.url: p for p in pages}, {}, "<built-in>")
