"""What `show`, `stats`, `simulate` and `tune` compute for one session: values only.

The commands stay thin: they load a session, hand it here and draw the result with
`render.sessions_view`. Prices: every figure of a session (recorded, replayed, simulated) is
priced with the recorded profile's price table and overrides, so a comparison changes
settings only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.context.calibration import ResolvedModel, resolve_server_model
from agentctl.context.edits import trigger_from
from agentctl.context.server_model import SERVER_MODELS, ServerModel
from agentctl.errors import UsageError
from agentctl.profile.loader import resolve_profile
from agentctl.profile.settings import Profile
from agentctl.sessions.across import (
    ModelReplay,
    ModelTuning,
    Robust,
    replays_by_model,
    robust_choice,
    wants_all,
)
from agentctl.sessions.breakeven import EditBalance, edit_balances
from agentctl.sessions.catalog import session_profile, turn_pricing
from agentctl.sessions.chart_rows import ChartRow, chart_rows
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import (
    LIMITS_NOTE,
    EstimatorFit,
    Simulation,
    calibrate,
    recorded_run,
    replay_matches,
    simulate,
)
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import (
    Candidate,
    default_grid,
    descent_grid,
    fill_defaults,
    no_editing,
    pareto_front,
    parse_grid,
    ranked,
    recorded_candidate,
    recorded_setting,
    replay,
    sweep,
    write_profile,
)
from agentctl.types import ResultEvent, Turn, usd_json


def ledger(session: Transcript, prices: Profile, sim: Simulation) -> list[EditBalance]:
    """The per-edit cache accounting of one (recorded or simulated) run, each edit at its
    turn's price as billed (batch or list); [] without a price."""
    billed = [turn_pricing(session, prices, t).billed for t in session.turns]
    known = [price for price in billed if price is not None]
    return edit_balances(sim.turns, known) if known and len(known) == len(billed) else []


@dataclass(frozen=True)
class Remedy:
    """A clear_at_least that skips net-loss edits, checked by replaying the whole run with it."""

    clear_at_least: int
    cost_usd: float | None
    base_cost_usd: float | None  # the same settings without it

    def to_json(self) -> dict[str, Any]:
        return {
            "clear_at_least": self.clear_at_least,
            "cost_usd": usd_json(self.cost_usd),
            "base_cost_usd": usd_json(self.base_cost_usd),
        }


def remedies(
    session: Transcript,
    settings: Profile,
    prices: Profile,
    balances: Sequence[EditBalance],
    *,
    base_cost: float | None,
    factor: float = 1.0,
    server: ServerModel | None = None,
) -> list[Remedy]:
    """Replay the run with the smallest, middle and largest suggested clear_at_least."""
    values = sorted({b.avoid_with_clear_at_least or 0 for b in balances} - {0})
    if not values or not settings.context_editing.tool_uses.enabled:
        return []
    out: list[Remedy] = []
    for value in sorted({values[0], values[len(values) // 2], values[-1]}):
        editing = settings.context_editing
        tool_uses = dataclasses.replace(editing.tool_uses, clear_at_least=value)
        changed = dataclasses.replace(editing, tool_uses=tool_uses)
        other = dataclasses.replace(settings, context_editing=changed)
        replay = ReplaySettings.from_profile(other, server)
        cost = simulate(session, replay, prices, factor=factor).cost_usd
        out.append(Remedy(value, cost, base_cost))
    return out


def recorded_trigger(session: Transcript) -> int | None:
    """The recorded clear_tool_uses input-token trigger, if the run had one."""
    body = session.turns[0].body if session.turns else {}
    return trigger_from(body.get("context_management"))


def result_of(session: Transcript, run: Simulation) -> ResultEvent:
    """The run's ResultEvent, its totals the sum of `run`'s turns at their costs (rebuilt from
    the turns when the run did not finish)."""
    return ResultEvent(session.id, len(session.turns), session.status, session.answer, run.totals)


def recorded_result(session: Transcript) -> tuple[ResultEvent, list[Turn]]:
    """A session's summary figures so far, priced as `sessions show` prices them: for the
    summary of a run that stopped early (it has no result event)."""
    recorded = recorded_priced(session)
    return result_of(session, recorded), list(recorded.turns)


def recorded_priced(session: Transcript) -> Simulation:
    """What happened, at the recorded profile's prices (a turn without one: None)."""
    return recorded_run(session, session_profile(session))


@dataclass(frozen=True)
class Stats:
    """`stats`: the recorded run, its per-edit ledger and the ledger's replayed remedies; the
    chart rows, the trigger and the totals are functions of them."""

    session: Transcript
    recorded: Simulation
    balances: list[EditBalance]
    remedies: list[Remedy]

    @property
    def rows(self) -> list[ChartRow]:
        return chart_rows(self.recorded.turns)

    @property
    def trigger(self) -> int | None:
        return recorded_trigger(self.session)

    def to_json(self) -> dict[str, Any]:
        rows = [dataclasses.asdict(r) for r in self.rows]
        return {
            "session": self.session.id,
            "model": self.session.model,
            "pricing": self.session.pricing,
            "trigger": self.trigger,
            "turns": rows,
            "totals": _totals_json(self.recorded),
            "edits": [b.to_json() for b in self.balances],
            "remedies": [r.to_json() for r in self.remedies],
        }


def stats_of(session: Transcript) -> Stats:
    """Everything `stats` shows, from the recorded usage (remedies by replay)."""
    profile = session_profile(session)
    recorded = recorded_run(session, profile)
    balances = ledger(session, profile, recorded)
    cal = calibrate(session, ReplaySettings.from_profile(profile))
    fixes = remedies(
        session, profile, profile, balances, base_cost=recorded.cost_usd, factor=cal.factor
    )
    return Stats(session, recorded, balances, fixes)


@dataclass(frozen=True)
class WhatIf:
    """`simulate`: what happened, its faithful replay, and the replay under another profile."""

    session: Transcript
    profile_source: str
    profile_model: str
    calibration: EstimatorFit
    recorded: Simulation
    replayed: Simulation
    simulated: Simulation
    recorded_ledger: list[EditBalance]
    simulated_ledger: list[EditBalance]
    recorded_remedies: list[Remedy]
    simulated_remedies: list[Remedy]
    server_model: ResolvedModel
    by_model: tuple[ModelReplay, ...] = ()  # --server-model all: every preset

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session.id,
            "profile": self.profile_source,
            "pricing": self.session.pricing,  # both sides priced as the session was billed
            "server_model": self.server_model.to_json(),
            **({"server_models": [m.to_json() for m in self.by_model]} if self.by_model else {}),
            "calibration": self.calibration.to_json(),
            "reconstructed": not self.session.offline,
            "limits": LIMITS_NOTE,
            "turns": _turns_json(self.recorded, self.simulated),
            "totals": {
                "recorded": _totals_json(self.recorded),
                "simulated": _totals_json(self.simulated),
            },
            "replay_matches_recording": replay_matches(self.recorded, self.replayed),
            "edits": {
                "recorded": [b.to_json() for b in self.recorded_ledger],
                "simulated": [b.to_json() for b in self.simulated_ledger],
                "remedies": {
                    "recorded": [r.to_json() for r in self.recorded_remedies],
                    "simulated": [r.to_json() for r in self.simulated_remedies],
                },
            },
        }


def _turns_json(recorded: Simulation, simulated: Simulation) -> list[dict[str, Any]]:
    rows = zip(recorded.turns, recorded.costs, simulated.turns, simulated.costs, strict=True)
    return [
        {"turn": r.turn, "recorded": _turn_json(r, r_cost), "simulated": _turn_json(s, s_cost)}
        for r, r_cost, s, s_cost in rows
    ]


def _turn_json(turn: Turn, cost: float | None) -> dict[str, Any]:
    return {
        **turn.usage.to_json(),
        "cleared_input_tokens": turn.cleared_input_tokens,
        "applied_edits": [e.raw for e in turn.applied_edits],
        "cost_usd": usd_json(cost),
    }


def _totals_json(sim: Simulation) -> dict[str, Any]:
    totals = sim.totals
    return {
        **totals.usage.to_json(),
        "cleared_input_tokens": totals.cleared_input_tokens,
        "peak_prompt": sim.peak_prompt,
        "cache_hit_ratio": totals.usage.cache_hit_ratio,
        "cost_usd": totals.cost_json,
    }


def load_other_profile(path: str, sets: Sequence[str]) -> Profile:
    profile, _ = resolve_profile(path, sets)
    return profile


def chosen_server(spec: str, profile: Profile) -> ResolvedModel:
    """The server model a what-if plays: `spec` (--server-model) when given, else the
    profile's, else the calibration file's, else the default. `all` plays every preset
    beside the model the rest would choose (`across`)."""
    if spec and not wants_all(spec):
        return resolve_server_model(spec, source="--server-model")
    return resolve_server_model(profile.context_editing.server_model, source=profile.source)


def what_if(
    session: Transcript, profile_path: str, sets: Sequence[str] = (), server_spec: str = ""
) -> WhatIf:
    """Replay `session` under the profile at `profile_path` (with --set overrides), playing
    the server model `chosen_server` picks; the faithful replay plays the recorded profile's.
    `server_spec` "all": also under every preset (`by_model`)."""
    own = session_profile(session)
    other = load_other_profile(profile_path, sets)
    server = chosen_server(server_spec, other)
    own_settings = ReplaySettings.from_profile(own)
    cal = calibrate(session, own_settings)
    recorded = recorded_run(session, own)
    replayed = simulate(session, own_settings, own, factor=cal.factor, label="replayed")
    settings = ReplaySettings.from_profile(other, server.model)
    sim = simulate(session, settings, own, factor=cal.factor, label=other.source)
    own_ledger, other_ledger = ledger(session, own, recorded), ledger(session, own, sim)
    f = cal.factor
    every = wants_all(server_spec)
    by_model = replays_by_model(session, other, own, recorded, factor=f) if every else ()
    return WhatIf(
        session, other.source, other.model, cal, recorded, replayed, sim, own_ledger, other_ledger,
        remedies(session, own, own, own_ledger, base_cost=replayed.cost_usd, factor=f),
        remedies(session, other, own, other_ledger, base_cost=sim.cost_usd, factor=f,
                 server=server.model),
        server, by_model,
    )  # fmt: skip


@dataclass(frozen=True)
class Tuning:
    """`tune`: every candidate ranked by cost, the Pareto front, the winner."""

    session: Transcript
    profile: Profile
    grid: dict[str, tuple[Any, ...]]
    calibration: EstimatorFit
    ranked: list[Candidate]
    front: list[Candidate]
    server_model: ResolvedModel
    by_model: tuple[ModelTuning, ...] = ()  # --server-model all: every preset
    robust: Robust | None = None  # ... and the candidate cheapest in the worst case
    within: float | None = None  # --tokens-within: fewest tokens at most this x no editing
    reference: Candidate | None = None  # ... the replay of no editing it is measured against

    @property
    def winner(self) -> Candidate:
        return self.ranked[0]

    def objective_json(self) -> dict[str, Any]:
        """What the ranking put first: cost, or prompt tokens within a cost limit."""
        if self.within is None or self.reference is None:
            return {"rank": "cost"}
        limit = round(self.within * self.reference.cost, 9)
        return {
            "rank": "prompt_tokens",
            "within": self.within,
            "no_editing": self.reference.to_json(),
            "limit_usd": limit,
            "winner_within": round(self.winner.cost, 9) <= limit,
        }

    @property
    def recorded(self) -> Candidate:
        return recorded_candidate(self.ranked)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session.id,
            "pricing": self.session.pricing,
            "server_model": self.server_model.to_json(),
            "grid": {k: list(v) for k, v in self.grid.items()},
            "calibration": self.calibration.to_json(),
            "objective": self.objective_json(),
            "candidates": len(self.ranked),
            "winner": self.winner.to_json(),
            "recorded": self.recorded.to_json(),
            "ranked": [c.to_json() for c in self.ranked],
            "pareto_front": [c.to_json() for c in self.front],
            **({"server_models": [m.to_json() for m in self.by_model]} if self.by_model else {}),
            **({"robust": self.robust.to_json()} if self.robust else {}),
            "limits": LIMITS_NOTE,
        }


def tuning(
    session: Transcript,
    grid_text: str | None,
    server_spec: str = "",
    within: float | None = None,
) -> Tuning:
    """Sweep the grid (default: one derived from the run) and rank the results, every
    candidate under one server model (`chosen_server`); `server_spec` "all": also under every
    preset, with the robust choice (`across.robust_choice`, by cost); `within`: rank by
    prompt tokens among the settings that cost at most that ratio of no editing
    (`tune.no_editing`, replayed once)."""
    if within is not None and not 0 < within < 1e6:
        raise UsageError(f"--tokens-within {within:g}: expected a ratio above 0 (e.g. 0.4)")
    profile = session_profile(session)
    server = chosen_server(server_spec, profile)
    if profile.pricing(session.model).price is None:
        raise UsageError(
            f"session {session.id}: no price for model {session.model}; tune ranks by cost "
            f'(add [prices."{session.model}"] to the profile)'
        )
    thinking_on = profile.thinking.enabled
    recorded = profile.context_editing
    grid = (
        fill_defaults(parse_grid(grid_text), session, recorded)
        if grid_text
        else default_grid(session, recorded, thinking_on)
    )
    descent = None if grid_text else descent_grid(session, recorded, thinking_on)
    cal = calibrate(session, ReplaySettings.from_profile(profile))
    reference, limit = None, None
    if within is not None:
        compacted = any(t.usage.compactions for t in session.turns)
        plain = no_editing(recorded_setting(profile), compacted)
        (reference,) = replay(session, profile, [plain], factor=cal.factor, server=server.model)
        limit = round(within * reference.cost, 9)
    results = sweep(
        session, profile, grid, factor=cal.factor, server=server.model, descent=descent,
        limit=limit,
    )  # fmt: skip
    by_model: tuple[ModelTuning, ...] = ()
    if wants_all(server_spec):  # the same settings, replayed under each model
        settings = [c.setting for c in results]
        by_model = tuple(
            ModelTuning(m, tuple(ranked(
                results if m == server.model
                else replay(session, profile, settings, factor=cal.factor, server=m)
            )))
            for m in SERVER_MODELS
        )  # fmt: skip
    robust = robust_choice(by_model) if by_model else None
    return Tuning(
        session, profile, grid, cal, ranked(results, limit), pareto_front(results), server,
        by_model, robust, within, reference,
    )  # fmt: skip


def write_winner(t: Tuning, path: Path, *, force: bool) -> None:
    """The winner, or with `--server-model all` the robust choice."""
    setting = t.robust.setting if t.robust else t.winner.setting
    write_profile(path, dataclasses.replace(t.profile, source=str(path)), setting, force=force)
