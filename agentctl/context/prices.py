"""List prices and minimum cacheable prompt lengths per model family, in one table.

Sources (the pricing docs): DOC = official pricing / prompt-caching docs; OBS = a live probe
quoting the official page; DERIVED = cache columns from the documented multipliers (5m write
1.25x, 1h write 2x, read 0.1x of input); ASSUMED = ours, no public figure: check before relying
on it, and override it in a profile (`[prices."<model>"]`). Prices change: the table is a default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentctl.types import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


@dataclass(frozen=True)
class ModelInfo:
    """One row of the table: price (None if unknown), minimum cacheable length, provenance,
    and the context window (prompt + output) in tokens."""

    price: Price | None
    min_cacheable: int
    source: str
    # The standard Claude window (public "prompt is too long: N tokens > 200000 maximum"
    # errors); the rows `/v1/models` reports with `max_input_tokens: 1000000` set MILLION.
    context_window: int = 200_000


MILLION = 1_000_000  # `/v1/models` max_input_tokens of the current models (2026-09 listing)


def _derived(inp: float, out: float, read_ratio: float = 0.1) -> Price:
    """A price whose cache columns follow the standard multipliers (C.2)."""
    return Price(inp, out, round(inp * 1.25, 6), round(inp * 2.0, 6), round(inp * read_ratio, 6))


# Keys are model ids or family prefixes: "claude-opus-4-5" matches "claude-opus-4-5-20251101".
MODELS: dict[str, ModelInfo] = {
    # 5.x family
    "claude-opus-5-5": ModelInfo(
        Price(4, 20, 5, 8, 0.20), 512, "OBS S9 (official page 2026-09-26)", context_window=MILLION
    ),
    "claude-opus-5": ModelInfo(
        _derived(5, 25), 512, "DOC worked example; cache DERIVED", context_window=MILLION
    ),
    "claude-sonnet-5-5": ModelInfo(
        _derived(3, 15), 1024, "ASSUMED: Sonnet 4.6 price, Sonnet 5 min"
    ),
    # OBS $2/$10; a 2026-08 doc note says an introductory $2/$10 ended 2026-08-31 (-> $3/$15).
    "claude-sonnet-5": ModelInfo(
        Price(2, 10, 2.5, 4, 0.20), 1024, "OBS S9; conflicting DOC note", context_window=MILLION
    ),
    "claude-haiku-5-5": ModelInfo(_derived(1, 5), 4096, "ASSUMED: Haiku 4.5 price and min"),
    "claude-fable-5-1": ModelInfo(
        _derived(10, 50, 0.025),
        512,
        "3P price; read 0.025x DOC; writes DERIVED",
        context_window=MILLION,
    ),
    "claude-mythos-5-1": ModelInfo(None, 512, "DOC min; price unknown"),
    "claude-fable-5": ModelInfo(None, 512, "DOC min; price unknown", context_window=MILLION),
    "claude-mythos-5": ModelInfo(None, 512, "DOC min; price unknown"),
    "claude-mythos-preview": ModelInfo(None, 2048, "DOC min; price unknown"),
    # 4.x family
    "claude-opus-4-8": ModelInfo(
        _derived(5, 25), 1024, "DOC min; price ASSUMED = Opus 4.7", context_window=MILLION
    ),
    "claude-opus-4-7": ModelInfo(_derived(5, 25), 2048, "DOC", context_window=MILLION),
    "claude-opus-4-6": ModelInfo(_derived(5, 25), 4096, "DOC", context_window=MILLION),
    "claude-opus-4-5": ModelInfo(_derived(5, 25), 4096, "DOC"),
    "claude-opus-4-1": ModelInfo(_derived(15, 75), 1024, "DOC"),
    "claude-opus-4": ModelInfo(_derived(15, 75), 1024, "DOC"),
    # Sonnet 4.6 min: 1,024 in the 2026-09 page, 2,048 in the 2026-03 page (conflict).
    "claude-sonnet-4-6": ModelInfo(
        _derived(3, 15), 1024, "DOC (min conflicts between pages)", context_window=MILLION
    ),
    "claude-sonnet-4-5": ModelInfo(_derived(3, 15), 1024, "DOC", context_window=MILLION),
    "claude-sonnet-4": ModelInfo(_derived(3, 15), 1024, "DOC"),
    "claude-haiku-4-5": ModelInfo(_derived(1, 5), 4096, "DOC"),
    # 3.x family
    "claude-3-7-sonnet": ModelInfo(
        _derived(3, 15), 1024, "historical list price, not in the current price pages (retired)"
    ),
    "claude-3-5-sonnet": ModelInfo(
        _derived(3, 15), 1024, "historical list price, not in the current price pages (retired)"
    ),
    "claude-3-5-haiku": ModelInfo(Price(0.80, 4, 1, 1.6, 0.08), 2048, "DOC"),
    "claude-3-opus": ModelInfo(
        _derived(15, 75), 1024, "historical list price, not in the current price pages (retired)"
    ),
    "claude-3-haiku": ModelInfo(Price(0.25, 1.25, 0.30, 0.50, 0.03), 2048, "DOC (2026-03 page)"),
}
DEFAULT_MIN_CACHEABLE = 1024  # ours, for ids the table does not know
# Server tools (DOC, web search tool page and pricing page): web search is $10 per 1,000
# searches on top of tokens; web fetch costs only the tokens it adds. Code execution is billed
# by container time, which the API does not report per response: not modelled (docs/tools.md).
WEB_SEARCH_USD = 10.0 / 1000
# Message Batches bill every token kind at half the list price (the pricing docs: batch is
# 50% of input and output; the multipliers stack, so cache writes and reads are halved too).
# The batch discount is stated for tokens only: web search fees stay at list price.
BATCH_FACTOR = 0.5


def model_info(model: str) -> ModelInfo | None:
    """The table row for a model id, or None if no family matches."""
    key = _best_key(model, list(MODELS))
    return MODELS[key] if key else None


def _best_key(model: str, keys: list[str]) -> str | None:
    if model in keys:
        return model
    matches = [k for k in keys if model.startswith(k + "-")]
    return max(matches, key=len) if matches else None


def price_for(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`: the most specific key among profile overrides and the table
    wins (an override for "claude-sonnet-5" does not reach "claude-sonnet-5-5"); on equal
    keys the override wins."""
    overrides = overrides or {}
    key = _best_key(model, [*overrides, *MODELS])
    if key is None:
        return None
    if key in overrides:  # a profile's table (a subclass carrying the key definitions)
        return Price(**{f.name: getattr(overrides[key], f.name) for f in fields(Price)})
    return MODELS[key].price


DEFAULT_CONTEXT_WINDOW = 200_000  # ours, for ids the table does not know


def context_window(model: str) -> int:
    """Most tokens (prompt plus output) one request to `model` may hold."""
    info = model_info(model)
    return info.context_window if info else DEFAULT_CONTEXT_WINDOW


def min_cacheable_tokens(model: str) -> int:
    """Shortest prefix the cache stores for `model` (C.3); shorter prefixes are not written."""
    info = model_info(model)
    return info.min_cacheable if info else DEFAULT_MIN_CACHEABLE


@dataclass(frozen=True)
class Pricing:
    """What a run's tokens cost: one model's price (with the profile's overrides) and cache TTL.

    Built once from the profile (`Profile.pricing`) and used by the run, the session list,
    `stats`, `simulate`, `tune` and the per-edit ledger, so they all price alike.
    """

    model: str
    price: Price | None  # None: the model has no known price
    cache_ttl: str = "5m"
    per_search: float = WEB_SEARCH_USD  # USD per web search request
    batch: bool = False  # sent through the Message Batches API: BATCH_FACTOR of token prices

    @classmethod
    def of(
        cls,
        model: str,
        overrides: Mapping[str, Price] | None = None,
        cache_ttl: str = "5m",
        *,
        batch: bool = False,
    ) -> Pricing:
        return cls(model, price_for(model, overrides), cache_ttl, batch=batch)

    @property
    def billed(self) -> Price | None:
        """The token price as billed: `price`, or BATCH_FACTOR of every column for a batch
        (what the per-edit ledger weighs rewrites and savings with)."""
        if self.price is None or not self.batch:
            return self.price
        p = self.price
        columns = (p.input, p.output, p.cache_write_5m, p.cache_write_1h, p.cache_read)
        return Price(*(value * BATCH_FACTOR for value in columns))

    def write_1h(self, usage: Usage, reported: int | None = None) -> int:
        """Cache-write tokens billed at the 1 h rate: `reported`, else what the API reported
        (`usage.cache_creation.ephemeral_1h_input_tokens`), else (a transcript without the
        split) every write when the TTL is 1 h."""
        if reported is None and usage.cache_split_known:
            reported = usage.ephemeral_1h_input_tokens
        if reported is None:
            reported = usage.cache_creation_input_tokens if self.cache_ttl == "1h" else 0
        return min(reported, usage.cache_creation_input_tokens)

    def cost(self, usage: Usage, write_1h: int | None = None) -> float:
        """USD of one response's usage (NaN when the price is unknown); `write_1h` as reported."""
        if self.price is None:
            return math.nan
        price = self.price
        one_hour = self.write_1h(usage, write_1h)
        total = (
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + (usage.cache_creation_input_tokens - one_hour) * price.cache_write_5m
            + one_hour * price.cache_write_1h
            + usage.cache_read_input_tokens * price.cache_read
        )
        tokens = total / 1_000_000 * (BATCH_FACTOR if self.batch else 1.0)
        # Search fees are not halved via batches: the batch discount covers tokens only.
        return tokens + usage.web_search_requests * self.per_search

    def usd(self, usage: Usage, write_1h: int | None = None) -> float | None:
        """`cost`, with None for an unknown price (for JSON and tables)."""
        return None if self.price is None else self.cost(usage, write_1h)
