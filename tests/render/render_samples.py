"""Sample events for the render tests and the live demo (tests/render/live_demo.py)."""

from __future__ import annotations

from dataclasses import replace

from agentctl.types import (
    AppliedEdit,
    ResultEvent,
    StartEvent,
    ToolCall,
    Totals,
    TurnEvent,
    Usage,
)

CONTEXT_MANAGEMENT = {
    "edits": [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 30000},
            "keep": {"type": "tool_uses", "value": 3},
        }
    ]
}

START = StartEvent(
    session="20261130-074500-ab12",
    model="claude-sonnet-5",
    context_management=CONTEXT_MANAGEMENT,
    profile="configs/balanced.toml",
    task="examples/research.md",
)


def call(name: str, command: str = "", *, is_error: bool = False, n: int = 0) -> ToolCall:
    payload = {"command": command, "path": "/memories/notes.md"} if command else {"path": "a.txt"}
    return ToolCall(id=f"toolu_{name}_{n}", name=name, input=payload, is_error=is_error)


def clearing(tokens: int, uses: int) -> AppliedEdit:
    raw = {
        "type": "clear_tool_uses_20250919",
        "cleared_tool_uses": uses,
        "cleared_input_tokens": tokens,
    }
    return AppliedEdit.from_json(raw)


TURN1 = TurnEvent(
    turn=1,
    stop_reason="tool_use",
    usage=Usage(1234, 210, 5000, 0),
    tool_calls=(call("memory", "view"), call("read_file", n=1), call("read_file", n=2)),
    trigger_distance=-23766,
    request_id="req_1",
)
TURN2 = TurnEvent(
    turn=2,
    stop_reason="tool_use",
    usage=Usage(18000, 95, 1200, 8000),
    applied_edits=(clearing(4100, 2),),
    tool_calls=(call("memory", "str_replace", is_error=True),),
    trigger_distance=-2800,
    request_id="req_2",
)
TURN3 = TurnEvent(
    turn=3,
    stop_reason="end_turn",
    usage=Usage(300, 512, 0, 19000),
    request_id="req_3",
)
TURNS = (TURN1, TURN2, TURN3)


def totals(cost: float = 0.0123) -> Totals:
    acc = Totals()
    for turn in TURNS:
        acc = acc.add_turn(turn, cost / len(TURNS))
    return acc


RESULT = ResultEvent(
    session=START.session,
    turns=3,
    stop_reason="end_turn",
    text="# Findings\n\n- the cache **works**\n",
    totals=totals(),
)


def scaled(turn: TurnEvent, factor: int) -> TurnEvent:
    u = turn.usage
    usage = Usage(
        u.input_tokens * factor,
        u.output_tokens * factor,
        u.cache_creation_input_tokens * factor,
        u.cache_read_input_tokens * factor,
    )
    return replace(turn, usage=usage)


# Six-digit token counts: the widest numbers the layouts were measured with.
BIG_TURNS = tuple(scaled(turn, 10) for turn in TURNS)
