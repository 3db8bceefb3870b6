"""A session's API exchanges in the recording format `agentctl emulator check` replays.

Pure: a parsed session in, one exchange (a JSON object) per recorded turn out. Each holds the
request as sent (the transcript's `request` record plus the messages it carried, with the
cache breakpoint the run put on the last message, which the history does not keep) and the
message the API answered. What travels as headers or client options (betas, extra headers,
timeouts) is not body: the betas go to `betas`, the rest is dropped, and the whole export
passes through `agentctl.redact`, so no key or auth header can appear in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentctl import __version__
from agentctl.agent.request import betas, cache_control, place_breakpoints
from agentctl.errors import AgentctlError
from agentctl.redact import redact
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.transcript import BATCH_PRICE, Transcript, TurnRecord

ENDPOINT = "/v1/messages"
# Request keys the SDK sends as headers or uses itself: never in the body the server reads.
NOT_BODY = frozenset({"betas", "extra_headers", "extra_query", "extra_body", "timeout"})
RECORDED_BETAS = "the request record's `betas` (what agentctl passed the SDK for anthropic-beta)"
PROFILE_BETAS = "not in the request record (an older transcript): derived from the session profile"


def session_exchanges(session: Transcript) -> list[dict[str, Any]]:
    """One exchange per turn that has a response, in order, with no credential in it."""
    out = [_exchange(session, turn) for turn in session.turns]
    data: list[dict[str, Any]] = json.loads(redact(json.dumps(out, ensure_ascii=False)))
    return data


def _exchange(session: Transcript, turn: TurnRecord) -> dict[str, Any]:
    streamed = turn.pricing != BATCH_PRICE  # a run streams; a Message Batch request cannot
    request = {k: v for k, v in turn.body.items() if k not in NOT_BODY}
    request["messages"] = list(turn.messages)
    request = place_breakpoints(request, _marker(session, turn.body))
    if streamed:
        request["stream"] = True
    sent_betas, betas_source = _betas(session, turn.body)
    how = "streamed" if streamed else "sent inside a Message Batch (replayed as one request)"
    return {
        "source": {
            "recorder": f"agentctl {session.header.agentctl_version or __version__}",
            "session": session.id,
            "turn": turn.turn,
            "segment": turn.segment,  # how many `run --resume` came before this turn
        },
        "kind": (
            "agentctl offline run (the emulator played the API)"
            if session.offline
            else "agentctl run against the Messages API"
        ),
        "complete": True,
        "endpoint": ENDPOINT,
        "betas": sent_betas,
        "betas_source": betas_source,
        "request": request,
        "status": 200,
        "response": turn.response,
        "notes": (
            f"{how}; `response` is the message the API answered (the transcript keeps no "
            f"stream events){_played(session)}"
        ),
    }


def _played(session: Transcript) -> str:
    """For an offline run: the server model its emulator played (what `check` should play)."""
    if not session.offline:
        return ""
    editing = session.header.profile.get("context_editing")
    spec = editing.get("server_model") if isinstance(editing, Mapping) else None
    if not isinstance(spec, str) or not spec:
        return "; the emulator played the server model chosen as usual (calibration, else default)"
    return f"; the emulator played server model {spec}: check with `--server-model {spec}`"


def _marker(session: Transcript, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The cache_control the run put on its breakpoints: as on the recorded last tool or
    system block, else as the session profile sets it (None: caching was off)."""
    for key in ("tools", "system"):
        blocks = body.get(key)
        if isinstance(blocks, list) and blocks and isinstance(blocks[-1], Mapping):
            marker = blocks[-1].get("cache_control")
            if isinstance(marker, Mapping):
                return dict(marker)
    if any(body.get(key) for key in ("tools", "system")):
        return None  # a breakpoint would be on them: caching was off
    try:
        return cache_control(session_profile(session))
    except AgentctlError:
        return None


def _betas(session: Transcript, body: Mapping[str, Any]) -> tuple[list[str], str]:
    recorded = body.get("betas")
    if isinstance(recorded, list):
        return [str(b) for b in recorded], RECORDED_BETAS
    try:
        return betas(session_profile(session)), PROFILE_BETAS
    except AgentctlError:
        return [], "not in the request record and the session profile cannot be read: none"
