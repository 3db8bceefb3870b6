"""One row of `sessions list`: a recorded session in figures (the sessions index holds them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from agentctl.types import Totals


@dataclass(frozen=True)
class SessionSummary:
    """One row of `sessions list`: the session's header facts and `totals`, the sum of its
    recorded turns, each at its segment's pricing (cost NaN when unknown)."""

    id: str
    started: float
    task: str  # the first line of the prompt
    task_source: str
    model: str
    turns: int
    status: str
    totals: Totals = field(default_factory=Totals)
    pricing: str = "list"  # "list" (record.LIST_PRICE), "batch" or "mixed" (Session.pricing)
    forked_from: str | None = None  # a fork: the session and turn it was started from
    forked_at: int | None = None
    follow_ups: int = 0  # user turns after the first (`run --continue`)

    # The row's figures, each a function of its totals (the names the row has always had).
    @property
    def prompt_tokens(self) -> int:
        return self.totals.usage.prompt_tokens

    @property
    def output_tokens(self) -> int:
        return self.totals.usage.output_tokens

    @property
    def cost_usd(self) -> float | None:
        return self.totals.known_cost

    @property
    def compactions(self) -> int:
        return self.totals.usage.compactions

    @property
    def lineage(self) -> str:
        """`SESSION@TURN` for a fork, else ""."""
        return f"{self.forked_from}@{self.forked_at}" if self.forked_from else ""

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.id,
            "started": self.started,
            "task": self.task,
            "task_source": self.task_source,
            "model": self.model,
            "turns": self.turns,
            "status": self.status,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.totals.cost_json,
            "compactions": self.compactions,
            "pricing": self.pricing,
            "forked_from": self.forked_from,
            "forked_at": self.forked_at,
            "follow_ups": self.follow_ups,
        }


def rows_json(rows: list[SessionSummary]) -> str:
    """`json.dumps([row.to_json() for row in rows], indent=2, ensure_ascii=False)`, the same
    text, written with the C string encoder (json's indented mode is pure Python: most of
    `sessions list --json` for 10,000 rows)."""
    if not rows:
        return "[]"
    objects = []
    for row in rows:
        fields = ",\n".join(
            f"    {encode_basestring(k)}: {_scalar(v)}" for k, v in row.to_json().items()
        )
        objects.append("  {\n" + fields + "\n  }")
    return "[\n" + ",\n".join(objects) + "\n]"


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return repr(value)  # int and float, as json writes them
