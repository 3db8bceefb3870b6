"""The seam between the run loop and what shows a run: the Renderer protocol, and a fan-out."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Protocol, TextIO, runtime_checkable

from agentctl.errors import ClosedPipeError
from agentctl.types import Event


class Renderer(Protocol):
    """What the run loop feeds: every event in order, then `close()` (also after errors)."""

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Pausable(Protocol):
    """A renderer that holds a live display: paused while the user is asked something."""

    def paused(self) -> AbstractContextManager[None]: ...


class MultiRenderer:
    """Feeds each event to several renderers; closes all of them even if one close fails."""

    def __init__(self, renderers: Sequence[Renderer]) -> None:
        self._renderers = tuple(renderers)

    def handle(self, event: Event) -> None:
        for renderer in self._renderers:
            renderer.handle(event)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Every live display paused for the duration of the block."""
        with ExitStack() as stack:
            for renderer in self._renderers:
                if isinstance(renderer, Pausable):
                    stack.enter_context(renderer.paused())
            yield

    def close(self) -> None:
        first_error: BaseException | None = None
        for renderer in self._renderers:
            try:
                renderer.close()
            except BaseException as err:  # re-raised below, after closing the rest
                first_error = first_error or err
        if first_error is not None:
            raise first_error


def write_or_stop(stream: TextIO, text: str, name: str) -> None:
    """Write and flush `text`; if the reader went away (`agentctl run ... | head`), nobody
    watches the run any more and every further turn costs money: silence the stream and stop
    the run with ClosedPipeError (recorded as interrupted). `name` says which stream it was."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        silence(stream)
        raise ClosedPipeError(f"{name} was closed by its reader; the run stopped") from None


def silence(stream: TextIO) -> None:
    """Point the dead pipe's descriptor at /dev/null, so the flush at exit cannot fail again.

    This is what the Python docs advise for SIGPIPE; file-likes without a descriptor are left.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
