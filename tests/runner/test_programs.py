"""`agentctl.run(output_schema=..., tools=[...])`: structured output and Python functions as
tools, through the real SDK over HTTP against the emulator (ANTHROPIC_BASE_URL)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError as SdkToolError
from anthropic.lib.tools import beta_tool

import agentctl
from agentctl.emulator import Emulator, Script, ScriptTurn, ToolCall, running
from agentctl.tools.functions import result_content, run_coroutine

SCHEMA = {
    "type": "object",
    "properties": {"total": {"type": "integer"}, "note": {"type": "string"}},
    "required": ["total", "note"],
}
CALLS = (
    ToolCall("add", {"a": 2, "b": 3}),
    ToolCall("shout", {"text": "hi"}),
    ToolCall("broken", {}),
    ToolCall("add", {"a": "two"}),
    ToolCall("refuse", {}),
)
SCRIPT = Script(turns=(ScriptTurn(text="Calling.", tool_calls=CALLS),), final_text="5 in all.")


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def shout(text: str) -> str:
    """Upper-case a text."""
    await asyncio.sleep(0)
    return text.upper()


def broken() -> str:
    """A tool with a bug."""
    raise RuntimeError("the database is down")


def refuse() -> str:
    """A tool that answers with its own error content."""
    raise SdkToolError("not allowed here")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    with running(script=SCRIPT) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield emu


def sent(emu: Emulator) -> list[dict[str, Any]]:
    return [r.body for r in emu.requests if r.path == "/v1/messages"]


def results_sent(emu: Emulator) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of the second request, by the name of the call they answer."""
    second = sent(emu)[1]["messages"]
    names = {b["id"]: b["name"] for b in second[-2]["content"] if b["type"] == "tool_use"}
    return {names[b["tool_use_id"]]: b for b in second[-1]["content"]}


def test_functions_are_offered_with_schemas_from_hints_and_docstrings(emulator: Emulator) -> None:
    agentctl.run("Add.", tools=[add, shout, broken, refuse], record=False)
    tools = {t["name"]: t for t in sent(emulator)[0]["tools"]}
    assert {"memory", "add", "shout", "broken", "refuse"} <= set(tools)
    assert tools["add"]["description"] == "Add two integers."
    schema = tools["add"]["input_schema"]
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["a"] == {
        "type": "integer",
        "title": "A",
        "description": "The first number.",
    }
    assert tools["shout"]["input_schema"]["properties"]["text"]["type"] == "string"


def test_sync_async_and_failing_functions_answer_the_model(emulator: Emulator) -> None:
    events: list[agentctl.Event] = []
    result = agentctl.run(
        "Add.", tools=[add, shout, broken, refuse], on_event=events.append, record=False
    )
    results = results_sent(emulator)
    assert results["shout"] == {"type": "tool_result", "tool_use_id": ANY_ID, "content": "HI"}
    assert results["broken"]["is_error"] is True
    assert results["broken"]["content"] == "Error: RuntimeError('the database is down')"
    assert results["refuse"] == {
        **results["refuse"],
        "is_error": True,
        "content": "not allowed here",
    }
    # add ran twice: once right (5), once with input pydantic refused (an error, not a crash)
    calls = [c for c in result.turns[0].tool_calls]
    assert [(c.name, c.is_error) for c in calls] == [
        ("add", False),
        ("shout", False),
        ("broken", True),
        ("add", True),
        ("refuse", True),
    ]
    assert calls[0].result_chars == 1  # "5"
    turn = next(e for e in events if isinstance(e, agentctl.TurnEvent))
    assert turn.to_json()["tool_calls"] == [c.to_json() for c in calls]  # as NDJSON counts them
    assert result.text == "5 in all."


class _AnyId:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith("toolu_")


ANY_ID = _AnyId()


def test_bad_input_comes_back_with_pydantics_reasons(emulator: Emulator) -> None:
    agentctl.run("Add.", tools=[add, shout, broken, refuse], record=False)
    second = sent(emulator)[1]["messages"][-1]["content"]
    bad = second[3]
    assert bad["is_error"] is True
    assert bad["content"].startswith("Error: Invalid arguments for function add:")
    assert "unable to parse string as an integer" in bad["content"]


def test_an_sdk_beta_tool_keeps_its_own_name(emulator: Emulator) -> None:
    named = beta_tool(add, name="add")  # the same tool, made by the caller
    plus = beta_tool(add, name="plus")
    agentctl.run("Add.", tools=[named, plus, shout, broken, refuse], record=False)
    assert {"add", "plus"} <= {t["name"] for t in sent(emulator)[0]["tools"]}


@pytest.mark.parametrize(
    ("tools", "words"),
    [
        ([lambda: "x"], "'<lambda>' is not a valid tool name"),
        ([add, add], "a tool named 'add' is offered already"),
        (["add"], "'add' is not a function"),
    ],
)
def test_a_function_that_cannot_be_a_tool_is_a_usage_error(tools: list[Any], words: str) -> None:
    with pytest.raises(agentctl.UsageError, match=words.replace("(", r"\(")):
        agentctl.run("Add.", tools=tools, offline=True, record=False)


def test_a_function_named_like_an_agentctl_tool_is_refused(emulator: Emulator) -> None:
    def memory() -> str:
        """Not the memory tool."""
        return ""

    with pytest.raises(agentctl.UsageError, match="'memory' is the name of one of agentctl's"):
        agentctl.run("Add.", tools=[memory], record=False)
    assert sent(emulator) == []


def test_output_schema_as_a_dict_reaches_the_result(emulator: Emulator) -> None:
    result = agentctl.run("Add.", tools=[add, shout, broken, refuse], output_schema=SCHEMA)
    assert all(b["output_config"]["format"]["schema"] == SCHEMA for b in sent(emulator))
    assert result.output == {"total": 0, "note": "5 in all."}  # the emulator's JSON answer
    assert json.loads(result.text) == result.output


def test_a_dict_schema_goes_on_in_a_continuation(emulator: Emulator) -> None:
    """The transcript keeps a schema given as a dict; a follow-up that names none (here from
    Python, as `agentctl run -c` does) still asks for it and checks the answer."""
    first = agentctl.run("Add.", output_schema=SCHEMA)
    before = len(sent(emulator))
    again = agentctl.run("And again.", continue_session=first.session_id)
    follow_up = sent(emulator)[before:]
    assert follow_up and all(b["output_config"]["format"]["schema"] == SCHEMA for b in follow_up)
    assert again.output == {"total": 0, "note": "5 in all."}


def test_output_schema_as_a_file(tmp_path: Path, emulator: Emulator) -> None:
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    result = agentctl.run("Add.", tools=[add, shout, broken, refuse], output_schema="s.json")
    assert result.output == {"total": 0, "note": "5 in all."}


def test_an_answer_that_does_not_match_raises_output_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = Script(turns=(ScriptTurn(text='{"total": "five"}'),))
    with running(script=script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        with pytest.raises(agentctl.OutputError, match=r"at \$: 'note' is a required property"):
            agentctl.run("Add.", output_schema=SCHEMA)


def test_an_async_function_runs_when_the_caller_runs_a_loop() -> None:
    seen: list[str] = []

    async def where() -> str:
        seen.append(threading.current_thread().name)
        return "done"

    async def caller() -> Any:
        return run_coroutine(where())  # a sync run inside a running loop

    assert asyncio.run(caller()) == "done"
    assert seen == ["agentctl-async-tool"]
    assert run_coroutine(where()) == "done" and seen[-1] == threading.current_thread().name


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("text", "text"),
        (None, ""),
        (5, "5"),
        ({"a": [1, "é"]}, '{"a": [1, "é"]}'),
        ([{"type": "text", "text": "x"}], [{"type": "text", "text": "x"}]),
        ([1, 2], "[1, 2]"),
    ],
)
def test_what_a_function_returns_becomes_the_result(value: Any, content: Any) -> None:
    assert result_content(value) == content


def test_a_session_keeps_its_schema_and_tools_for_every_send(emulator: Emulator) -> None:
    with agentctl.Session(output_schema=SCHEMA, tools=[add, shout, broken, refuse]) as chat:
        first = chat.send("Add.")
        second = chat.send("And again?")
    assert first.output == {"total": 0, "note": "5 in all."}
    assert second.output is not None and set(second.output) == {"total", "note"}
    bodies = sent(emulator)
    assert len(bodies) >= 3
    for body in bodies:
        assert body["output_config"]["format"]["schema"] == SCHEMA
        assert {"add", "shout"} <= {t["name"] for t in body["tools"]}
    assert second.session_id == first.session_id


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"output_schema": [SCHEMA]}, "output_schema: must be a JSON Schema (a dict)"),
        ({"output_schema": 3}, "or the path of its file, got int"),
        ({"approve": True}, "approve: must be a function that takes an agentctl.ApprovalRequest"),
        ({"approve": "always"}, "got str"),
    ],
)
def test_a_schema_or_approver_of_the_wrong_type_is_refused_before_a_request(
    emulator: Emulator, kwargs: dict[str, Any], words: str
) -> None:
    """A list schema used to be dropped without a word, and `approve=True` accepted until a
    call was asked about (then a TypeError): both are UsageErrors naming the argument, from
    `run` and from `Session`, and nothing is sent."""
    with pytest.raises(agentctl.UsageError, match=re.escape(words)):
        agentctl.run("Add.", record=False, **kwargs)
    with pytest.raises(agentctl.UsageError, match=re.escape(words)):
        agentctl.Session(**kwargs)
    assert sent(emulator) == []
