"""The seam between the run loop and what shows a run: the Renderer protocol, and a fan-out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentctl.types import Event


class Renderer(Protocol):
    """What the run loop feeds: every event in order, then `close()` (also after errors)."""

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


class MultiRenderer:
    """Feeds each event to several renderers; closes all of them even if one close fails."""

    def __init__(self, renderers: Sequence[Renderer]) -> None:
        self._renderers = tuple(renderers)

    def handle(self, event: Event) -> None:
        for renderer in self._renderers:
            renderer.handle(event)

    def close(self) -> None:
        first_error: BaseException | None = None
        for renderer in self._renderers:
            try:
                renderer.close()
            except BaseException as err:  # re-raised below, after closing the rest
                first_error = first_error or err
        if first_error is not None:
            raise first_error
