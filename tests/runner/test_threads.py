"""api.threads: a run over message threads sends only what is new each turn, and shows the
same turns (usage, edits, answer, transcript) as the run that sends the whole history.

The real SDK over HTTP against the emulator (which holds threads as
agentctl/emulator/threads.py documents)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentctl
from agentctl.emulator import running
from agentctl.sessions.transcript import load_session
from agentctl.types import TurnEvent
from tests.runner.test_batched_clearing import PROFILE as BATCHED_PROFILE
from tests.runner.test_batched_clearing import TASK, workspace

PROFILE = BATCHED_PROFILE.format(basis="default", strategy="batched", low=6_000)


def sent(emu: Any) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.path == "/v1/messages"]


def run(
    tmp: Path, env: pytest.MonkeyPatch, name: str, threads: bool, on_event: Any = None
) -> tuple[Any, list[Any]]:
    profile = tmp / f"{name}.toml"
    profile.write_text(PROFILE + f"[api]\nthreads = {str(threads).lower()}\n")
    with running(clock=lambda: 0.0) as emu:
        env.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = agentctl.run(
            TASK, profile=profile, workspace=workspace(tmp / f"ws-{name}"),
            memory_root=tmp / f"mem-{name}", on_event=on_event and (lambda e: on_event(e, emu)),
        )  # fmt: skip
        return result, sent(emu)


def turns_shown(result: Any) -> list[tuple[Any, ...]]:
    return [(t.usage, t.applied_edits, t.stop_reason, t.tool_calls) for t in result.turns]


@pytest.mark.slow
def test_a_threaded_run_sends_only_what_is_new_and_shows_the_same_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    whole, plain = run(tmp_path, monkeypatch, "whole", threads=False)
    threaded, bodies = run(tmp_path, monkeypatch, "threads", threads=True)
    assert all(f"FINDING {i:02d}" in threaded.text for i in range(14))
    assert len(bodies) == len(plain) > 10
    assert bodies[0]["thread"] == {"type": "create"} and "tools" in bodies[0]
    for body in bodies[1:]:
        assert body["thread"]["type"] == "continue"
        assert "tools" not in body and "system" not in body
        assert len(body["messages"]) == 1  # the tool results of the turn before
    assert all("thread" not in b for b in plain)
    # The same edits went out, and the server saw the same conversations.
    assert [b["context_management"] for b in bodies] == [b["context_management"] for b in plain]
    # The same prompts, edits, calls and answers; only the cache split differs: a held message
    # keeps no marker, so batched clearing's breakpoint on the cleared boundary goes out with
    # the whole history only, and there each batch reads the cleared prefix from the cache
    # where a threaded batch writes it again.
    assert [(t.usage.prompt_tokens, *shown[1:]) for t, shown in
            zip(threaded.turns, turns_shown(threaded), strict=True)] == [
        (t.usage.prompt_tokens, *shown[1:])
        for t, shown in zip(whole.turns, turns_shown(whole), strict=True)
    ]  # fmt: skip
    written = [sum(t.usage.cache_creation_input_tokens for t in r.turns) for r in (whole, threaded)]
    assert written[0] < written[1], written
    assert sum(t.usage.cache_read_input_tokens for t in threaded.turns) > 0
    assert threaded.text == whole.text
    # The transcript holds the whole history either way.
    a, b = load_session(whole.session_id), load_session(threaded.session_id)
    assert len(a.history) == len(b.history) > 20


@pytest.mark.slow
def test_a_lost_thread_is_created_again_with_the_whole_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")

    def forget(event: object, emu: Any) -> None:
        if isinstance(event, TurnEvent) and event.turn == 4:
            emu.service.threads.forget()  # as a server that lost what it held

    result, bodies = run(tmp_path, monkeypatch, "lost", threads=True, on_event=forget)
    assert all(f"FINDING {i:02d}" in result.text for i in range(14))
    kinds = [b["thread"]["type"] for b in bodies]
    assert kinds[:5] == ["create", "continue", "continue", "continue", "continue"]
    assert kinds[5] == "create" and kinds[6] == "continue"
    assert len(bodies[5]["messages"]) == 9  # task + 4 turns of use and result
    assert result.stop_reason == "end_turn"


@pytest.mark.slow
def test_after_a_pause_turn_a_continue_sends_nothing_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server holds the paused turn: the continue carries an empty `messages`."""
    from agentctl.emulator import Script, ScriptTurn

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    script = Script((ScriptTurn(text="thinking it over", stop_reason="pause_turn"),
                     ScriptTurn(text="the answer", stop_reason="end_turn")))  # fmt: skip
    profile = tmp_path / "t.toml"
    profile.write_text("[api]\nthreads = true\n")
    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        result = agentctl.run("go", profile=profile, record=False)
        bodies = sent(emu)
    assert result.text == "the answer" and [t.stop_reason for t in result.turns] == [
        "pause_turn", "end_turn"]  # fmt: skip
    assert bodies[1]["thread"]["type"] == "continue" and bodies[1]["messages"] == []
