"""The shipped examples work as documented (run offline on a fresh copy of each)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def copy_example(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns("memory"))
    return target / "task.md"


def run_json(task: Path) -> list[dict[str, Any]]:
    """The example as shipped: no --profile, so only the built-in defaults and its front matter."""
    result = CliRunner().invoke(app, ["run", str(task), "--offline", "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("generate", EXAMPLES / "research" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_research_workspace_is_what_the_generator_writes(tmp_path: Path) -> None:
    generator = load_generator()
    files = generator.build(tmp_path)
    committed = EXAMPLES / "research" / "workspace"
    assert len(files) == 18
    for path in files:
        assert path.read_bytes() == (committed / path.relative_to(tmp_path)).read_bytes()
    assert 150_000 < sum(p.stat().st_size for p in files) < 250_000


@pytest.mark.slow
def test_research_clears_on_several_turns_and_keeps_every_finding(tmp_path: Path) -> None:
    lines = run_json(copy_example("research", tmp_path))
    turns = [e for e in lines if e["event"] == "turn"]
    cleared_turns = [t["turn"] for t in turns if t["applied_edits"]]
    assert len(cleared_turns) >= 3
    result = lines[-1]
    assert result["event"] == "result" and result["stop_reason"] == "end_turn"
    assert result["totals"]["cleared_input_tokens"] > 100_000
    for finding in load_generator().FINDINGS:  # facts that survived clearing via memory
        assert finding[len("FINDING: ") :] in result["text"]


@pytest.mark.dates
def test_memory_carries_knowledge_into_the_second_run(tmp_path: Path) -> None:
    task = copy_example("memory-carryover", tmp_path)
    first, second = run_json(task), run_json(task)

    def reads(lines: list[dict[str, Any]]) -> int:
        turns = [e for e in lines if e["event"] == "turn"]
        return sum(1 for t in turns for c in t["tool_calls"] if c["name"] == "read_file")

    assert reads(first) == 4 and reads(second) == 0
    assert second[-1]["turns"] < first[-1]["turns"]
    assert "NOTICE period: 120 days" in second[-1]["text"]
    assert (tmp_path / "memory-carryover" / "memory").is_dir()
