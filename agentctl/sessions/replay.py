"""Rebuild the request body the server got at a recorded turn, under recorded or other settings.

A recorded request is the body without `messages` (transcript `request` record) plus the
history as it stood then. To replay it under another profile, its cache breakpoints and
`context_management` are replaced by the ones `agentctl run` would send under that profile
(the placement rules of `agentctl.agent.request`), and everything else (model, system,
tools, thinking) stays as recorded: the replay changes settings, never the conversation.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from agentctl.agent.request import cache_control, place_breakpoints
from agentctl.context.cache import strip_cache_control
from agentctl.context.edits import ContextEditing, build_context_management
from agentctl.context.engine import TriggerBasis
from agentctl.profile.settings import Profile
from agentctl.sessions.catalog import TurnRecord

# Request keys that travel as headers or client options, never in the body the server reads.
_NOT_BODY = frozenset({"betas", "extra_headers", "extra_query", "extra_body", "timeout"})


@dataclass(frozen=True)
class ReplaySettings:
    """What a replay varies: the profile's context editing and cache settings, nothing else."""

    editing: ContextEditing
    marker: dict[str, Any] | None  # the cache_control breakpoint, None when caching is off

    @classmethod
    def from_profile(cls, profile: Profile) -> ReplaySettings:
        return cls(profile.context_editing, cache_control(profile))

    @property
    def context_management(self) -> dict[str, Any] | None:
        """The field of a first request (batched clearing changes it turn by turn)."""
        return build_context_management(self.editing)

    @property
    def placeholder(self) -> str:
        """The text a cleared tool result becomes (the server's is not public)."""
        return self.editing.placeholder

    @property
    def trigger_basis(self) -> TriggerBasis:
        return self.editing.trigger_basis

    def scaled(self, factor: float) -> ReplaySettings:
        """Token thresholds in estimator units (divided by the calibration factor)."""
        if factor == 1.0:
            return self
        tu = self.editing.tool_uses
        tu = dataclasses.replace(
            tu,
            trigger=tu.trigger if tu.trigger_kind == "tool_uses" else round(tu.trigger / factor),
            low_water=round(tu.low_water / factor),
            clear_at_least=round(tu.clear_at_least / factor),
        )
        squeeze = self.editing.compaction
        squeeze = dataclasses.replace(squeeze, trigger=round(squeeze.trigger / factor))
        editing = dataclasses.replace(self.editing, tool_uses=tu, compaction=squeeze)
        return dataclasses.replace(self, editing=editing)


def replay_request(turn: TurnRecord, settings: ReplaySettings) -> dict[str, Any]:
    """The body the server would have received on that turn under `settings`."""
    body = strip_cache_control({k: v for k, v in turn.body.items() if k not in _NOT_BODY})
    body.pop("context_management", None)
    body["messages"] = list(turn.messages)
    cm = build_context_management(settings.editing, body)
    if cm is not None:
        body["context_management"] = cm
    return place_breakpoints(body, settings.marker)
