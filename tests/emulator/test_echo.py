"""The probe's echo step (emulator/echo.py): which tool result the model is asked to quote."""

from __future__ import annotations

from agentctl.emulator.echo import quoted_result


def test_the_emulator_quotes_a_tool_result_as_the_model_sees_it() -> None:
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "x"}],
    }
    ask = {"type": "text", "text": "Quote the tool result t1 verbatim: reply with it."}
    request = {"messages": [{"role": "user", "content": [result, ask]}]}
    assert quoted_result(request) == "x"
    request["messages"][0]["content"][1]["text"] = "Quote the tool result t2 verbatim"
    assert quoted_result(request) is None
    assert quoted_result({"messages": [{"role": "user", "content": "hello"}]}) is None
