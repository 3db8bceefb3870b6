"""What the MCP protocol asks of a client beyond calls: a server that adds a tool mid-run
(notifications/tools/list_changed), tools that only run as MCP tasks, the client's name in
`initialize`, progress notifications. A real server (tests/tools/mcp_server.py) over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentctl import __version__

from .mcp_harness import invoke, records, tool_results, write_profile, write_task

pytestmark = pytest.mark.slow  # each starts a server process


def offered(recs: list[dict[str, Any]]) -> list[list[str]]:
    """The MCP tool names each request offered, in order."""
    requests = [r["request"] for r in recs if r["type"] == "request"]
    return [[t["name"] for t in q["tools"] if t["name"].startswith("mcp__")] for q in requests]


def test_a_tool_added_mid_run_is_offered_on_the_next_turn(tmp_path: Path) -> None:
    profile = write_profile(tmp_path, 'allow = ["grow", "later", "client"]\n')
    task = write_task(
        tmp_path, [("mcp__fx__client", {}), ("mcp__fx__grow", {})], [("mcp__fx__later", {})]
    )
    result = invoke("run", str(task), "--offline", "--profile", str(profile), "-q")
    assert result.exit_code == 0, result.output
    recs = records()
    assert offered(recs) == [
        ["mcp__fx__grow", "mcp__fx__client"],
        ["mcp__fx__grow", "mcp__fx__client", "mcp__fx__later"],
        ["mcp__fx__grow", "mcp__fx__client", "mcp__fx__later"],
    ]
    assert [(r["content"], r["is_error"]) for r in tool_results(recs)] == [
        (f"agentctl {__version__}", False),  # how the client introduced itself
        ("grown", False),
        ("added mid-run", False),
    ]


def test_task_only_tools_are_not_offered_and_the_run_says_so(tmp_path: Path) -> None:
    profile = write_profile(tmp_path, 'allow = ["add", "task_render"]\n')
    task = write_task(tmp_path, [("mcp__fx__add", {"a": 1, "b": 2})])
    result = invoke("run", str(task), "--offline", "--profile", str(profile))
    assert result.exit_code == 0, result.output
    assert offered(records()) == [["mcp__fx__add"], ["mcp__fx__add"]]
    warning = (
        "agentctl: warning: mcp.servers.fx: not offered: task_render"
        " (they need MCP tasks, which agentctl cannot run yet)"
    )
    assert warning in result.stderr.splitlines()
    listed = invoke("mcp", "list", "--profile", str(profile))
    assert listed.stdout == (
        "fx  ok, 1 tool(s)\n"
        "  mcp__fx__add  Add two integers.\n"
        "  not offered (allow/deny): echo, getenv, header, picture, media, kinds, structured,"
        " grow, steps, client, fail, die, hang\n"
        "  not offered (they need MCP tasks, which agentctl cannot run yet): task_render\n"
    )


def test_a_long_calls_progress_reaches_the_status_line(tmp_path: Path) -> None:
    from agentctl import ProgressEvent, run
    from agentctl.render.format import fmt_progress

    profile = write_profile(tmp_path, 'allow = ["steps"]\n')
    task = write_task(tmp_path, [("mcp__fx__steps", {})])
    seen: list[ProgressEvent] = []
    result = run(
        task,
        profile=profile,
        offline=True,
        on_event=lambda e: seen.extend([e] if isinstance(e, ProgressEvent) else []),
    )
    assert result.stop_reason == "end_turn"
    progress = [e for e in seen if e.kind == "tool_progress"]
    # The call carried a progress token (the server reports only then); the latest report is
    # shown each time the loop looks, so some may be passed over, never the last.
    assert progress and {e.message for e in progress} <= {f"step {i} of 3" for i in (1, 2, 3)}
    assert fmt_progress(progress[-1]) == "turn 1 · mcp__fx__steps: step 3 of 3"
    assert [r["content"] for r in tool_results(records())] == ["stepped"]
