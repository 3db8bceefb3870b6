"""Rich renderables for the sessions commands: lists, show, stats, simulate and tune.

Pure: the values of `sessions/` in, renderables out; the CLI prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from agentctl.render.chart import prompt_chart
from agentctl.render.format import fmt_compact, fmt_cost, fmt_int, fmt_ratio, fmt_usd
from agentctl.render.safe import safe_text
from agentctl.render.sessions_list import PAD
from agentctl.render.sessions_list import add_row as _add
from agentctl.render.sessions_list import plain_table as _table
from agentctl.render.sessions_list import sessions_table as sessions_table
from agentctl.render.table import summary_table, turn_table
from agentctl.sessions.across import REPLAY_NOTE, ModelReplay, ModelTuning, Robust
from agentctl.sessions.breakeven import EditBalance
from agentctl.sessions.report import (
    Remedy,
    Stats,
    Tuning,
    WhatIf,
    recorded_priced,
    recorded_trigger,
    result_of,
)
from agentctl.sessions.simulate import (
    LIMITS_NOTE,
    EstimatorFit,
    Simulation,
    replay_matches,
)
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import HIDES_NOTES_NOTE, Candidate
from agentctl.types import Turn

# The `sessions list` table and the table helpers live in render.sessions_list (light: the
# list does not import the replay code this module draws).
_PAD = PAD


def show_view(
    session: Transcript, recorded: Simulation, trigger: int | None, width: int | None = None
) -> RenderableType:
    """`sessions show`: the per-turn table, the summary, the memory operations."""
    events = list(recorded.turns)
    task = session.header.task_source or "-"
    parts: list[RenderableType] = [
        safe_text(f"session {session.id}  task {task}  model {session.model}", "bold", keep=""),
        turn_table(events, trigger=trigger, width=width),
        summary_table(result_of(session, recorded), events),
    ]
    head = session.header
    if head.forked_from or session.follow_ups:
        parts.insert(1, user_turns_table(session))
    ops = session.memory_ops
    if ops:
        table = _table("turn", "memory command", "path", "ok", title="memory operations")
        for turn, op in ops:
            command, path = safe_text(op.command, keep=""), safe_text(op.path, keep="")
            outcome = "denied" if op.denied else "yes" if op.ok else "FAILED"
            table.add_row(str(turn), command, path, outcome)
        # Each change is in the memory history under this session id and its turn.
        table.caption = safe_text(
            f"history: agentctl memory log --session {session.id}  (diff, revert: same id)",
            keep="",
        )
        parts.append(table)
    return Group(*parts)


def user_turns_table(session: Transcript) -> Table:
    """Where each user turn began: the task, each follow-up (`run --continue`); for a fork,
    the session and turn its history came from."""
    head = session.header
    table = _table("from turn", "user turn", title="user turns")
    first = (head.forked_at or 0) + 1
    if not head.forked_from:
        _add(table, str(first), _first_line(head.task), flex=1)
    elif first not in [turn for turn, _ in session.follow_ups]:
        _add(table, str(first), "(goes on from the forked history)", flex=1)
    for turn, text in session.follow_ups:
        _add(table, str(turn), _first_line(text), flex=1)
    table.columns[1].justify = "left"
    table.columns[1].no_wrap = False
    if head.forked_from:
        table.caption = safe_text(
            f"forked from session {head.forked_from} at turn {head.forked_at}", keep=""
        )
    return table


def _first_line(text: str) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= 70 else line[:69] + "…"


LEDGER_WIDE = (
    "turn", "cleared", "new", "rewritten", "premium", "saved/turn", "break-even", "net",
    "skip with\nclear_at_least",
)  # fmt: skip
# The same columns with headers on more lines: what fits 80 columns with every digit shown.
LEDGER_NARROW = (
    "turn", "cleared", "new", "rewrit-\nten", "premium", "saved/\nturn", "break-\neven", "net",
    "skip at\nclear_\nat_least",
)  # fmt: skip


def ledger_table(
    balances: Sequence[EditBalance], title: str = "", remedies: Sequence[Remedy] = ()
) -> RenderableType:
    """Per edit: what it saved against the cache rewrite it caused, and when it paid off."""
    if not balances:
        return Text("no edit applied: nothing cleared, no cache rewrite")
    title = title or "cache accounting per edit (saved on later turns vs cache rewrite)"
    table = Narrowing(
        _ledger(balances, LEDGER_WIDE, title), _ledger(balances, LEDGER_NARROW, title)
    )
    losses = sum(1 for b in balances if b.net_usd < 0)
    if not losses:
        return table
    note = Text(
        f"{losses} of {len(balances)} edits were net losses within the run. A clear_at_least "
        "at the value shown skips that edit on its turn (and any smaller one); the whole run "
        "replayed with it:"
        if remedies
        else f"{losses} of {len(balances)} edits were net losses within the run. A "
        "clear_at_least at the value shown skips that edit on its turn (and any smaller one)."
    )
    lines = [
        Text(
            f"  clear_at_least = {fmt_int(r.clear_at_least)}: {fmt_cost(r.cost_usd)} "
            f"(without it: {fmt_cost(r.base_cost_usd)})"
        )
        for r in remedies
    ]
    return Group(table, note, *lines)


def _ledger(balances: Sequence[EditBalance], headers: Sequence[str], title: str) -> Table:
    table = _table(*headers, title=title)
    for b in balances:
        style = "red" if b.net_usd < 0 else "green"
        avoid = b.avoid_with_clear_at_least
        _add(
            table, str(b.turn), fmt_int(b.cleared_input_tokens), fmt_int(b.newly_cleared),
            fmt_int(b.rewritten), fmt_usd(b.premium_usd), fmt_usd(b.saving_per_turn_usd),
            "never" if b.break_even_turn is None else f"turn {b.break_even_turn}",
            Text(fmt_usd(b.net_usd, signed=True), style=style),
            "" if avoid is None else f">= {fmt_int(avoid)}",
        )  # fmt: skip
    return table


class Narrowing:
    """`wide` where it fits whole, else `narrow` (the same cells under shorter headers)."""

    def __init__(self, wide: Table, narrow: Table) -> None:
        self.wide, self.narrow = wide, narrow

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.wide if whole_width(self.wide) <= options.max_width else self.narrow


def whole_width(table: Table) -> int:
    """The columns a `_table` needs to show every cell and header line uncut (Rich's own
    measure undercounts the separators): widest cell or header line, plus two per gap."""
    widths = [
        max(column.min_width or 0, *(cell_len(line) for line in str(column.header).split("\n")))
        for column in table.columns
    ]
    return sum(widths) + 2 * (len(widths) - 1)


def ledger_line(balances: Sequence[EditBalance] | None, session: str) -> str:
    """One line for the end of a run: how many edits paid for their cache rewrite ("" if none)."""
    if balances is None:
        return "cache accounting per edit: n/a (no price for this model)"
    if not balances:
        return ""
    paid = [b for b in balances if b.net_usd >= 0]
    lost = [b for b in balances if b.net_usd < 0]
    first, last = balances[0].turn, balances[-1].turn
    where = f"turn {first}" if first == last else f"turns {first}-{last}"
    return (
        f"cache accounting per edit: {len(balances)} edit(s) ({where}), "
        f"{len(paid)} paid off ({fmt_usd(sum(b.net_usd for b in paid), signed=True)}), "
        f"{len(lost)} did not ({fmt_usd(sum(b.net_usd for b in lost), signed=True)})\n"
        f"  the ledger: agentctl stats {session}"
    )


def comparison_table(recorded: Simulation, simulated: Simulation) -> Table:
    """Per turn, side by side: input, cleared, cache read/write and cost, recorded | simulated."""
    heads = ("input", "cleared", "cache\nread", "cache\nwrite", "cost")
    columns = ["turn", *heads, "", *heads]
    table = _table(*columns, title=f"per turn: recorded (left) | {simulated.label} (right)")
    table.padding = (0, 0, 0, 0)  # one space between columns: 75 columns wide in all
    rows = zip(recorded.turns, recorded.costs, simulated.turns, simulated.costs, strict=True)
    for rec, rec_cost, sim, sim_cost in rows:
        _add(table, str(rec.turn), *_cells(rec, rec_cost), "│", *_cells(sim, sim_cost))
    table.add_section()
    _add(table, "total", *_cells(recorded, recorded.cost_usd), "│",
         *_cells(simulated, simulated.cost_usd))  # fmt: skip
    return table


def _cells(figures: Turn | Simulation, cost: float | None) -> list[str]:
    """One turn's or a whole replay's figures: same columns either way."""
    u = figures.usage
    return [
        fmt_compact(u.input_tokens), fmt_compact(figures.cleared_input_tokens),
        fmt_compact(u.cache_read_input_tokens), fmt_compact(u.cache_creation_input_tokens),
        fmt_cost(cost),
    ]  # fmt: skip


def totals_table(
    recorded: Simulation, simulated: Simulation, replayed: Simulation, cal: EstimatorFit
) -> Table:
    """Totals of what happened and of the simulation, plus how faithful the replay is."""
    table = _table("", "recorded", simulated.label, title="totals")
    rows: tuple[tuple[str, Callable[[Simulation], str]], ...] = (
        ("prompt tokens (seen)", lambda s: fmt_int(s.usage.prompt_tokens)),
        ("cleared tokens", lambda s: fmt_int(s.cleared_input_tokens)),
        ("cache read", lambda s: fmt_int(s.usage.cache_read_input_tokens)),
        ("cache write", lambda s: fmt_int(s.usage.cache_creation_input_tokens)),
        ("cache hit ratio", lambda s: fmt_ratio(s.cache_hit_ratio)),
        ("peak prompt", lambda s: fmt_int(s.peak_prompt)),
        ("estimated cost", lambda s: fmt_cost(s.cost_usd)),
    )
    if recorded.usage.compactions or simulated.usage.compactions:
        rows += (("compactions", lambda s: fmt_int(s.usage.compactions)),)
    for label, get in rows:
        table.add_row(label, get(recorded), get(simulated))
    exact = replay_matches(recorded, replayed)
    fidelity = "exact" if exact else f"{_deviation(recorded, replayed):.1%} off (prompt tokens)"
    table.add_row("replay of recorded settings", fidelity, "")
    table.add_row("calibration factor", f"{cal.factor:.4f}", f"max error {cal.max_error:.1%}")
    return table


def _deviation(a: Simulation, b: Simulation) -> float:
    total = a.usage.prompt_tokens
    diff = sum(
        abs(x.usage.prompt_tokens - y.usage.prompt_tokens)
        for x, y in zip(a.turns, b.turns, strict=True)
    )
    return diff / total if total else 0.0


def tune_table(results: Sequence[Candidate], title: str) -> Table:
    """Candidates with their cost, tokens and cache hit ratio (and compactions, if any)."""
    squeezed = any(c.simulation.usage.compactions for c in results)
    table = _table(
        "#", "settings", "cost", "prompt\ntokens", "peak\nprompt", "cleared", "cache\nhit",
        *(["compac-\ntions"] if squeezed else []), title=title,
    )  # fmt: skip
    for index, c in enumerate(results, 1):
        sim = c.simulation
        label = c.label() + (" (hides notes)" if c.hides_notes else "")
        label += " ◀ recorded" if c.recorded else ""
        extra = [fmt_int(sim.usage.compactions)] if squeezed else []
        _add(
            table, str(index), label, fmt_cost(sim.cost_usd), fmt_int(sim.usage.prompt_tokens),
            fmt_int(sim.peak_prompt), fmt_int(sim.cleared_input_tokens),
            fmt_ratio(sim.cache_hit_ratio), *extra, flex=1,
        )  # fmt: skip
    table.columns[1].justify = "left"
    table.columns[1].no_wrap = False  # the label wraps (at spaces) on a narrow terminal
    return table


def show_report(session: Transcript, width: int | None) -> RenderableType:
    """`sessions show`: the per-turn table, summary and memory operations."""
    return show_view(session, recorded_priced(session), recorded_trigger(session), width)


def stats_view(stats: Stats, width: int) -> list[RenderableType]:
    """The chart, the per-edit ledger, the summary table."""
    session = stats.session
    title = f"session {session.id}: prompt size per turn ({session.model}){price_note(session)}"
    chart = prompt_chart(stats.rows, width=width, trigger=stats.trigger, title=title)
    summary = summary_table(result_of(session, stats.recorded), list(stats.recorded.turns))
    return [chart, ledger_table(stats.balances, remedies=stats.remedies), summary]


_PRICE_NOTES = {
    "batch": " (batch price: run through Message Batches)",
    "mixed": " (batch price, list price after a resume)",
}


def price_note(session: Transcript) -> str:
    """How the session's figures are priced, when not at list price ("" then)."""
    return _PRICE_NOTES.get(session.pricing, "")


def _honesty(session: Transcript, other_model: str = "") -> RenderableType:
    how = (
        "offline run: the emulator uses this same engine"
        if session.offline
        else ("real-API run: the server's decisions are reconstructed by the shared engine")
    )
    text = f"note: {LIMITS_NOTE}.\n({how})"
    if other_model and other_model != session.model:
        text += (
            f"\nThe profile names {other_model}; the replay keeps the recorded model "
            f"{session.model} (its prices and cache minimum); only editing and cache "
            "settings change."
        )
    return safe_text(text, "dim")


def models_table(rows: Sequence[ModelReplay], source: str) -> RenderableType:
    """`simulate --server-model all`: the simulated totals under each server model."""
    table = _table(
        "server model", "prompt\ntokens", "cleared", "cache\nread", "cache\nwrite",
        "cache\nhit", "peak\nprompt", "cost", "vs\nrecorded", "replay",
        title=f"{source} under every server model",
    )  # fmt: skip
    for row in rows:
        sim, ratio = row.simulated, row.cost_vs_recorded
        _add(
            table, row.model.name, fmt_int(sim.usage.prompt_tokens),
            fmt_int(sim.cleared_input_tokens), fmt_int(sim.usage.cache_read_input_tokens),
            fmt_int(sim.usage.cache_creation_input_tokens), fmt_ratio(sim.cache_hit_ratio),
            fmt_int(sim.peak_prompt), fmt_cost(sim.cost_usd),
            "n/a" if ratio is None else f"{ratio:.2f}x",
            "exact" if row.replay_exact else "differs",
        )  # fmt: skip
    table.columns[0].justify = "left"
    note = (
        f"note: {REPLAY_NOTE} (column `replay`: whether the recorded settings replayed under "
        "that model give the recorded usage and edits)."
    )
    return Group(table, safe_text(note, "dim"))


def tune_models_table(rows: Sequence[ModelTuning], robust: Robust) -> RenderableType:
    """`tune --server-model all`: the best candidate under each model, the recorded
    settings' cost there, and the robust choice (cheapest in the worst case)."""
    table = _table(
        "server model", "best settings", "cost", "recorded\nsettings", "robust\nchoice",
        title="best settings under every server model",
    )  # fmt: skip
    robust_costs = dict(robust.costs)
    for row in rows:
        _add(
            table, row.model.name, row.winner.label(), fmt_cost(row.winner.cost),
            fmt_cost(row.recorded.cost), fmt_cost(robust_costs[row.model.name]), flex=1,
        )  # fmt: skip
    table.columns[0].justify = table.columns[1].justify = "left"
    table.columns[1].no_wrap = False
    name, worst = robust.worst
    mark = " (the recorded settings)" if robust.recorded else ""
    lines = (
        f"robust choice: {robust.label()}{mark}: at most {fmt_cost(worst)} (under {name}); "
        "chosen as the candidate whose highest cost over the server models is lowest, ties "
        "to the lower mean cost.",
        f"note: {REPLAY_NOTE}.",
    )
    return Group(table, safe_text(lines[0], keep=""), safe_text(lines[1], "dim"))


def what_if_view(w: WhatIf) -> list[RenderableType]:
    head = safe_text(
        f"session {w.session.id}: recorded vs {w.profile_source}{price_note(w.session)}",
        "bold",
        keep="",
    )
    every = [models_table(w.by_model, w.profile_source)] if w.by_model else []
    return [
        head,
        comparison_table(w.recorded, w.simulated),
        totals_table(w.recorded, w.simulated, w.replayed, w.calibration),
        ledger_table(w.recorded_ledger, "cache accounting per edit: recorded", w.recorded_remedies),
        ledger_table(
            w.simulated_ledger,
            f"cache accounting per edit: {w.profile_source}",
            w.simulated_remedies,
        ),
        *every,
        _honesty(w.session, w.profile_model),
    ]


def tuning_view(t: Tuning, top: int) -> list[RenderableType]:
    best = t.ranked[: max(top, 1)]
    rec = t.recorded
    saving = rec.cost - t.winner.cost
    head = Text(
        f"session {t.session.id}: {len(t.ranked)} settings replayed; best saves "
        f"${saving:.4f} ({saving / rec.cost:.1%}) against the recorded settings"
        if rec.cost
        else f"session {t.session.id}: {len(t.ranked)} settings replayed",
        style="bold",
    )
    head.append(price_note(t.session), style="bold")
    if t.within is not None:
        limit = t.objective_json()["limit_usd"]
        head.append(
            f"; ranked by prompt tokens among settings costing at most {t.within:g}x no"
            f" editing (${limit:.4f})",
            style="bold",
        )
    return [
        head,
        tune_table(best + ([] if rec in best else [rec]), "cheapest settings (estimated cost)"
                   if t.within is None else "fewest tokens within the cost limit, then cheapest"),
        tune_table(t.front, "Pareto front: cost vs peak prompt size"),
        *([tune_models_table(t.by_model, t.robust)] if t.robust else []),
        *([safe_text(f"note: {HIDES_NOTES_NOTE}.", "dim")] if any(
            c.hides_notes for c in [*best, rec, *t.front]) else []),
        _honesty(t.session),
    ]  # fmt: skip
