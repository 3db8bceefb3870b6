"""Rebuild the request body the server got at a recorded turn, under recorded or other settings.

A recorded request is the body without `messages` (transcript `request` record) plus the
history as it stood then. To replay it under another profile, its cache breakpoints and
`context_management` are replaced by the ones `agentctl run` would send under that profile
(the placement rules of `agentctl.agent.request`), and everything else (model, system,
tools, thinking) stays as recorded: the replay changes settings, never the conversation.

Batched clearing steers on the prompt sizes the recorded responses reported, as the run did;
a replay takes each one before clearing (the reported size plus the tool-use tokens cleared),
since its own settings may clear elsewhere, and subtracts its own clearing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentctl.agent.request import (
    build_context_management,
    cache_control,
    held,
    new_steering,
    place_breakpoints,
)
from agentctl.context import memo
from agentctl.context.batching import Steering
from agentctl.context.cache import strip_cache_control
from agentctl.context.calibration import resolve_server_model
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel, parse_server_model
from agentctl.profile.settings import ContextEditing, Profile
from agentctl.sessions.resume import response_size
from agentctl.sessions.transcript import TurnRecord

# Request keys that travel as headers or client options, never in the body the server reads.
_NOT_BODY = frozenset({"betas", "extra_headers", "extra_query", "extra_body", "timeout"})


@dataclass(frozen=True)
class ReplaySettings:
    """What a replay varies: the profile's context editing and cache settings, and the server
    model the replay plays; nothing else."""

    editing: ContextEditing
    marker: dict[str, Any] | None  # the cache_control breakpoint, None when caching is off
    server: ServerModel = DEFAULT_SERVER_MODEL
    # The rules batched clearing counts tool uses by: those the profile names.
    steering: ServerModel = DEFAULT_SERVER_MODEL

    @classmethod
    def from_profile(cls, profile: Profile, server: ServerModel | None = None) -> ReplaySettings:
        """`server` None: the profile's `context_editing.server_model`, else the calibration
        file, else the default (`context.calibration.resolve_server_model`)."""
        spec = profile.context_editing.server_model
        if server is None:
            server = resolve_server_model(spec, source=f"{profile.source}").model
        steering = parse_server_model(spec) if spec else DEFAULT_SERVER_MODEL
        return cls(profile.context_editing, cache_control(profile), server, steering)

    @property
    def context_management(self) -> dict[str, Any] | None:
        """The field of a first request (batched clearing changes it turn by turn)."""
        return build_context_management(self.editing)

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


def recorded_sizes(turns: Sequence[TurnRecord], factor: float = 1.0) -> dict[int, int]:
    """The prompt sizes `turns` reported before clearing, by the messages each answered, in
    estimator units (divided by the calibration `factor`): what `replay_request` steers on."""
    sizes: dict[int, int] = {}
    for turn in turns:
        size = response_size(turn.body, turn.response, unedited=True)
        if size is not None:
            sizes[len(turn.messages)] = round(size / factor)
    return sizes


def _plain_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded body without what a replay replaces: its cache markers, its
    `context_management` and what travels as headers (once per turn in a replay scope: the
    candidates of `tune` share it; nothing modifies it)."""
    plain = strip_cache_control({k: v for k, v in body.items() if k not in _NOT_BODY})
    plain.pop("context_management", None)
    return plain  # type: ignore[no-any-return]


def replay_request(
    turn: TurnRecord,
    settings: ReplaySettings,
    measured: Mapping[int, int] | None = None,
    steering: Steering | None = None,
    patches: Mapping[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The body the server would have received on that turn under `settings`; `measured`:
    `recorded_sizes` of the turns before it (None: batched clearing steers on estimates);
    `steering`: batched clearing's walk kept from the previous turn of the same replay (with
    the same `measured`), so a turn walks only what it adds (same answer); `patches`:
    messages (by index) the client would have sent otherwise under these settings (the
    save-before-clear notice, `simulate`)."""
    body = dict(memo.remembered("replay-body", turn.body, partial(_plain_body, turn.body)))
    body["messages"] = messages = list(turn.messages[:])  # a view's slice: made at C speed
    for index, message in (patches or {}).items():
        if index < len(messages):
            messages[index] = message
    steering = steering or new_steering(settings.editing)
    cm = build_context_management(
        settings.editing, body, settings.steering, measured, True, steering
    )
    if cm is not None:
        body["context_management"] = cm
    return place_breakpoints(body, settings.marker, held(steering))
