"""Script files: parsing, the shipped examples, stop reasons, output limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl.emulator.model import Script, ScriptTurn, ToolCall
from agentctl.emulator.script import load_script, parse_script
from agentctl.emulator.server import running
from agentctl.errors import ConfigError

from .helpers import MEMORY, make_client, request, run_session, tool_calls

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scripts"


def _history(assistant_turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for _ in range(assistant_turns):
        messages += [{"role": "assistant", "content": "..."}, {"role": "user", "content": "on"}]
    return messages


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_loads(path: Path) -> None:
    script = load_script(path)
    assert script.turns and script.final_text


def test_every_stop_reason_in_order() -> None:
    script = load_script(EXAMPLES / "every-stop-reason.toml")
    with running(script=script) as emu:
        client = make_client(emu.base_url)
        replies = [
            client.beta.messages.create(**request(messages=_history(n), max_tokens=5000))
            for n in range(7)
        ]
    assert [r.stop_reason for r in replies] == [
        "tool_use",
        "pause_turn",
        "stop_sequence",
        "max_tokens",
        "refusal",
        "end_turn",
        "end_turn",
    ]
    assert replies[2].stop_sequence == "END"
    assert replies[3].usage.output_tokens == 4096
    assert replies[6].content[0].text == "The script is over."  # type: ignore[union-attr]


def test_memory_roundtrip_example_with_the_sdk_memory_tool(tmp_path: Path) -> None:
    with running(script=EXAMPLES / "memory-roundtrip.toml") as emu:
        responses = run_session(
            make_client(emu.base_url), "t", tmp_path, tmp_path / "mem", tools=(MEMORY,)
        )
    assert tool_calls(responses) == [
        "memory:view",
        "memory:create",
        "memory:str_replace",
        "memory:insert",
        "memory:view",
    ]
    notes = (tmp_path / "mem" / "memories" / "progress.md").read_text()
    assert notes == "# Progress\n- step 1: done\n- step 2: done\n"
    assert responses[-1].content[0].text == "Done: I saved, updated and re-read my notes."  # type: ignore[union-attr]


def test_thinking_only_when_the_request_enables_it() -> None:
    script = load_script(EXAMPLES / "thinking-tools.toml")
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with running(script=script) as emu:
        client = make_client(emu.base_url)
        plain = client.beta.messages.create(**request())
        deep = client.beta.messages.create(**request(thinking=thinking, max_tokens=3000))
    assert [b.type for b in plain.content] == ["tool_use"]
    assert [b.type for b in deep.content] == ["thinking", "tool_use"]


def test_max_tokens_cuts_the_output() -> None:
    long_text = "word " * 500
    script = Script((ScriptTurn(text=long_text),))
    with running(script=script) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(max_tokens=100))
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 100
    assert 0 < len(message.content[0].text) < len(long_text)  # type: ignore[union-attr]


def test_a_tool_call_that_does_not_fit_is_dropped() -> None:
    script = parse_script(
        {"turn": [{"text": "hi", "tool_use": [{"name": "rf", "input": {"p": "x " * 200}}]}]}
    )
    with running(script=script) as emu:
        message = make_client(emu.base_url).beta.messages.create(**request(max_tokens=20))
    assert message.stop_reason == "max_tokens"
    assert [b.type for b in message.content] == ["text"]


def test_stop_sequence_defaults_to_the_requests_first() -> None:
    script = Script((ScriptTurn(text="a", stop_reason="stop_sequence"),))
    with running(script=script) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            **request(stop_sequences=["###", "STOP"])
        )
    assert message.stop_sequence == "###"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("turn = 3", "turn: must be an array of tables"),
        ("speed = 1", "speed: unknown key"),
        ('final_text = ""', "final_text: must be a non-empty string"),
        ("[[turn]]\ncolour = 1", "turn.0.colour: unknown key"),
        ("[[turn]]\ntext = 1", "turn.0.text: must be a string"),
        ("[[turn]]\noutput_tokens = 0", "turn.0.output_tokens: must be a positive integer"),
        ("[[turn]]\n[[turn.tool_use]]\ninput = {}", "turn.0.tool_use.0.name: must be a string"),
        ('[[turn]]\n[[turn.tool_use]]\nname = "x"\ninput = 3', "turn.0.tool_use.0.input"),
        ("[[turn", "not valid TOML"),
    ],
)
def test_bad_scripts_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"script {path}") as caught:
        load_script(path)
    assert message in str(caught.value)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_script(tmp_path / "absent.toml")


def test_text_stops_at_the_first_stop_sequence_it_produces() -> None:
    script = Script(
        (
            ScriptTurn(
                text="alpha STOP beta END gamma",
                tool_calls=(ToolCall("rf", {}),),
            ),
        )
    )
    with running(script=script) as emu:
        message = make_client(emu.base_url).beta.messages.create(
            **request(stop_sequences=["END", "STOP"])
        )
    assert [b.to_dict() for b in message.content] == [{"type": "text", "text": "alpha "}]
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "STOP")
