"""`sessions show --as-seen N`: the prompt after edits at turn N, readable, and its diff from N-1.

The client keeps and resends the unedited history; what the model saw is the server's edit of
it. For emulator runs that edit was made by this same engine, so the reconstruction is what
the model got. For real-API runs it is a reconstruction by the shared engine (placeholder text
and token counts are ours), and labelled as such.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from agentctl.errors import UsageError
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings, recorded_sizes, replay_request
from agentctl.sessions.simulate import edit_request
from agentctl.sessions.transcript import Transcript, TurnRecord


def find_turn(session: Transcript, number: int) -> TurnRecord:
    """The recorded turn with this number (UsageError naming the range otherwise)."""
    for turn in session.turns:
        if turn.turn == number:
            return turn
    if not session.turns:
        raise UsageError(f"session {session.id}: no turns were recorded")
    first, last = session.turns[0].turn, session.turns[-1].turn
    raise UsageError(f"session {session.id}: --as-seen {number}: the run has turns {first}..{last}")


def seen_request(
    session: Transcript, turn: TurnRecord
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The request after edits at `turn`, under the recorded settings, and the applied edits."""
    settings = ReplaySettings.from_profile(session_profile(session))
    before = [t for t in session.turns if t.turn < turn.turn]  # their figures steered it
    outcome = edit_request(replay_request(turn, settings, recorded_sizes(before)), settings)
    return outcome.request, outcome.applied_edits


def _short(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


def _block_lines(block: Mapping[str, Any], limit: int | None) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [_short(str(block.get("text", "")), limit)]
    if kind in ("thinking", "redacted_thinking"):
        return [f"[{kind}] " + _short(str(block.get("thinking", "")), limit)]
    if kind == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return [f"[tool_use {block.get('name')} {block.get('id')}] {_short(args, limit)}"]
    if kind == "tool_result":
        error = " is_error" if block.get("is_error") else ""
        head = f"[tool_result {block.get('tool_use_id')}{error}] "
        return [head + _short(_result_text(block.get("content")), limit)]
    return [f"[{kind}] " + _short(json.dumps(dict(block), ensure_ascii=False), limit)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
    return json.dumps(content, ensure_ascii=False)


def render_prompt(request: Mapping[str, Any], limit: int | None = 600) -> str:
    """A readable rendering: tool names, system, then each message and its blocks."""
    names = [str(t.get("name", t.get("type", "?"))) for t in request.get("tools") or []]
    lines = [f"## tools: {', '.join(names) or '(none)'}"]
    system = request.get("system")
    if system:
        lines.append("## system")
        blocks = system if isinstance(system, list) else [{"type": "text", "text": system}]
        lines += [line for b in blocks for line in _block_lines(b, limit)]
    for index, message in enumerate(request.get("messages") or []):
        lines.append(f"## [{index}] {message.get('role')}")
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        lines += [line for b in blocks for line in _block_lines(b, limit)]
    return "\n".join(lines) + "\n"


def label(session: Transcript) -> str:
    if session.offline:
        return "computed by the shared engine, the same one the emulator used for this run"
    return "reconstructed by the shared engine (the real server's edit may differ in detail)"


def as_seen_report(session: Transcript, number: int, *, limit: int | None = 600) -> str:
    """Header, the prompt as seen at turn `number`, and a unified diff from the turn before."""
    turn = find_turn(session, number)
    request, applied = seen_request(session, turn)
    recorded = [e.raw for e in turn.event.applied_edits]
    text = render_prompt(request, limit)
    same = "the same" if recorded == applied else "DIFFERENT"
    parts = [
        f"# session {session.id}, turn {number}: the prompt after edits ({label(session)})",
        f"# applied edits recorded: {json.dumps(recorded, sort_keys=True)}",
        f"# applied edits by the engine ({same}): {json.dumps(applied, sort_keys=True)}",
        text,
    ]
    index = session.turns.index(turn)
    if index == 0:
        parts.append("# first turn: no diff\n")
        return "\n".join(parts)
    before, _ = seen_request(session, session.turns[index - 1])
    previous = session.turns[index - 1].turn
    diff = difflib.unified_diff(
        render_prompt(before, limit).splitlines(keepends=True),
        text.splitlines(keepends=True),
        fromfile=f"turn {previous} (as seen)",
        tofile=f"turn {number} (as seen)",
    )
    parts.append(f"# diff from turn {previous}\n" + "".join(diff))
    return "\n".join(parts)
