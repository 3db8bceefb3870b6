"""Server-held threads (beta message-threads-2026-08-12): the SDK's own tool runner offline."""

from __future__ import annotations

from pathlib import Path

import anthropic
import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from agentctl.emulator.server import running
from agentctl.emulator.threads import BETA_THREADS

from .helpers import MODEL, make_client, request

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scripts"


def test_the_sdk_tool_runner_runs_a_script_through_threads(tmp_path: Path) -> None:
    with running(script=EXAMPLES / "memory-roundtrip.toml") as emu:
        runner = make_client(emu.base_url).beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1000,
            messages=[{"role": "user", "content": "keep notes"}],
            tools=[BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))],
        )
        replies = list(runner)
        sent = [r.body for r in emu.requests]
    assert [r.stop_reason for r in replies] == ["tool_use"] * 5 + ["end_turn"]
    assert replies[-1].content[0].text == "Done: I saved, updated and re-read my notes."  # type: ignore[union-attr]
    assert (tmp_path / "memories" / "progress.md").read_text() == (
        "# Progress\n- step 1: done\n- step 2: done\n"
    )
    assert sent[0]["thread"] == {"type": "create"}
    assert sent[1]["thread"] == {"type": "continue", "previous_message_id": replies[0].id}
    assert len(sent[1]["messages"]) == 1  # only the new tool_result turn went over the wire


def test_thread_needs_its_beta() -> None:
    with running() as emu, pytest.raises(anthropic.BadRequestError) as caught:
        make_client(emu.base_url).post(
            "/v1/messages", cast_to=object, body={**request(), "thread": {"type": "create"}}
        )
    assert "thread: Extra inputs are not permitted" in str(caught.value)


def test_continuing_an_unknown_thread_is_404() -> None:
    body = {**request(), "thread": {"type": "continue", "previous_message_id": "msg_nope"}}
    with running() as emu, pytest.raises(anthropic.NotFoundError) as caught:
        make_client(emu.base_url).post(
            "/v1/messages",
            cast_to=object,
            body=body,
            options={"headers": {"anthropic-beta": BETA_THREADS}},
        )
    assert "msg_nope" in str(caught.value)


def test_the_sdk_runner_replays_a_lost_thread_under_a_new_one(tmp_path: Path) -> None:
    """An unknown id is 404 with error_code thread_not_found: the SDK's runner sends the
    whole history again under a new thread and goes on."""
    with running(script=EXAMPLES / "memory-roundtrip.toml") as emu:
        runner = make_client(emu.base_url).beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1000,
            messages=[{"role": "user", "content": "keep notes"}],
            tools=[BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))],
        )
        replies = []
        for reply in runner:
            replies.append(reply)
            if len(replies) == 2:
                emu.service.threads.forget()
        sent = [r.body for r in emu.requests]
    assert [r.stop_reason for r in replies] == ["tool_use"] * 5 + ["end_turn"]
    kinds = [b["thread"]["type"] for b in sent]
    assert kinds[:4] == ["create", "continue", "continue", "create"]
    assert len(sent[3]["messages"]) == 5  # the whole history, replayed
    assert "tools" in sent[3] and "tools" not in sent[4]


def test_a_continue_takes_system_and_tools_from_the_thread() -> None:
    """They are the create's (the SDK leaves them out of a continue); sending one is refused."""
    headers = {"anthropic-beta": BETA_THREADS}
    with running() as emu:
        client = make_client(emu.base_url)
        first = client.post(
            "/v1/messages", cast_to=object, options={"headers": headers},
            body={**request(), "system": "be brief", "thread": {"type": "create"}},
        )  # fmt: skip
        follow = {"type": "continue", "previous_message_id": first["id"]}  # type: ignore[index]
        turn = [{"role": "user", "content": "and then?"}]
        body = {"model": MODEL, "max_tokens": 50, "messages": turn, "thread": follow}
        client.post("/v1/messages", cast_to=object, options={"headers": headers}, body=body)
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.post("/v1/messages", cast_to=object, options={"headers": headers},
                        body={"model": MODEL, "max_tokens": 50, "messages": turn,
                              "system": "other", "thread": follow})  # fmt: skip
        seen = emu.requests[1].body
    assert "system: a thread keeps the system of its create" in str(caught.value)
    assert "system" not in seen and len(emu.service.threads) == 2
