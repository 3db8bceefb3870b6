"""Server tool calls in the turn table and the summary; their pricing (web search per search)."""

from __future__ import annotations

import math

from rich.console import Console

from agentctl.agent.model import response_from_message
from agentctl.context.prices import Pricing
from agentctl.render.table import summary_table, turn_table
from agentctl.types import ResultEvent, ToolCall, Totals, TurnEvent, Usage

SEARCH = ToolCall("srvtoolu_1", "web_search", {"query": "q"}, False)
FETCH = ToolCall("srvtoolu_2", "web_fetch", {"url": "https://x.example/"}, True)
NOTE = ToolCall("toolu_1", "memory", {"command": "create", "path": "/memories/n"}, False)
USAGE = Usage(1000, 100, 0, 0, web_search_requests=3, web_fetch_requests=1)


def text(renderable: object) -> str:
    console = Console(width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_tools_column_lists_server_tools_first_and_marks_failures() -> None:
    turn = TurnEvent(1, "tool_use", USAGE, tool_calls=(NOTE,), server_tool_calls=(SEARCH, FETCH))
    shown = " ".join(text(turn_table([turn], width=200)).split())
    assert "web_search, web_fetch!, memory:create" in shown
    assert turn.to_json()["server_tool_calls"][1] == {
        "name": "web_fetch",
        "input": {"url": "https://x.example/"},
        "is_error": True,
    }


def test_summary_shows_the_counts() -> None:
    totals = Totals(usage=USAGE, cost_usd=0.05)
    shown = " ".join(text(summary_table(ResultEvent("s", 1, "end_turn", "", totals), [])).split())
    assert "web searches 3 (billed per search, in the cost)" in shown
    assert "web fetches 1 (tokens only)" in shown


def test_web_search_is_ten_dollars_per_thousand_and_fetch_is_free() -> None:
    pricing = Pricing.of("claude-sonnet-5")
    tokens = Usage(1000, 100)
    base = pricing.cost(tokens)
    assert math.isclose(pricing.cost(Usage(1000, 100, web_search_requests=3)) - base, 0.03)
    assert pricing.cost(Usage(1000, 100, web_fetch_requests=5)) == base
    assert (USAGE + USAGE).web_search_requests == 6


def test_usage_and_failures_come_from_the_api_message() -> None:
    raw = {
        "input_tokens": 5,
        "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 1},
    }
    assert Usage.from_json(raw) == Usage(5, 0, 0, 0, 2, 1)
    assert Usage.from_json(Usage.from_json(raw).to_json()) == Usage.from_json(
        raw
    )  # transcript round trip
    message = {
        "content": [
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            {"type": "server_tool_use", "id": "s2", "name": "web_fetch", "input": {}},
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": "s2",
                "content": {"type": "web_fetch_tool_result_error", "error_code": "url_not_allowed"},
            },
        ],
        "stop_reason": "end_turn",
        "usage": raw,
    }
    calls = response_from_message(message).server_tool_calls
    assert [(c.name, c.is_error) for c in calls] == [("web_search", False), ("web_fetch", True)]
