"""`--server-model all`: one recorded run replayed under every variant of the server model.

The rules the recordings leave open (context.server_model: the trigger basis, the
small-result line) change what a replay clears, caches and costs. `simulate` and `tune` take
`all` to report their figures under the default and under each open rule's other answer
(`SERVER_MODELS`), so a choice of settings can be judged without knowing which answer the
real server gives. Values only.

A replay of the recorded settings is exact only under the rules the run was recorded under:
`ModelReplay.replay_exact` says, per model, whether it reproduced the recording.

The robust `tune` choice: the candidate whose highest cost over the models is lowest
(minimax cost); ties go to the lower mean cost over the models, then to the order `tune`
ranks in under the first model (fewer prompt tokens, the recorded settings).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.context.server_model import SERVER_MODELS, ServerModel
from agentctl.profile.settings import ContextEditing, Profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import Simulation, replay_matches, simulate
from agentctl.sessions.transcript import Transcript
from agentctl.sessions.tune import (
    Candidate,
    Setting,
    recorded_candidate,
    setting_key,
    settings_json,
    settings_label,
)
from agentctl.types import usd_json

ALL = "all"  # the --server-model value that asks for every variant
REPLAY_NOTE = (
    "a replay of the recorded settings is exact only under the server model the run was "
    "recorded under; under the others every figure is an estimate"
)


def all_note() -> str:
    """The stderr line beside the resolved model's note."""
    return "and under every server model: " + ", ".join(m.name for m in SERVER_MODELS)


def wants_all(spec: str) -> bool:
    """Whether a --server-model value asks for every variant."""
    return spec.strip().lower() == ALL


@dataclass(frozen=True)
class ModelReplay:
    """`simulate` under one server model: the other profile's replay, and the recorded
    settings' replay (to say whether this model reproduces what happened)."""

    model: ServerModel
    simulated: Simulation
    replayed: Simulation
    recorded: Simulation

    @property
    def replay_exact(self) -> bool:
        """The recorded settings replayed under this model give the recorded usage and edits."""
        return replay_matches(self.recorded, self.replayed)

    @property
    def cost_vs_recorded(self) -> float | None:
        """The simulated cost as a multiple of the recorded run's."""
        sim, rec = self.simulated.cost_usd, self.recorded.cost_usd
        return None if sim is None or not rec else sim / rec

    def to_json(self) -> dict[str, Any]:
        sim = self.simulated
        ratio = self.cost_vs_recorded
        return {
            "server_model": self.model.to_json(),
            "prompt_tokens": sim.usage.prompt_tokens,
            "cleared_input_tokens": sim.cleared_input_tokens,
            "cache_read_input_tokens": sim.usage.cache_read_input_tokens,
            "cache_creation_input_tokens": sim.usage.cache_creation_input_tokens,
            "cache_hit_ratio": sim.cache_hit_ratio,
            "peak_prompt": sim.peak_prompt,
            "compactions": sim.usage.compactions,
            "cost_usd": usd_json(sim.cost_usd),
            "cost_vs_recorded": None if ratio is None else round(ratio, 6),
            "recorded_settings_cost_usd": usd_json(self.replayed.cost_usd),
            "replay_matches_recording": self.replay_exact,
        }


def replays_by_model(
    session: Transcript,
    other: Profile,
    own: Profile,
    recorded: Simulation,
    *,
    factor: float,
    models: Sequence[ServerModel] = SERVER_MODELS,
) -> tuple[ModelReplay, ...]:
    """`other`'s settings and the recorded ones (`own`) replayed under each model, priced
    with the recorded profile's prices."""
    out: list[ModelReplay] = []
    for model in models:
        settings = ReplaySettings.from_profile(other, model)
        sim = simulate(session, settings, own, factor=factor, label=model.name)
        mine = ReplaySettings.from_profile(own, model)
        replayed = simulate(session, mine, own, factor=factor, label=f"replayed {model.name}")
        out.append(ModelReplay(model, sim, replayed, recorded))
    return tuple(out)


@dataclass(frozen=True)
class ModelTuning:
    """`tune` under one server model: every candidate, cheapest first."""

    model: ServerModel
    ranked: tuple[Candidate, ...]

    @property
    def winner(self) -> Candidate:
        return self.ranked[0]

    @property
    def recorded(self) -> Candidate:
        return recorded_candidate(self.ranked)

    def cost_of(self, setting: Setting) -> float:
        key = setting_key(setting)
        return next(c.cost for c in self.ranked if setting_key(c.setting) == key)

    def to_json(self) -> dict[str, Any]:
        return {
            "server_model": self.model.to_json(),
            "winner": self.winner.to_json(),
            "recorded": self.recorded.to_json(),
        }


@dataclass(frozen=True)
class Robust:
    """The candidate cheapest in the worst case over the models, and its cost under each."""

    setting: Setting
    costs: tuple[tuple[str, float], ...]  # (server model name, cost)
    recorded: bool

    @property
    def editing(self) -> ContextEditing:
        return self.setting.editing

    @property
    def worst(self) -> tuple[str, float]:
        return max(self.costs, key=lambda item: item[1])

    def label(self) -> str:
        return settings_label(self.setting)

    def to_json(self) -> dict[str, Any]:
        name, cost = self.worst
        return {
            "settings": settings_json(self.setting),
            "recorded": self.recorded,
            "rule": "minimax: the lowest worst-case cost over the server models; "
            "ties: the lower mean cost",
            "worst_server_model": name,
            "worst_cost_usd": usd_json(cost),
            "cost_usd": {model: usd_json(c) for model, c in self.costs},
        }


def robust_choice(tunings: Sequence[ModelTuning]) -> Robust:
    """Minimax cost over the models (module docstring); every tuning swept the same grid."""
    first = tunings[0]
    best: tuple[float, float, int] | None = None
    choice = first.winner
    for index, candidate in enumerate(first.ranked):
        costs = [t.cost_of(candidate.setting) for t in tunings]
        score = (round(max(costs), 9), round(sum(costs) / len(costs), 9), index)
        if best is None or score < best:
            best, choice = score, candidate
    per_model = tuple((t.model.name, t.cost_of(choice.setting)) for t in tunings)
    return Robust(choice.setting, per_model, choice.recorded)
