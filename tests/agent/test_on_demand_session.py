"""An on-demand compaction in a recorded session (scripted client, real transcript): the
transcript holds the compaction request and the signed block, `--resume` continues from the
block, and `sessions show` counts the compaction."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rich.console import Console

from agentctl.agent.model import ModelResponse
from agentctl.errors import LimitError
from agentctl.profile.settings import Compaction, ContextEditing, Profile
from agentctl.render.sessions_view import show_report
from agentctl.runner import RunControl, execute, plan_resume, run
from agentctl.sessions.transcript import load_session
from agentctl.types import Event, TurnEvent

from .scripted import ScriptedClient
from .test_on_demand_compaction import SIGNED, a_tool_turn, summary_reply


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def recorded(response: ModelResponse) -> ModelResponse:
    """The reply with the message a real client keeps for the transcript (`raw`)."""
    raw = {"content": list(response.content), "stop_reason": response.stop_reason}
    return dataclasses.replace(response, raw={**raw, "usage": response.usage.to_json()})


def compact_after_first_turn(control: RunControl) -> object:
    def on_event(event: Event) -> None:
        if isinstance(event, TurnEvent) and event.turn == 1:
            control.compact_before_next_turn()

    return on_event


@pytest.mark.dates
def test_a_session_stopped_after_a_compaction_resumes_from_the_signed_block() -> None:
    control = RunControl()
    client = ScriptedClient(recorded(a_tool_turn()), recorded(summary_reply()))
    with pytest.raises(LimitError, match="max_turns=2"):
        run(
            "Look at memory.",
            profile=Profile(
                max_turns=2,  # compaction off: the built-in default's threshold mode refuses calls
                context_editing=ContextEditing(compaction=Compaction(enabled=False)),
            ),
            client=client,
            control=control,
            on_event=compact_after_first_turn(control),  # type: ignore[arg-type]
        )
    assert "compaction" in client.requests[1]
    plan = plan_resume("last")
    assert plan.messages[-1] == {"role": "assistant", "content": [SIGNED]}
    assert [m["role"] for m in plan.messages] == ["user", "assistant", "user", "assistant"]
    rest = ScriptedClient("finished from the summary")
    result = execute(plan, client=rest)
    assert result.text == "finished from the summary" and result.first_turn == 2
    sent = rest.requests[0]
    assert [b["type"] for m in sent["messages"] for b in m["content"]] == ["compaction"]
    assert sent["messages"][0]["content"][0]["signature"] == "sig-1"
    assert "compaction" not in sent

    session = load_session("last")
    assert [t.event.stop_reason for t in session.turns] == ["tool_use", "compaction", "end_turn"]
    assert session.turns[1].body["compaction"] == {"type": "summarize"}
    # Each turn's messages are what its request sent: the summary on, after the compaction.
    assert [m["role"] for m in session.turns[1].messages] == ["user", "assistant", "user"]
    assert list(session.turns[2].messages) == [{"role": "assistant", "content": [SIGNED]}]
    console = Console(width=120, record=True, color_system=None)
    console.print(show_report(session, 120))
    shown = console.export_text()
    rows = [line.split() for line in shown.splitlines() if line.strip()[:1].isdigit()]
    assert [row[:3] for row in rows[:3]] == [
        ["1", "tool_use", "100"],
        ["2", "compaction", "900"],
        ["3", "end_turn", "100"],
    ]
    summary = [line for line in shown.splitlines() if line.strip().startswith("compactions")]
    assert summary and summary[0].split()[-1] == "1"
