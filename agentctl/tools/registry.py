"""The tools a run offers the model, and the one place a tool call is dispatched and capped."""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from agentctl.errors import ToolError, ToolFailure

# What a cut result ends with, so the model knows it did not see everything.
TRUNCATION_MARKER = "\n[truncated: result cut at {cap} of {total} characters]"
MAX_ERROR_CHARS = 2_000
_SURROGATE = re.compile("[\ud800-\udfff]")
T = TypeVar("T")
Y = TypeVar("Y")
Z = TypeVar("Z")
# A result as a tool gives it: its text, or the tool_result's content blocks.
ToolContent = str | list[dict[str, Any]]


class Tool(Protocol):
    """A client-side tool: its request definition and how to answer one call."""

    # True when the tool cuts its own long results (with a way to read on); the ToolBox then
    # leaves them whole instead of capping them at max_result_chars.
    self_limited: bool

    @property
    def name(self) -> str: ...

    def definition(self) -> dict[str, Any]:
        """The entry of the request's `tools` list."""
        ...

    def call(self, tool_input: Mapping[str, Any]) -> ToolContent:
        """The result text, or the tool_result's content blocks when it carries an image or
        a document (`text`, `image`, `document` blocks, as the API takes them); raises
        ToolError for a failure the model should see."""
        ...


class ToolSource(Protocol):
    """Tools that may change while a run goes (an MCP server's, after it said its list
    changed): looked at again before each request."""

    def current(self) -> Sequence[Tool]: ...


@runtime_checkable
class TracedTool(Protocol):
    """A tool that records which turn and tool_use id each call came from (memory history)."""

    def call_traced(self, tool_input: Mapping[str, Any], *, turn: int, tool_use_id: str) -> str:
        """As `call`, for the model's call `tool_use_id` in turn `turn`."""
        ...


@dataclass(frozen=True)
class ToolOutcome:
    """What one call produced: its text, whether it is an error, and, when the result carries
    images or documents, the tool_result's content blocks."""

    # The result as text, each image or document as one line (`[image image/png, 70 bytes]`):
    # what the transcript's tool_result record holds and the table counts.
    content: str
    is_error: bool
    blocks: tuple[dict[str, Any], ...] = ()

    @property
    def api_content(self) -> ToolContent:
        """The tool_result's `content` as sent: the blocks when there are any, else the text."""
        return [dict(block) for block in self.blocks] if self.blocks else self.content


def sendable(text: str) -> str:
    """`text` with each lone surrogate written out: a byte of a name that is not UTF-8 (as
    Python decodes it) as `\\xNN`, any other as `\\udNNN`. No request, transcript or
    terminal can carry a lone surrogate; the workspace tools read `\\xNN` back as the byte."""
    return text if text.isascii() else _SURROGATE.sub(_written_out, text)


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def drain(run: Generator[Any, None, T]) -> T:
    """What a generator returns, its yields passed over."""
    while True:
        try:
            next(run)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def relay(run: Generator[Y, None, T], each: Callable[[Y], Z]) -> Generator[Z, None, T]:
    """What `run` yields, passed through `each`, and then what it returns."""
    while True:
        try:
            item = next(run)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        yield each(item)


def base64_size(data: str) -> int:
    """Bytes encoded by a base64 string."""
    stripped = data.strip()
    return len(stripped) * 3 // 4 - stripped[-2:].count("=")


def block_line(block: Mapping[str, Any]) -> str:
    """A content block as text: a text block's text, an image or document as one line."""
    kind = str(block.get("type"))
    if kind == "text":
        return str(block.get("text", ""))
    source = block.get("source") or {}
    size = base64_size(str(source.get("data", "")))
    return f"[{kind} {source.get('media_type', '?')}, {size} bytes]"


def cap_blocks(blocks: Sequence[Mapping[str, Any]], cap: int) -> list[dict[str, Any]]:
    """`blocks` with their text sendable and cut at `cap` characters in all, the marker after
    the cut and later text left out (images and documents are held to their own size limit,
    not to this one); cap <= 0: no cap."""
    texts = [sendable(str(b.get("text", ""))) if b.get("type") == "text" else None for b in blocks]
    total = sum(len(text) for text in texts if text is not None)
    left = cap if 0 < cap < total else total  # -1 once cut
    result: list[dict[str, Any]] = []
    for block, text in zip(blocks, texts, strict=True):
        if text is None:
            result.append(dict(block))
        elif len(text) <= left:
            result.append({"type": "text", "text": text})
            left -= len(text)
        elif left >= 0:
            marker = TRUNCATION_MARKER.format(cap=cap, total=total)
            result.append({"type": "text", "text": text[:left] + marker})
            left = -1
    return result


def cap_text(text: str, cap: int) -> str:
    """`text` cut to `cap` characters with a marker saying how much was cut (cap <= 0: no cap)."""
    if cap <= 0 or len(text) <= cap:
        return text
    return text[:cap] + TRUNCATION_MARKER.format(cap=cap, total=len(text))


class ToolBox:
    """The client-side tools of a run plus pass-through server tools (web search, web fetch)."""

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        max_result_chars: int,
        server_tools: Sequence[Mapping[str, Any]] = (),
        sources: Sequence[ToolSource] = (),
    ) -> None:
        self._fixed = list(tools)
        self._sources = list(sources)
        self._tools = self._current()
        self._server_tools = [dict(t) for t in server_tools]
        self.max_result_chars = max_result_chars
        # Calls that failed for a reason that is not the model's (ToolFailure, OSError).
        self.failures = 0

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def _current(self) -> dict[str, Tool]:
        tools = [*self._fixed, *(t for source in self._sources for t in source.current())]
        return {t.name: t for t in tools}

    def definitions(self) -> list[dict[str, Any]]:
        """The request's `tools` list: client tools in registration order (the sources' as
        they are now), then server tools."""
        if self._sources:
            self._tools = self._current()
        return [t.definition() for t in self._tools.values()] + [
            dict(t) for t in self._server_tools
        ]

    def dispatch(
        self, name: str, tool_input: Mapping[str, Any], *, turn: int = 0, tool_use_id: str = ""
    ) -> ToolOutcome:
        """Run one call; every failure becomes an is_error outcome, never an exception.

        `turn` and `tool_use_id` go to a tool that records where its calls came from.
        """
        return drain(self.run(name, tool_input, turn=turn, tool_use_id=tool_use_id))

    def run(
        self, name: str, tool_input: Mapping[str, Any], *, turn: int = 0, tool_use_id: str = ""
    ) -> Generator[str, None, ToolOutcome]:
        """`dispatch`, yielding the tool's progress messages while it runs (a tool with a
        `run` generator: an MCP tool whose server sends progress notifications)."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolOutcome(f"Error: unknown tool '{name}'; available tools: {known}", True)
        try:
            cap = 0 if tool.self_limited else self.max_result_chars
            running = getattr(tool, "run", None)
            result: ToolContent
            if running is not None:
                result = yield from running(tool_input)
            elif isinstance(tool, TracedTool) and tool_use_id:
                result = tool.call_traced(tool_input, turn=turn, tool_use_id=tool_use_id)
            else:
                result = tool.call(tool_input)
            if isinstance(result, str):
                return ToolOutcome(cap_text(sendable(result), cap), False)
            blocks = cap_blocks(result, cap)
            return ToolOutcome("\n".join(map(block_line, blocks)), False, tuple(blocks))
        except ToolError as err:
            self.failures += isinstance(err, ToolFailure)
            return ToolOutcome(cap_text(str(err), MAX_ERROR_CHARS), True)
        except OSError as err:
            self.failures += 1
            # strerror only: the full message would leak host paths to the model.
            return ToolOutcome(f"Error: {err.strerror or type(err).__name__}", True)
        except Exception as err:  # a tool bug must not end the run; the model sees what broke
            return ToolOutcome(cap_text(f"Error: {err!r}", MAX_ERROR_CHARS), True)
