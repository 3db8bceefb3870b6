"""`sessions show`/`export` keep one history, not a copy per turn: each turn's messages are a
view of it, equal to what the history rule (`transcript.records.with_history`) gives turn by
turn."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentctl.agent.request import read_from
from agentctl.cli.main import app
from agentctl.home import sessions_dir
from agentctl.sessions.catalog import export_session
from agentctl.sessions.transcript import (
    MessagesView,
    RequestRecord,
    Transcript,
    load_session,
    read_transcript,
    with_history,
)

SIGNED = {"type": "compaction", "content": "s", "signature": "x"}
SUMMARY = {"role": "assistant", "content": [SIGNED]}


def reference(path: Path) -> list[list[dict[str, Any]]]:
    """Each request's messages as the history rule gives them, copied turn by turn."""
    sent = []
    for record, history in with_history(read_transcript(path).records):
        if isinstance(record, RequestRecord):
            count = len(history) if record.messages_count is None else record.messages_count
            prefix = history[:count]
            sent.append(list(prefix[read_from(prefix, threshold=False) :]))
    return sent


def line(kind: str, **fields: Any) -> str:
    return json.dumps({"v": 1, "type": kind, "ts": 1.0, **fields})


def hand_made(seed: int, turns: int = 40) -> Path:
    """A transcript whose history grows, is rewritten from earlier indexes (as a resume
    does) and gets on-demand summaries, with responses for every request."""
    rng = random.Random(seed)
    lines = [line("session", session="s", task="t", model="claude-sonnet-5")]
    size = 0
    for turn in range(1, turns + 1):
        for _ in range(rng.randint(1, 3)):
            index = rng.randint(max(0, size - 3), size) if rng.random() < 0.2 else size
            message = SUMMARY if rng.random() < 0.1 else {"role": "user", "content": f"m{turn}"}
            lines.append(line("message", index=index, message=message))
            size = index + 1
        count = rng.choice([size, max(0, size - 1), None])
        lines.append(line("request", turn=turn, messages_count=count, request={}))
        stop = "end_turn" if turn == turns else "tool_use"
        response = {"content": [], "stop_reason": stop, "usage": {"input_tokens": 1}}
        lines.append(line("response", turn=turn, request_id="r", message=response))
    sessions_dir().mkdir(parents=True, exist_ok=True)
    path = sessions_dir() / f"20260101-000000-{seed:06x}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_turns_view_is_what_the_history_rule_gives() -> None:
    for seed in range(20):
        path = hand_made(seed)
        session = load_session(path.stem)
        assert [list(t.messages) for t in session.turns] == reference(path)
        assert all(isinstance(t.messages, MessagesView) for t in session.turns)
        assert [len(t.messages) for t in session.turns] == [len(m) for m in reference(path)]
        assert list(session.history) == _final(path)


def _final(path: Path) -> list[dict[str, Any]]:
    final: list[dict[str, Any]] = []
    for _, history in with_history(read_transcript(path).records):
        final = history
    return list(final)


def test_recorded_sessions_match_the_reference(research: Transcript, resumed: Transcript) -> None:
    for session in (research, resumed):
        assert [list(t.messages) for t in session.turns] == reference(session.path)


def test_a_view_acts_as_a_sequence() -> None:
    items = [{"n": n} for n in range(6)]
    view = MessagesView(items, 1, 4)
    items.append({"n": 6})  # the list grows: the view keeps its messages
    assert len(view) == 3 and view[0] == {"n": 1} and view[-1] == {"n": 3}
    assert view[1:] == [{"n": 2}, {"n": 3}] and view == ({"n": 1}, {"n": 2}, {"n": 3})
    assert list(reversed(view)) == [{"n": 3}, {"n": 2}, {"n": 1}]
    assert view != [{"n": 1}]


def test_export_writes_the_document_it_builds(research: Transcript, tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = CliRunner().invoke(app, ["sessions", "export", research.id, "-o", str(out)])
    assert result.exit_code == 0, result.output
    expected = json.dumps(export_session(research), indent=2, ensure_ascii=False) + "\n"
    assert out.read_text() == expected
    piped = CliRunner().invoke(app, ["sessions", "export", research.id])
    assert piped.stdout == expected
