"""Compare a recorded API response with the emulator's answer to the same request, on what
the server decides (not on what a model writes). Pure: recording + response in, findings out.

Compared: the status; `context_management` (present or not, edit types, counts, cleared
tokens); `usage` (which token fields are present, which of input / cache read / cache write /
5m / 1h are zero, the figures within a tolerance because the emulator's token counts are an
estimate, and `iterations`: kinds, order and the same per iteration); content block types
of the server's own blocks (compaction) and the key sets of every block type both sides
hold; the stop reason when the server decides it; for streams the event order (runs of
deltas as one) and the usage `message_start` carries. Not compared: text, output tokens,
metadata fields (`service_tier`, `inference_geo`, `server_tool_use`, ids), and which
blocks a model chose to write.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentctl.context.tokens import estimate_block_tokens

Json = dict[str, Any]
TOLERANCE = 0.15  # relative error allowed on a token figure
SLACK = 10  # ... or this many tokens, whichever is larger (small prompts)
TOKEN_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
USAGE_FIELDS = (*TOKEN_FIELDS, "output_tokens", "cache_creation", "iterations")
TTL_FIELDS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
# Stop reasons the server decides; the others (end_turn, tool_use, stop_sequence, refusal)
# are the model's and compared only against each other's kind.
SERVER_STOPS = frozenset({"compaction", "pause_turn", "model_context_window_exceeded"})


@dataclass(frozen=True)
class Finding:
    """One comparison: `check` names it (a path such as `usage.iterations.0.input_tokens`)."""

    check: str
    ok: bool
    recorded: Any = None
    emulator: Any = None
    note: str = ""


@dataclass
class Exchange:
    """The outcome for one recording: findings, or the reason it was skipped."""

    name: str
    findings: list[Finding] = field(default_factory=list)
    skipped: str = ""

    @property
    def matches(self) -> bool:
        return not self.skipped and all(f.ok for f in self.findings)


class RecordingError(ValueError):
    """A file that is not a recording (the CLI exits 2)."""


def parse_recording(text: str, name: str) -> Json:
    """A recording's JSON, checked for the fields a replay needs."""
    recording = _loads(text, name)
    if not isinstance(recording, dict):
        raise RecordingError(f"{name}: a recording is a JSON object")
    return _checked(recording, name)


def parse_recordings(text: str, name: str) -> list[tuple[str, Json]]:
    """A file of one recording (an object) or several (an array, as `agentctl sessions export
    --exchanges` writes): (name, recording) pairs, an array's named `FILE[i]` from 0."""
    data = _loads(text, name)
    if isinstance(data, dict):
        return [(name, _checked(data, name))]
    if not isinstance(data, list) or not data:
        raise RecordingError(f"{name}: a recording is a JSON object (or a non-empty array of them)")
    out = []
    for i, item in enumerate(data):
        where = f"{name}[{i}]"
        if not isinstance(item, dict):
            raise RecordingError(f"{where}: a recording is a JSON object")
        out.append((where, _checked(item, where)))
    return out


def _loads(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordingError(f"{name}: not JSON ({err.msg}, line {err.lineno})") from None


def _checked(recording: Json, name: str) -> Json:
    if recording.get("complete") is True:
        for key in ("endpoint", "request", "status"):
            if key not in recording:
                raise RecordingError(f"{name}: {key}: missing")
        if not isinstance(recording["request"], dict):
            raise RecordingError(f"{name}: request: must be an object")
        if "response" not in recording and "response_events" not in recording:
            raise RecordingError(f"{name}: response: missing")
    return recording


def skip_reason(recording: Mapping[str, Any]) -> str:
    """Why a recording cannot be replayed ("" when it can)."""
    if recording.get("complete") is not True:
        why = recording.get("why_partial") or "the request is not recorded"
        return f"partial recording ({why}): nothing to replay"
    return ""


def recorded_events(recording: Mapping[str, Any]) -> list[tuple[str, Json]] | None:
    """A streamed recording's events as (name, data), or None for a plain one."""
    events = recording.get("response_events")
    if not isinstance(events, list):
        return None
    return [(str(e["event"]), dict(e["data"])) for e in events]


def parse_sse(text: str) -> list[tuple[str, Json]]:
    """SSE text -> (event, data) pairs."""
    out: list[tuple[str, Json]] = []
    for frame in text.split("\n\n"):
        lines = frame.strip().splitlines()
        name = next((ln[6:].strip() for ln in lines if ln.startswith("event:")), "")
        data = "".join(ln[5:].strip() for ln in lines if ln.startswith("data:"))
        if name and data:
            out.append((name, json.loads(data)))
    return out


def message_from_events(events: Sequence[tuple[str, Json]]) -> Json:
    """The message a stream adds up to (what the SDK's final message holds)."""
    message: Json = {"content": []}
    for _, event in events:
        kind = event.get("type")
        if kind == "message_start":
            message.update(event["message"], content=[])
        elif kind == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            _apply_delta(message["content"][-1], event["delta"])
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message.get("usage", {}), **event["usage"]}
            if "context_management" in event:
                message["context_management"] = event["context_management"]
    return message


def _apply_delta(block: Json, delta: Mapping[str, Any]) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "compaction_delta":
        block["content"] = delta.get("content")
    elif kind == "input_json_delta":
        block["_json"] = block.get("_json", "") + delta["partial_json"]
        try:
            block["input"] = json.loads(block["_json"])
        except json.JSONDecodeError:
            return
        del block["_json"]


def compare(
    recording: Mapping[str, Any],
    status: int,
    body: Any,
    events: Sequence[tuple[str, Json]] | None = None,
    tolerance: float = TOLERANCE,
) -> list[Finding]:
    """Findings for one exchange: the emulator answered `status` with `body` (a stream: its
    `events`, `body` then being ignored)."""
    out = [Finding("status", status == recording["status"], recording["status"], status)]
    recorded_stream = recorded_events(recording)
    if recorded_stream is not None and events is not None:
        out += _compare_stream(recorded_stream, events, tolerance)
        recorded: Any = message_from_events(recorded_stream)
        got: Any = message_from_events(events)
    elif events is not None:  # a streamed request recorded as the message it added up to
        recorded, got = recording.get("response"), message_from_events(events)
    else:
        recorded, got = recording.get("response"), body
    if not out[0].ok or not isinstance(recorded, dict) or not isinstance(got, dict):
        return out
    if str(recording.get("endpoint", "")).endswith("count_tokens"):
        return out + _compare_count(recorded, got, tolerance)
    if recorded.get("type") == "error":
        return [*out, _same("error.type", _error_type(recorded), _error_type(got))]
    return out + _compare_message(recorded, got, tolerance)


def _error_type(body: Mapping[str, Any]) -> Any:
    error = body.get("error")
    return error.get("type") if isinstance(error, Mapping) else None


def _same(check: str, recorded: Any, emulator: Any, note: str = "") -> Finding:
    return Finding(check, recorded == emulator, recorded, emulator, note)


def _close(check: str, recorded: Any, emulator: Any, tolerance: float) -> Finding:
    """A token figure: zero on both sides or neither, and within the tolerance."""
    if not isinstance(recorded, int) or not isinstance(emulator, int):
        return _same(check, recorded, emulator)
    if (recorded == 0) != (emulator == 0):
        return Finding(check, False, recorded, emulator, "zero on one side only")
    room = max(SLACK, tolerance * recorded)
    ok = abs(emulator - recorded) <= room
    note = f"{(emulator - recorded) / recorded:+.1%}" if recorded else ""
    return Finding(check, ok, recorded, emulator, note)


def _compare_count(recorded: Json, got: Json, tolerance: float) -> list[Finding]:
    out = [_close("input_tokens", recorded.get("input_tokens"), got.get("input_tokens"), tolerance)]
    out.append(
        _same("context_management", "context_management" in recorded, "context_management" in got)
    )
    return out


def _compare_message(recorded: Json, got: Json, tolerance: float) -> list[Finding]:
    out = [_stop_reason(recorded.get("stop_reason"), got.get("stop_reason"))]
    out += _compare_edits(recorded.get("context_management"), got.get("context_management"))
    out += _compare_blocks(recorded.get("content") or [], got.get("content") or [])
    summaries = (_summary_tokens(recorded), _summary_tokens(got))
    out += _compare_usage(recorded.get("usage") or {}, got.get("usage") or {}, summaries, tolerance)
    return out


def _stop_reason(recorded: Any, emulator: Any) -> Finding:
    if recorded in SERVER_STOPS or emulator in SERVER_STOPS:
        return _same("stop_reason", recorded, emulator)
    return Finding("stop_reason", True, recorded, emulator, "the model's choice: not compared")


def _compare_edits(recorded: Any, got: Any) -> list[Finding]:
    present = _same("context_management", recorded is not None, got is not None, "present")
    if not present.ok or not isinstance(recorded, Mapping) or not isinstance(got, Mapping):
        return [present]
    mine, theirs = got.get("applied_edits"), recorded.get("applied_edits")
    if not isinstance(theirs, list) or not isinstance(mine, list):
        return [present, _same("context_management.applied_edits", theirs, mine)]
    out = [
        present,
        _same(
            "applied_edits.types", [e.get("type") for e in theirs], [e.get("type") for e in mine]
        ),
    ]
    for i, (a, b) in enumerate(zip(theirs, mine, strict=False)):
        for key in ("cleared_tool_uses", "cleared_thinking_turns"):
            if key in a or key in b:
                out.append(_same(f"applied_edits.{i}.{key}", a.get(key), b.get(key)))
        out.append(
            _close(
                f"applied_edits.{i}.cleared_input_tokens",
                a.get("cleared_input_tokens"),
                b.get("cleared_input_tokens"),
                TOLERANCE,
            )
        )
    return out


def _compare_blocks(recorded: list[Any], got: list[Any]) -> list[Finding]:
    """The server's blocks (compaction) by position; every block type both sides hold by its
    key set (a model may write other blocks: their presence is not compared)."""
    server = [b.get("type") for b in recorded if _is_server_block(b)]
    mine = [b.get("type") for b in got if _is_server_block(b)]
    out = [_same("content.server_blocks", server, mine)]
    if server and mine:
        first = _same(
            "content.0.type",
            recorded[0].get("type"),
            got[0].get("type"),
            "the compaction block opens the reply",
        )
        out.append(first)
    keys_recorded = _key_sets(recorded)
    keys_got = _key_sets(got)
    for kind in sorted(set(keys_recorded) & set(keys_got)):
        out.append(_same(f"content.{kind}.keys", keys_recorded[kind], keys_got[kind]))
    return out


def _is_server_block(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "compaction"


def _key_sets(blocks: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for block in blocks:
        if isinstance(block, Mapping):
            out.setdefault(
                str(block.get("type")), sorted(k for k in block if not k.startswith("_"))
            )
    return out


def _summary_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of a compaction block this reply wrote: the message iteration after it
    reads what the model wrote, so each side's own summary is taken out before comparing."""
    blocks = message.get("content") or []
    first = blocks[0] if blocks and isinstance(blocks[0], Mapping) else {}
    return estimate_block_tokens(first) if first.get("type") == "compaction" else 0


def _compare_usage(
    recorded: Mapping[str, Any],
    got: Mapping[str, Any],
    summaries: tuple[int, int],
    tolerance: float,
) -> list[Finding]:
    present = [k for k in USAGE_FIELDS if k in recorded]
    out = [_same("usage.fields", present, [k for k in USAGE_FIELDS if k in got])]
    out += _compare_split("usage", recorded, got, summaries, tolerance)
    theirs, mine = recorded.get("iterations"), got.get("iterations")
    if isinstance(theirs, list) and isinstance(mine, list):
        kinds = _same(
            "usage.iterations.types", [i.get("type") for i in theirs], [i.get("type") for i in mine]
        )
        out.append(kinds)
        for n, (a, b) in enumerate(zip(theirs, mine, strict=False)):
            after = summaries if a.get("type") == "message" else (0, 0)
            out += _compare_split(f"usage.iterations.{n}", a, b, after, tolerance)
    return out


def _compare_split(
    where: str,
    recorded: Mapping[str, Any],
    got: Mapping[str, Any],
    summaries: tuple[int, int],
    tolerance: float,
) -> list[Finding]:
    out = []
    for key in TOKEN_FIELDS:
        if key not in recorded:
            continue
        a, b = recorded.get(key), got.get(key)
        if key == "input_tokens" and isinstance(a, int) and isinstance(b, int) and any(summaries):
            a, b = a - summaries[0], b - summaries[1]  # without each side's own summary
            found = _close(f"{where}.{key}", a, b, tolerance)
            out.append(Finding(found.check, found.ok, a, b, "each side's summary taken out"))
            continue
        out.append(_close(f"{where}.{key}", a, b, tolerance))
    creation = recorded.get("cache_creation")
    if isinstance(creation, Mapping):
        split = got.get("cache_creation")
        theirs = split if isinstance(split, Mapping) else {}
        for key in TTL_FIELDS:
            out.append(
                _close(
                    f"{where}.cache_creation.{key}", creation.get(key), theirs.get(key), tolerance
                )
            )
    return out


def _compare_stream(
    recorded: Sequence[tuple[str, Json]], got: Sequence[tuple[str, Json]], tolerance: float
) -> list[Finding]:
    out = [
        _same("stream.events", _event_order(recorded), _event_order(got), "runs of deltas as one")
    ]
    starts = [_start_usage(recorded), _start_usage(got)]
    for key in TOKEN_FIELDS:
        if key in starts[0]:
            out.append(
                _close(
                    f"stream.message_start.usage.{key}",
                    starts[0].get(key),
                    starts[1].get(key),
                    tolerance,
                )
            )
    finals = [_final_delta(recorded), _final_delta(got)]
    out.append(
        _same(
            "stream.message_delta.usage.fields",
            sorted(finals[0].get("usage", {})),
            sorted(finals[1].get("usage", {})),
        )
    )
    out.append(
        _same(
            "stream.message_delta.context_management",
            "context_management" in finals[0],
            "context_management" in finals[1],
        )
    )
    block_starts = [_block_starts(recorded), _block_starts(got)]
    out.append(_same("stream.compaction_block_start", block_starts[0], block_starts[1]))
    return out


def _event_order(events: Sequence[tuple[str, Json]]) -> list[str]:
    order: list[str] = []
    for name, _ in events:
        if name == "content_block_delta" and order and order[-1] == name:
            continue
        order.append(name)
    return order


def _start_usage(events: Sequence[tuple[str, Json]]) -> Json:
    for name, data in events:
        if name == "message_start":
            return dict(data.get("message", {}).get("usage") or {})
    return {}


def _final_delta(events: Sequence[tuple[str, Json]]) -> Json:
    deltas = [data for name, data in events if name == "message_delta"]
    return deltas[-1] if deltas else {}


def _block_starts(events: Sequence[tuple[str, Json]]) -> list[Json]:
    """The content_block_start of server blocks (compaction), as sent."""
    return [
        data["content_block"]
        for name, data in events
        if name == "content_block_start" and _is_server_block(data.get("content_block"))
    ]
