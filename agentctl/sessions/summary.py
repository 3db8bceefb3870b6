"""One row of `sessions list`: a recorded session in figures (the sessions index holds them)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SessionSummary:
    """One row of `sessions list`."""

    id: str
    started: float
    task: str  # the first line of the prompt
    task_source: str
    model: str
    turns: int
    status: str
    prompt_tokens: int
    output_tokens: int
    cost_usd: float | None
    compactions: int = 0
    pricing: str = "list"  # "list" (record.LIST_PRICE), "batch" or "mixed" (Session.pricing)

    def to_json(self) -> dict[str, Any]:
        cost = self.cost_usd
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
            "cost_usd": round(cost, 6) if cost is not None and math.isfinite(cost) else None,
            "compactions": self.compactions,
            "pricing": self.pricing,
        }
