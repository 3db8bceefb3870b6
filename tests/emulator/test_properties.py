"""Properties over many inputs: streamed == non-streamed, deltas rejoin, concurrency."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctl.emulator.model import Script, ScriptTurn, ToolCall
from agentctl.emulator.server import running
from agentctl.emulator.sse import split_text

from .helpers import BETA, make_client, request, run_session

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
TURNS = st.builds(
    ScriptTurn,
    thinking=st.none() | st.text(min_size=1, max_size=300),
    text=st.none() | st.text(min_size=1, max_size=300),
    tool_calls=st.lists(
        st.builds(
            ToolCall,
            st.sampled_from(["memory", "read_file"]),
            st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4),
        ),
        max_size=2,
    ).map(tuple),
)


def _blocks(message: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.to_dict().items() if k != "parsed_output"} for b in message.content]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=TURNS)
@pytest.mark.slow
def test_streamed_equals_non_streamed(turn: ScriptTurn) -> None:
    body = request(max_tokens=20000, thinking={"type": "enabled", "budget_tokens": 1024})
    with running(script=Script((turn,))) as emu:
        client = make_client(emu.base_url)
        plain = client.beta.messages.create(**body)
        with client.beta.messages.stream(**body) as stream:
            final = stream.get_final_message()
    assert _blocks(final) == _blocks(plain)
    assert (final.stop_reason, final.usage.output_tokens) == (
        plain.stop_reason,
        plain.usage.output_tokens,
    )


@given(text=st.text(max_size=5000), pieces=st.none() | st.integers(1, 10))
def test_split_text_rejoins(text: str, pieces: int | None) -> None:
    parts = split_text(text, pieces)
    assert "".join(parts) == text
    assert len(parts) >= 1


def test_concurrent_clients_are_all_answered_and_numbered() -> None:
    with running(script=Script()) as emu:
        client = make_client(emu.base_url)
        with ThreadPoolExecutor(max_workers=8) as pool:
            replies = list(pool.map(lambda _: client.beta.messages.create(**request()), range(40)))
        numbers = sorted(r.number for r in emu.requests)
    assert all(r.stop_reason == "end_turn" for r in replies)
    assert numbers == list(range(1, 41))
    assert len({r.id for r in replies}) == 40


NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,8}(/[a-z][a-z0-9_-]{0,8})?\.(txt|py|md)", fullmatch=True)
LINES = st.lists(
    st.sampled_from(["filler text", "the deadline is near", "budget owner", "x = 1", ""]),
    max_size=12,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=st.dictionaries(NAMES, LINES, min_size=1, max_size=6), keep=st.integers(1, 3))
@pytest.mark.slow
def test_policy_notes_every_file_and_answers_from_notes(
    tmp_path_factory: Any, files: dict[str, list[str]], keep: int
) -> None:
    root = tmp_path_factory.mktemp("case")
    workspace = root / "ws"
    for name, lines in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("\n".join(lines))
    edit = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "tool_uses", "value": 1},
        "keep": {"type": "tool_uses", "value": keep},
        "exclude_tools": ["memory"],
    }
    with running() as emu:
        responses = run_session(
            make_client(emu.base_url),
            "Where is the deadline and the budget?",
            workspace,
            root / "mem",
            betas=[BETA],
            context_management={"edits": [edit]},
        )
        assert emu.errors == []
    answer = responses[-1].content[-1].text
    for name, lines in files.items():
        hits = [line for line in lines if "deadline" in line or "budget" in line][:3]
        expected = " | ".join(hits) or next((line for line in lines if line), "(nothing relevant)")
        assert f"- {name}: {expected}\n" in answer + "\n"
