"""A small tools.max_result_chars must not cut memory views (the store pages them itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.tools.memory import MemoryTool
from agentctl.tools.registry import ToolBox

from .helpers import expected_facts, invoke, make_workspace, ndjson


class FakeStore:
    def execute(self, command: object) -> str:
        return "x" * 5_000


def test_the_memory_tool_is_not_capped_by_the_generic_limit() -> None:
    box = ToolBox([MemoryTool(FakeStore())], max_result_chars=1_000)
    assert box.dispatch("memory", {"command": "view", "path": "/memories"}).content == "x" * 5_000


@pytest.mark.slow
def test_a_small_result_cap_does_not_cut_the_notes_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bug fixed: tools/registry.py capped memory views at tools.max_result_chars with a
    # '[truncated: ...]' line and no view_range; the notes view was cut and the answer lost facts.
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 30)  # notes of ~1.8 KB
    result = invoke("run", str(task), "--offline", "--json", "--quiet",
                    "--set", "tools.max_result_chars=1200")  # fmt: skip
    assert result.exit_code == 0, result.output
    text = ndjson(result.stdout)[-1]["text"]
    assert [fact in text for fact in expected_facts(30)] == [True] * 30
