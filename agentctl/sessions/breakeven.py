"""Cache accounting per edit: what each clearing saved on later turns against the rewrite it caused.

The model (ours, from usage figures alone, so it works on recorded and simulated runs alike):
an edit *event* is a turn whose cleared tokens grew over the previous turn's (the server is
stateless and reports the whole clearing every turn; only the growth is new).
- newly cleared N = cleared(t) - cleared(t-1): tokens no longer sent from turn t on.
- Without the edit, turn t would have read the previous turn's prompt from cache. With it,
  it read only `read(t)`; the rest of that old prefix, minus the N cleared tokens, was written
  again: rewritten R = prompt(t-1) - N - read(t) (0 when caching was off).
- premium = R x (write price - read price); saving per turn = N x read price (the cleared
  tokens would have been cache reads; input price when caching was off).
- break-even: the first turn k >= t where (k - t + 1) x saving >= premium; "never" if the
  run ended first. A net loss could have been avoided by a `clear_at_least` above the
  tokens clear_tool_uses cleared on that turn (the clearing then waits until it frees more);
  clear_thinking has no such threshold, so a loss made by thinking alone has no suggestion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.prices import Price, Pricing
from agentctl.types import Turn, Usage

CLEAR_TOOL_USES = "clear_tool_uses_20250919"


def tool_use_cleared_tokens(turn: Turn) -> int:
    """What clear_tool_uses cleared on `turn` (the part a clear_at_least can hold back)."""
    return sum(e.cleared_input_tokens for e in turn.applied_edits if e.type == CLEAR_TOOL_USES)


@dataclass(frozen=True)
class EditBalance:
    """One edit event and whether it paid for itself within the run."""

    turn: int
    cleared_input_tokens: int  # everything the edits cleared on that turn
    tool_use_cleared_tokens: int  # the clear_tool_uses part of it
    newly_cleared: int
    rewritten: int
    premium_usd: float
    saving_per_turn_usd: float
    turns_left: int  # turns from this one to the end of the run, this one included
    break_even_turn: int | None  # None: never within the run

    @property
    def saved_usd(self) -> float:
        return self.saving_per_turn_usd * self.turns_left

    @property
    def net_usd(self) -> float:
        return self.saved_usd - self.premium_usd

    @property
    def avoid_with_clear_at_least(self) -> int | None:
        """For a net loss: the smallest clear_at_least that skips clear_tool_uses on this turn."""
        if self.net_usd >= 0 or self.tool_use_cleared_tokens <= 0:
            return None
        return self.tool_use_cleared_tokens + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "cleared_input_tokens": self.cleared_input_tokens,
            "newly_cleared": self.newly_cleared,
            "rewritten": self.rewritten,
            "premium_usd": round(self.premium_usd, 6),
            "saving_per_turn_usd": round(self.saving_per_turn_usd, 6),
            "saved_usd": round(self.saved_usd, 6),
            "net_usd": round(self.net_usd, 6),
            "break_even_turn": self.break_even_turn,
            "avoid_with_clear_at_least": self.avoid_with_clear_at_least,
        }


def edit_balances(turns: Sequence[Turn], price: Price | Sequence[Price]) -> list[EditBalance]:
    """One EditBalance per edit event of the run, in turn order. `price`: one for every turn,
    or each turn's as billed (`Pricing.billed`); an edit is weighed at its own turn's."""
    prices = [price] * len(turns) if isinstance(price, Price) else list(price)
    balances: list[EditBalance] = []
    for index in range(1, len(turns)):
        before, now = turns[index - 1], turns[index]
        newly = now.cleared_input_tokens - before.cleared_input_tokens
        if newly > 0:
            balances.append(_balance(before, now, newly, len(turns) - index, prices[index]))
    if turns and turns[0].cleared_input_tokens > 0:  # cleared on the very first request
        first, left = turns[0], len(turns)
        balances.insert(0, _balance(None, first, first.cleared_input_tokens, left, prices[0]))
    return balances


def _balance(
    before: Turn | None, now: Turn, newly: int, turns_left: int, price: Price
) -> EditBalance:
    usage = now.usage
    cached = before is not None and _cached(before.usage)
    old_price = price.cache_read if cached else price.input
    # A rewrite costs the 1-hour premium when the turn's writes were 1-hour ones (as reported;
    # a transcript without the split counts as 5-minute writes).
    write_1h = usage.cache_split_known and usage.ephemeral_1h_input_tokens
    write_price = price.cache_write_1h if write_1h else price.cache_write_5m
    rewritten = 0
    if before is not None and cached:
        rewritten = max(before.usage.prompt_tokens - newly - usage.cache_read_input_tokens, 0)
    premium = rewritten * (write_price - old_price) / 1_000_000
    saving = newly * old_price / 1_000_000
    return EditBalance(
        turn=now.turn,
        cleared_input_tokens=now.cleared_input_tokens,
        tool_use_cleared_tokens=tool_use_cleared_tokens(now),
        newly_cleared=newly,
        rewritten=rewritten,
        premium_usd=premium,
        saving_per_turn_usd=saving,
        turns_left=turns_left,
        break_even_turn=_break_even(now.turn, premium, saving, turns_left),
    )


def _cached(usage: Usage) -> bool:
    return usage.cache_read_input_tokens + usage.cache_creation_input_tokens > 0


def _break_even(turn: int, premium: float, saving: float, turns_left: int) -> int | None:
    if premium <= 0:
        return turn
    if saving <= 0:
        return None
    needed = -(-premium // saving)  # ceil: turns of saving that cover the premium
    return turn + int(needed) - 1 if needed <= turns_left else None


def balances_for_run(turns: Sequence[Turn], pricing: Pricing) -> list[EditBalance] | None:
    """The ledger from a run's turns (None: the model has no price)."""
    billed = pricing.billed
    return None if billed is None else edit_balances(turns, billed)
