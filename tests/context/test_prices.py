"""The price table: family matching, overrides, minimum cacheable lengths, cost arithmetic."""

from __future__ import annotations

import dataclasses
import math

import pytest

from agentctl.context.prices import MODELS, Price, Pricing, min_cacheable_tokens, price_for
from agentctl.profile.settings import PriceOverride
from agentctl.types import Usage


@pytest.mark.parametrize(
    ("model", "input_price", "minimum"),
    [
        ("claude-sonnet-5", 2, 1024),
        ("claude-sonnet-5-20260901", 2, 1024),
        ("claude-sonnet-5-5", 3, 1024),
        ("claude-opus-5-5", 4, 512),
        ("claude-haiku-5-5", 1, 4096),
        ("claude-opus-4-5-20251101", 5, 4096),
        ("claude-opus-4-20250514", 15, 1024),
        ("claude-opus-4-1-20250805", 15, 1024),
        ("claude-sonnet-4-5-20250929", 3, 1024),
        ("claude-haiku-4-5", 1, 4096),
        ("claude-3-5-haiku-latest", 0.8, 2048),
        ("claude-3-haiku-20240307", 0.25, 2048),
    ],
)
def test_family_lookup(model: str, input_price: float, minimum: int) -> None:
    price = price_for(model)
    assert price is not None and price.input == input_price
    assert min_cacheable_tokens(model) == minimum


def test_unknown_models() -> None:
    assert price_for("gpt-4o") is None
    assert price_for("claude-mythos-5-1") is None  # row exists, price unknown
    assert min_cacheable_tokens("claude-mythos-5-1") == 512
    assert min_cacheable_tokens("mystery") == 1024
    assert math.isnan(Pricing.of("gpt-4o").cost(Usage(1, 1)))
    assert Pricing.of("gpt-4o").usd(Usage(1, 1)) is None


def test_every_row_names_its_source_and_uses_the_multipliers() -> None:
    for name, info in MODELS.items():
        assert info.source, name
        if info.price and name not in ("claude-fable-5-1", "claude-3-haiku"):  # 1.2x in DOC
            assert info.price.cache_write_5m == pytest.approx(info.price.input * 1.25), name
            assert info.price.cache_write_1h == pytest.approx(info.price.input * 2), name


def test_overrides_win_exact_then_family() -> None:
    override = PriceOverride(input=1, output=2, cache_write_5m=3, cache_write_1h=4, cache_read=5)
    assert price_for("claude-sonnet-5", {"claude-sonnet-5": override}) == Price(1, 2, 3, 4, 5)
    assert price_for("claude-sonnet-5-20260901", {"claude-sonnet-5": override}) == Price(
        1, 2, 3, 4, 5
    )
    assert price_for("claude-sonnet-5-5", {"claude-sonnet-5": override}) == Price(
        3, 15, 3.75, 6, 0.3
    )


USAGE = Usage(
    input_tokens=1_000_000,
    output_tokens=100_000,
    cache_creation_input_tokens=300_000,
    cache_read_input_tokens=2_000_000,
)


def test_cost_splits_writes_by_ttl() -> None:
    usage = USAGE
    # Opus 5.5: 4 in, 20 out, 5 (5m), 8 (1h), 0.20 read.
    expected = 4 + 2 + 0.2 * 5 + 0.1 * 8 + 2 * 0.2
    pricing = Pricing.of("claude-opus-5-5")
    assert pricing.cost(usage, write_1h=100_000) == pytest.approx(expected)
    assert pricing.cost(usage) == pytest.approx(4 + 2 + 0.3 * 5 + 0.4)
    # With a 1 h TTL every write is a 1 h write unless the API said otherwise.
    one_hour = Pricing.of("claude-opus-5-5", cache_ttl="1h")
    assert one_hour.cost(usage) == pytest.approx(4 + 2 + 0.3 * 8 + 0.4)
    assert one_hour.cost(usage, write_1h=100_000) == pytest.approx(expected)


def test_batch_pricing_halves_every_token_kind() -> None:
    listed = Pricing.of("claude-opus-5-5")
    batch = Pricing.of("claude-opus-5-5", batch=True)
    assert batch.cost(USAGE) == pytest.approx(listed.cost(USAGE) / 2)
    assert batch.cost(USAGE, write_1h=100_000) == pytest.approx((4 + 2 + 1 + 0.8 + 0.4) / 2)
    assert math.isnan(Pricing.of("gpt-4o", batch=True).cost(USAGE))


def test_batch_pricing_keeps_web_search_fees_at_list_price() -> None:
    """The batch discount covers tokens; a web search costs its $10 per 1,000 either way."""
    searched = dataclasses.replace(USAGE, web_search_requests=3)
    listed = Pricing.of("claude-opus-5-5")
    batch = Pricing.of("claude-opus-5-5", batch=True)
    assert batch.per_search == listed.per_search == pytest.approx(0.01)
    assert batch.cost(searched) == pytest.approx(listed.cost(USAGE) / 2 + 3 * 0.01)
    assert listed.cost(searched) == pytest.approx(listed.cost(USAGE) + 3 * 0.01)
