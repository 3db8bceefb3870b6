"""The client side of compaction: billed usage from `usage.iterations`, hostile iterations
refused, and the compaction block kept resendable (no null extras, `content` always there)."""

from __future__ import annotations

from typing import Any

import pytest

from agentctl.agent.model import response_from_message
from agentctl.agent.wire import ResponseRejected, check_usage
from agentctl.types import Usage


def entry(kind: str, i: int, o: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {
        "type": kind,
        "input_tokens": i,
        "output_tokens": o,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }


def test_billed_usage_adds_compaction_iterations_and_counts_them() -> None:
    top = entry("message", 23_000, 1_000, read=5, write=7)
    raw = {**top, "iterations": [entry("compaction", 180_000, 3_500, read=11), top]}
    assert Usage.from_json(raw) == Usage(203_000, 4_500, 7, 16, compactions=1)
    assert Usage.from_json(top) == Usage(23_000, 1_000, 7, 5)  # no iterations: the top level
    # Our own record of it reads back the same (transcripts, `sessions`).
    assert Usage.from_json(Usage.from_json(raw).to_json()) == Usage.from_json(raw)


def test_paused_compaction_is_billed_from_its_iteration() -> None:
    raw = {**entry("message", 0, 0), "iterations": [entry("compaction", 50_100, 900)]}
    assert Usage.from_json(raw) == Usage(50_100, 900, 0, 0, compactions=1)


@pytest.mark.parametrize(
    ("iterations", "why"),
    [
        ("many", "usage.iterations is not a list of objects"),
        ([entry("compaction", -1, 0)], "usage.iterations[0].input_tokens = -1 is not a token"),
        ([{"type": "compaction", "output_tokens": 1}], "usage.iterations[0].input_tokens = None"),
    ],
)
def test_hostile_iterations_are_refused(iterations: Any, why: str) -> None:
    with pytest.raises(ResponseRejected, match=why.replace("[", r"\[").replace("]", r"\]")):
        check_usage({**entry("message", 1, 1), "iterations": iterations})


def test_compaction_block_is_resent_with_content_and_without_null_extras() -> None:
    message = {
        "content": [
            {"type": "compaction", "content": "sum", "signature": None, "text": None},
            {"type": "compaction"},  # a failed compaction after exclude_none
            {"type": "text", "text": "hi"},
        ],
        "stop_reason": "end_turn",
        "usage": entry("message", 1, 1),
    }
    content = response_from_message(message).content
    assert content == (
        {"type": "compaction", "content": "sum"},
        {"type": "compaction", "content": None},
        {"type": "text", "text": "hi"},
    )
