"""Rebuild the request body the server got at a recorded turn, under recorded or other settings.

A recorded request is the body without `messages` (transcript `request` record) plus the
history as it stood then. To replay it under another profile, its cache breakpoints and
`context_management` are replaced by the ones `agentctl run` would send under that profile
(the placement rules of `agentctl.agent.request`), and everything else (model, system,
tools, thinking) stays as recorded: the replay changes settings, never the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentctl.agent.request import cache_control, mark_last_block
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
    marker = settings.marker
    if marker is not None:
        if body.get("tools"):
            body["tools"][-1] = {**body["tools"][-1], "cache_control": dict(marker)}
        if isinstance(body.get("system"), list) and body["system"]:
            body["system"][-1] = {**body["system"][-1], "cache_control": dict(marker)}
    messages = [dict(m) for m in turn.messages]
    if marker is not None and messages:
        messages[-1] = _mark_last_block(messages[-1], marker)
    if settings.context_management is not None:
        body["context_management"] = settings.context_management
    return {**body, "messages": messages}


def _mark_last_block(message: Mapping[str, Any], marker: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `message` with the marker placed as the run loop places it; the content list
    is copied first (`mark_last_block` edits in place, the recorded history must not change)."""
    copy = dict(message)
    if isinstance(copy.get("content"), list):
        copy["content"] = list(copy["content"])
    mark_last_block(copy, dict(marker))
    return copy
