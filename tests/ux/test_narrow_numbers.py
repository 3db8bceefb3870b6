"""Numbers are never cut or split on a narrow terminal: the per-edit ledger of `stats` and
`profile show`, at 60 to 120 columns."""

from __future__ import annotations

import pytest
from rich.console import Console

from agentctl.agent.request import build_context_management
from agentctl.cli.profile import render_rich
from agentctl.profile.loader import resolve_profile
from agentctl.profile.show import show_data
from agentctl.render.format import fmt_int
from agentctl.render.sessions_view import ledger_table
from agentctl.sessions.breakeven import EditBalance

BALANCES = [
    EditBalance(
        turn=t, cleared_input_tokens=10_983 * i, tool_use_cleared_tokens=10_983 * i,
        newly_cleared=11_071, rewritten=6_352 + i, premium_usd=0.0146, saving_per_turn_usd=0.0022,
        turns_left=23 - t, break_even_turn=None if i == 7 else t + 6,
    )
    for i, t in enumerate((7, 9, 11, 13, 15, 17, 21), start=1)
]  # fmt: skip


def screen(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_ledger_shows_every_digit(width: int) -> None:
    text = screen(ledger_table(BALANCES), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    for b in BALANCES:
        assert fmt_int(b.cleared_input_tokens) in text and fmt_int(b.rewritten) in text
    last = BALANCES[-1].avoid_with_clear_at_least
    assert last is not None and f">= {fmt_int(last)}" in text


def test_the_ledger_keeps_its_one_line_headers_where_they_fit() -> None:
    assert "skip with" in screen(ledger_table(BALANCES), 100)
    assert "skip at" in screen(ledger_table(BALANCES), 80)


@pytest.mark.parametrize("width", [60, 80, 100, 120])
@pytest.mark.dates
def test_profile_show_never_splits_a_number_or_cuts_a_key(width: int) -> None:
    profile, _ = resolve_profile(None, ["limits.max_input_tokens=50000000"])
    data = show_data(profile, [], build_context_management(profile.context_editing))
    console = Console(width=width, record=True, color_system=None)
    render_rich(data, {}, console)
    text = console.export_text()
    assert "…" not in text
    line = next(x for x in text.splitlines() if "limits.max_input_tokens" in x)
    assert "50000000" in line
    assert any("context_editing.tool_uses.clear_tool_inputs" in x for x in text.splitlines())
