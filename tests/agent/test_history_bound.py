"""The loop's history is bounded by what the server still reads: once a reply compacts, the
messages before it are let go (the transcript keeps them). Observed on the objects themselves
(a weak reference to the task message), the real SDK over HTTP against the emulator."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from agentctl.agent.client import AnthropicClient
from agentctl.agent.loop import LoopSetup, run_loop
from agentctl.agent.request import opens_view, read_from
from agentctl.agent.retry import RetryPolicy
from agentctl.emulator import running
from agentctl.runner import load_profile
from agentctl.tools.memory import open_memory_tool
from agentctl.tools.registry import ToolBox
from agentctl.tools.workspace import WorkspaceTools
from agentctl.types import ResultEvent, TurnEvent
from tests.runner.compaction_workload import FILES, setup


class Message(dict[str, Any]):
    """A message a weak reference can watch (a plain dict cannot have one)."""


def watch_task(tmp: Path, overrides: dict[str, Any]) -> list[tuple[int, bool]]:
    """Run the sweep from the loop; after each turn, (its compactions, whether the task
    message is still alive once the caller's references are gone)."""
    profile_path, task = setup(tmp, pause=False)
    profile = load_profile(profile_path, overrides)
    first = Message(role="user", content=task.read_text())
    alive = weakref.ref(first)
    seen: list[tuple[int, bool]] = []
    with running(clock=lambda: 0.0) as emu:
        client = AnthropicClient(
            api_key="test-key", base_url=emu.base_url, timeout_s=60, retry=RetryPolicy()
        )
        files = WorkspaceTools(tmp / "ws", 20_000).tools()
        tools = ToolBox([open_memory_tool(profile.memory, "s1"), *files], max_result_chars=20_000)
        loop = LoopSetup(profile=profile, client=client, tools=tools, session="s1")
        events = run_loop(loop, [first])
        del first
        for event in events:
            if isinstance(event, TurnEvent):
                gc.collect()
                seen.append((event.usage.compactions, alive() is not None))
            elif isinstance(event, ResultEvent):
                assert all(f"FINDING {i:02d}" in event.text for i in range(FILES))
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("threads", [False, True])
def test_the_loop_lets_the_history_before_a_compaction_go(tmp_path: Path, threads: bool) -> None:
    seen = watch_task(tmp_path, {"api.threads": threads})
    (at,) = [i for i, (compactions, _alive) in enumerate(seen) if compactions]
    assert all(alive for _c, alive in seen[:at])  # the server reads it until then
    assert not any(alive for _c, alive in seen[at:])


@pytest.mark.slow
def test_without_compaction_the_history_is_the_conversation(tmp_path: Path) -> None:
    seen = watch_task(tmp_path, {"context_editing.compaction.trigger": 10**9})  # never reached
    assert len(seen) > FILES and all(alive for _c, alive in seen)


SUMMARY = {"type": "compaction", "content": "<summary>so far</summary>"}
REPLY = {"role": "assistant", "content": [SUMMARY, {"type": "text", "text": "going on"}]}
FAILED = {"role": "assistant", "content": [{"type": "compaction", "content": None}]}
SIGNED = {"role": "assistant", "content": [{**SUMMARY, "signature": "sig-1"}]}
USER = {"role": "user", "content": "next"}


def test_where_the_server_reads_from() -> None:
    history = [USER, REPLY, USER, FAILED, USER]
    assert read_from(history, threshold=True) == 1  # a failed compaction drops nothing
    assert read_from(history, threshold=False) == 0  # without the edit the server reads all
    assert read_from([USER, SIGNED, USER, REPLY, USER], threshold=False) == 1  # on-demand
    assert read_from([USER, SIGNED, USER, REPLY, USER], threshold=True) == 3
    assert not opens_view({"role": "user", "content": [SUMMARY]}, threshold=True)
    assert opens_view(SIGNED, threshold=False) and not opens_view(REPLY, threshold=False)
