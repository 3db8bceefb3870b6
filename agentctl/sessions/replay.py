"""Rebuild the request body the server got at a recorded turn, under recorded or other settings.

A recorded request is the body without `messages` (transcript `request` record) plus the
history as it stood then. To replay it under another profile, its cache breakpoints and
`context_management` are replaced by the ones `agentctl run` would send under that profile
(the placement rules of `agentctl.agent.request`), and everything else (model, system,
tools, thinking) stays as recorded: the replay changes settings, never the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentctl.agent.request import cache_control, place_breakpoints
from agentctl.context.cache import strip_cache_control
from agentctl.context.edits import build_context_management
from agentctl.context.engine import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.profile.settings import Profile
from agentctl.sessions.catalog import TurnRecord

# Request keys that travel as headers or client options, never in the body the server reads.
_NOT_BODY = frozenset({"betas", "extra_headers", "extra_query", "extra_body", "timeout"})


@dataclass(frozen=True)
class ReplaySettings:
    """What a replay varies: the profile's context editing and cache settings, nothing else."""

    context_management: dict[str, Any] | None
    marker: dict[str, Any] | None  # the cache_control breakpoint, None when caching is off
    # The text a cleared tool result becomes (a profile setting: the server's is not public).
    placeholder: str = DEFAULT_CLEARED_RESULT_PLACEHOLDER

    @classmethod
    def from_profile(cls, profile: Profile) -> ReplaySettings:
        editing = profile.context_editing
        return cls(build_context_management(editing), cache_control(profile), editing.placeholder)


def replay_request(turn: TurnRecord, settings: ReplaySettings) -> dict[str, Any]:
    """The body the server would have received on that turn under `settings`."""
    body = strip_cache_control({k: v for k, v in turn.body.items() if k not in _NOT_BODY})
    body.pop("context_management", None)
    if settings.context_management is not None:
        body["context_management"] = settings.context_management
    return place_breakpoints({**body, "messages": list(turn.messages)}, settings.marker)
