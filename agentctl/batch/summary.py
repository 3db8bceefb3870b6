"""The end-of-batch summary from the result lines: per-status counts, cost, cache, clearing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.render.format import fmt_usd
from agentctl.sessions.transcript import BATCH_PRICE, LIST_PRICE
from agentctl.types import USAGE_TOKENS, Totals, usd_json

STATUSES = ("ok", "limit", "failed", "skipped", "unfinished")
_CLEARING = ("cleared_input_tokens", "cleared_tool_uses", "cleared_thinking_turns")


@dataclass(frozen=True)
class Summary:
    """A batch's result lines in figures (plus the ids skipped or left unfinished this time):
    `totals` is their sum, each other figure a function of it or of the lines' rows."""

    counts: dict[str, int]
    totals: Totals  # the sum of the result lines' totals
    costs: tuple[tuple[str, str, int, float | None], ...]  # id, status, turns, cost
    pricing: str = (
        LIST_PRICE  # BATCH_PRICE when the tasks went through Message Batches (half price)
    )

    @property
    def tasks(self) -> int:
        return sum(self.counts.values())

    @property
    def cost_usd(self) -> float:
        """What the tasks with a known price cost (`totals.cost_usd` is NaN if one has none)."""
        return sum(cost for *_, cost in self.costs if cost is not None)

    @property
    def cache_hit_ratio(self) -> float | None:
        return self.totals.usage.cache_hit_ratio

    @property
    def sums(self) -> dict[str, int]:
        """The token and clearing sums, as the `batch_end` line gives them."""
        usage, totals = self.totals.usage, self.totals
        return {
            **{key: getattr(usage, key) for key in USAGE_TOKENS},
            **{key: getattr(totals, key) for key in _CLEARING},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "batch_end",
            "tasks": self.tasks,
            "counts": self.counts,
            "cost_usd": usd_json(self.cost_usd),
            "pricing": self.pricing,
            "cache_hit_ratio": self.cache_hit_ratio,
            **self.sums,
        }


def summarize(
    lines: Sequence[dict[str, Any]], skipped: Sequence[str] = (), unfinished: Sequence[str] = ()
) -> Summary:
    counts = Counter({status: 0 for status in STATUSES})
    counts.update(str(line.get("status")) for line in lines)
    counts.update({"skipped": len(skipped), "unfinished": len(unfinished)})
    totals = sum((Totals.from_json(line.get("totals") or {}) for line in lines), Totals())
    costs = tuple(_cost_row(line) for line in lines)
    batch = any(line.get("pricing") == BATCH_PRICE for line in lines)
    return Summary(dict(counts), totals, costs, BATCH_PRICE if batch else LIST_PRICE)


def _cost_row(line: dict[str, Any]) -> tuple[str, str, int, float | None]:
    cost = line.get("cost_usd")
    value = float(cost) if isinstance(cost, int | float) else None
    return str(line.get("id")), str(line.get("status")), int(line.get("turns") or 0), value


def summary_lines(summary: Summary, *, rows: int = 30) -> list[str]:
    """Plain text: counts, cost (total, per task), cache hit ratio, clearing, then a per-task
    table (the first `rows` tasks; results.jsonl has all)."""
    counts = ", ".join(f"{n} {status}" for status, n in summary.counts.items() if n)
    mean = summary.cost_usd / len(summary.costs) if summary.costs else 0.0
    ratio = summary.cache_hit_ratio
    s = summary.sums
    head = [
        f"batch: {summary.tasks} tasks: {counts or 'none'}",
        f"  cost: {fmt_usd(summary.cost_usd)} total, {fmt_usd(mean)} per finished task"
        + (" (batch price: half of list)" if summary.pricing == BATCH_PRICE else ""),
        f"  cache: {'-' if ratio is None else f'{ratio:.0%}'} of prompt tokens read from cache",
        f"  clearing: {s['cleared_input_tokens']} input tokens cleared, "
        f"{s['cleared_tool_uses']} tool uses, {s['cleared_thinking_turns']} thinking turns",
    ]
    width = max([len("task"), *(len(row[0]) for row in summary.costs[:rows])])
    table = [f"  {'task':<{width}}  {'status':<7} {'turns':>5}  cost"]
    table += [_row(row, width) for row in summary.costs[:rows]]
    more = len(summary.costs) - rows
    tail = [f"  ... {more} more in results.jsonl"] if more > 0 else []
    return head + (table if summary.costs else []) + tail


def _row(row: tuple[str, str, int, float | None], width: int) -> str:
    task_id, status, turns, cost = row
    return f"  {task_id:<{width}}  {status:<7} {turns:>5}  {fmt_usd(cost)}"
