"""Batched clearing on a live run steers on the prompt sizes the server reports.

The real SDK over HTTP against an emulator whose engine counts every prompt 1.5x what
agentctl's estimator says (as a real tokenizer differs from the estimate): the client's
boundary must move where the reported figures put the prompt over the trigger, not where
the estimate alone would; a resumed run steers the same as one that was not stopped.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.agent.request import tool_uses_edit
from agentctl.context.cache import CacheUsage
from agentctl.context.server_model import DEFAULT_SERVER_MODEL
from agentctl.context.tokens import estimate_message_tokens
from agentctl.emulator import SharedEngine, running
from agentctl.profile.loader import Overrides
from agentctl.profile.settings import ClearToolUses
from agentctl.runner.execute import execute
from agentctl.runner.plan import plan_resume
from agentctl.sessions.catalog import session_profile
from agentctl.sessions.replay import ReplaySettings, recorded_sizes, replay_request
from agentctl.sessions.transcript import load_session
from tests.runner.test_batched_clearing import PROFILE as BATCHED_PROFILE
from tests.runner.test_batched_clearing import TASK, workspace

FACTOR = 1.5
TRIGGER, LOW = 14_000, 6_000
PROFILE = BATCHED_PROFILE.format(basis="default", strategy="batched", low=LOW)
STEERING = ClearToolUses(
    strategy="batched", trigger=TRIGGER, low_water=LOW, keep=2, clear_at_least=0,
    exclude_tools=(),
)  # fmt: skip


class CountsMore(SharedEngine):
    """The shared engine, reporting every prompt `FACTOR` times the estimate."""

    def account(self, edited_request: dict[str, Any], model: str) -> CacheUsage:
        usage = super().account(edited_request, model)
        scaled = {k: round(v * FACTOR) for k, v in dataclasses.asdict(usage).items()}
        return CacheUsage(**scaled)


def boundaries(bodies: list[dict[str, Any]]) -> list[int]:
    """How many tool uses each request held cleared (0 before the first move)."""
    out = []
    for body in bodies:
        edits = body["context_management"]["edits"]  # the default's compaction comes last
        (edit,) = [e for e in edits if e["type"] == "clear_tool_uses_20250919"]
        moved = edit["trigger"]["type"] == "tool_uses" and "clear_at_least" not in edit
        out.append(edit["trigger"]["value"] if moved and edit["keep"]["value"] else 0)
    return out


def sent(emu: Any) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.path == "/v1/messages"]


@pytest.mark.slow
def test_the_boundary_follows_the_reported_figures_and_a_resume_steers_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    profile = tmp_path / "batched.toml"
    profile.write_text(PROFILE)
    engine = CountsMore(clock=lambda: 0.0, server=DEFAULT_SERVER_MODEL)
    with running(engine=engine) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        whole = agentctl.run(
            TASK, profile=profile, workspace=workspace(tmp_path / "ws"),
            memory_root=tmp_path / "mem",
        )  # fmt: skip
        bodies = sent(emu)
    assert all(f"FINDING {i:02d}" in whole.text for i in range(14))
    moves = boundaries(bodies)
    reported = [t.usage.prompt_tokens for t in whole.turns]
    first = next(i for i, b in enumerate(moves) if b)
    # The request that first clears: by the reported size of the one before plus the
    # estimate of what came since, over the trigger; the estimate alone says not yet.
    added = sum(estimate_message_tokens(m) for m in bodies[first]["messages"][-2:])
    assert reported[first - 1] + added > TRIGGER
    history = {"messages": bodies[first]["messages"]}
    assert tool_uses_edit(STEERING, history)["trigger"]["type"] == "input_tokens"
    assert tool_uses_edit(STEERING, history, measured={}) == tool_uses_edit(STEERING, history)
    # Steering keeps the reported prompt near the trigger (by the estimate alone it would
    # pass it by the factor's margin: 1.5 x 14,000).
    assert max(reported) < TRIGGER + 3_000 and sum(b > 0 for b in moves) > 3

    # A replay under the recorded settings steers on the recorded figures: what was sent.
    session = load_session(whole.session_id)
    settings = ReplaySettings.from_profile(session_profile(session))
    turns = session.turns
    replayed = [replay_request(t, settings, recorded_sizes(turns[:i])) for i, t in enumerate(turns)]
    sent_edits = [b["context_management"] for b in bodies]
    assert [r["context_management"] for r in replayed] == sent_edits
    estimated = [replay_request(t, settings)["context_management"] for t in turns]
    assert estimated != sent_edits

    # The same run stopped on max_turns after the first clearing, then resumed.
    stop = first + 3
    with running(engine=CountsMore(clock=lambda: 0.0, server=DEFAULT_SERVER_MODEL)) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        limited = agentctl.load_profile(profile, {"max_turns": stop})
        with pytest.raises(agentctl.LimitError):
            agentctl.run(
                TASK, profile=limited, workspace=workspace(tmp_path / "ws2"),
                memory_root=tmp_path / "mem2",
            )  # fmt: skip
        resumed = execute(plan_resume("last", Overrides(values={"max_turns": 80})))
        split = sent(emu)
    assert resumed.text == whole.text
    assert [b["context_management"] for b in split] == [b["context_management"] for b in bodies]
