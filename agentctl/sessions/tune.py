"""Sweep context-editing settings over a grid on one recorded run; best by cost, Pareto front.

Every candidate is a full replay (`simulate.simulate`) of the same conversation; the
recorded settings are always in the sweep, so the winner is never more expensive than they
are under the same model. Grid syntax: `key=v1,v2;key=v3` with keys `trigger`, `keep`,
`clear_at_least` and `thinking_keep` (integers, `k` suffix for thousands, `all` for
thinking_keep, `off` for trigger = no clear_tool_uses at all).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentctl.context.server_model import ServerModel
from agentctl.errors import ConfigError, UsageError
from agentctl.profile.settings import ContextEditing, Profile
from agentctl.sessions.catalog import Session
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import Simulation, simulate

GRID_KEYS = ("trigger", "keep", "clear_at_least", "thinking_keep")
DEFAULT_KEEP = (1, 2, 3, 4, 6)
DEFAULT_CLEAR_AT_LEAST = (0, 5_000, 10_000, 20_000)
DEFAULT_TOOL_USE_TRIGGERS = (5, 10, 20)
DEFAULT_THINKING_KEEP: tuple[int | Literal["all"], ...] = (1, 2, "all")
OFF = "off"

GridValue = int | str
Grid = dict[str, tuple[GridValue, ...]]


@dataclass(frozen=True)
class Candidate:
    """One point of the sweep and its replay."""

    editing: ContextEditing
    simulation: Simulation
    recorded: bool = False

    @property
    def cost(self) -> float:
        cost = self.simulation.cost_usd
        return float("inf") if cost is None else cost

    def label(self) -> str:
        return settings_label(self.editing)

    def to_json(self) -> dict[str, Any]:
        sim = self.simulation
        return {
            "settings": settings_json(self.editing),
            "recorded": self.recorded,
            "cost_usd": None if sim.cost_usd is None else round(sim.cost_usd, 6),
            "prompt_tokens": sim.usage.prompt_tokens,
            "peak_prompt": sim.peak_prompt,
            "cleared_input_tokens": sim.cleared_input_tokens,
            "cache_hit_ratio": sim.cache_hit_ratio,
            "compactions": sim.usage.compactions,
        }


def settings_json(ce: ContextEditing) -> dict[str, Any]:
    tu, th = ce.tool_uses, ce.thinking
    data: dict[str, Any] = {"clear_tool_uses": tu.enabled}
    if tu.enabled:
        data.update(trigger=tu.trigger, keep=tu.keep, clear_at_least=tu.clear_at_least)
    if tu.enabled and tu.strategy == "batched":
        data["low_water"] = tu.low_water
    if th.enabled:
        data["thinking_keep"] = th.keep
    if ce.compaction.enabled:  # every candidate keeps the recorded compaction (not searched)
        data["compaction_trigger"] = ce.compaction.trigger
    return data


def settings_label(ce: ContextEditing) -> str:
    """`trigger=40000 keep=3 clear_at_least=0`, or `clear_tool_uses off`."""
    data = settings_json(ce)
    if not data.pop("clear_tool_uses"):
        head = "clear_tool_uses off"
        return " ".join([head, *(f"{k}={v}" for k, v in data.items())])
    return " ".join(f"{k}={v}" for k, v in data.items())


def _number(key: str, text: str) -> GridValue:
    word = text.strip().lower().replace("_", "")
    if (key == "trigger" and word == OFF) or (key == "thinking_keep" and word == "all"):
        return word
    scale = 1000 if word.endswith("k") else 1
    try:
        value = int(float(word[:-1]) * scale) if scale > 1 else int(word)
    except ValueError:
        raise UsageError(f"--grid {key}: {text.strip()!r} is not a whole number") from None
    if value < (0 if key == "clear_at_least" else 1):
        raise UsageError(f"--grid {key}: {value} is out of range")
    return value


def parse_grid(text: str) -> Grid:
    """`trigger=20000,40000;keep=2,4` -> {"trigger": (20000, 40000), "keep": (2, 4)}."""
    grid: Grid = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or key not in GRID_KEYS:
            known = ", ".join(GRID_KEYS)
            raise UsageError(f"--grid {item!r}: expected KEY=V1,V2 with KEY one of {known}")
        parsed = tuple(_number(key, v) for v in values.split(",") if v.strip())
        if not parsed:
            raise UsageError(f"--grid {key}: no values given")
        grid[key] = parsed
    return grid


def default_grid(session: Session, recorded: ContextEditing, thinking_on: bool) -> Grid:
    """Triggers at a quarter, half and three quarters of the run's largest unedited prompt."""
    tu = recorded.tool_uses
    if tu.trigger_kind == "tool_uses":
        triggers: tuple[GridValue, ...] = DEFAULT_TOOL_USE_TRIGGERS
    else:
        peak = max(
            (t.usage.prompt_tokens + t.cleared_input_tokens for t in session.turns), default=0
        )
        triggers = tuple(
            sorted({max(round(peak * f / 1000) * 1000, 1000) for f in (0.25, 0.5, 0.75)})
        )
    grid: Grid = {
        "trigger": triggers,
        "keep": DEFAULT_KEEP,
        "clear_at_least": DEFAULT_CLEAR_AT_LEAST,
    }
    if thinking_on:
        grid["thinking_keep"] = DEFAULT_THINKING_KEEP
    return grid


def candidates(recorded: ContextEditing, grid: Grid) -> list[ContextEditing]:
    """The recorded settings first, no clearing at all, then every grid point; no duplicates."""
    no_clearing = dataclasses.replace(recorded.tool_uses, enabled=False)
    found = [recorded, dataclasses.replace(recorded, tool_uses=no_clearing)]
    axes = [grid.get(k) or (None,) for k in GRID_KEYS]
    for point in itertools.product(*axes):
        found.append(_grid_point(recorded, dict(zip(GRID_KEYS, point, strict=True))))
    return _unique(found)


def _grid_point(recorded: ContextEditing, point: dict[str, GridValue | None]) -> ContextEditing:
    """The recorded settings with this point's values (None: keep the recorded value)."""
    tu, th = recorded.tool_uses, recorded.thinking
    if point["trigger"] == OFF:
        tu = dataclasses.replace(tu, enabled=False)
    else:
        trigger = _or(point["trigger"], tu.trigger)
        tu = dataclasses.replace(
            tu,
            enabled=True,
            trigger=trigger,
            keep=_or(point["keep"], tu.keep),
            clear_at_least=_or(point["clear_at_least"], tu.clear_at_least),
            # batched: the low-water mark keeps its ratio to the trigger (high-water mark)
            low_water=round(tu.low_water * trigger / tu.trigger) if tu.low_water else 0,
        )
    think = point["thinking_keep"]
    if think is not None:  # turns clear_thinking on (the replay refuses it without thinking)
        th = dataclasses.replace(th, enabled=True, keep="all" if think == "all" else int(think))
    return dataclasses.replace(recorded, tool_uses=tu, thinking=th)


def _or(value: GridValue | None, default: int) -> int:
    return default if value is None else int(value)


def _unique(settings: Iterable[ContextEditing]) -> list[ContextEditing]:
    seen: set[str] = set()
    out: list[ContextEditing] = []
    for ce in settings:
        key = json.dumps(settings_json(ce), sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(ce)
    return out


def sweep(
    session: Session,
    profile: Profile,
    grid: Grid,
    *,
    factor: float = 1.0,
    server: ServerModel | None = None,
) -> list[Candidate]:
    """Replay every candidate under one server model (None: the profile's, else the
    calibration's, else the default); the first one is the recorded settings."""
    results: list[Candidate] = []
    for index, ce in enumerate(candidates(profile.context_editing, grid)):
        other = dataclasses.replace(profile, context_editing=ce)
        settings = ReplaySettings.from_profile(other, server)
        sim = simulate(session, settings, profile, factor=factor, label=settings_label(ce))
        results.append(Candidate(ce, sim, recorded=index == 0))
    return results


def ranked(results: Sequence[Candidate]) -> list[Candidate]:
    """Cheapest first; ties go to fewer prompt tokens, then to the recorded settings."""
    return sorted(
        results,
        key=lambda c: (round(c.cost, 9), c.simulation.usage.prompt_tokens, not c.recorded),
    )


def recorded_candidate(results: Sequence[Candidate]) -> Candidate:
    """The recorded settings' candidate (every sweep has one)."""
    return next(c for c in results if c.recorded)


def pareto_front(results: Sequence[Candidate]) -> list[Candidate]:
    """Candidates no other beats on both cost and peak prompt size, cheapest first."""
    front: list[Candidate] = []
    for c in ranked(results):
        peak = c.simulation.peak_prompt
        if all(peak < f.simulation.peak_prompt for f in front):
            front.append(c)
    return front


def relative_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """The profile's path settings relative to `base` (the folder the profile is written to),
    so the file still works when that folder is moved or shared."""
    from agentctl.profile.loader import PATH_KEYS

    out = {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}
    for key in PATH_KEYS:
        table, _, name = key.rpartition(".")
        section = out.get(table) if table else out
        if isinstance(section, dict) and isinstance(section.get(name), str) and section[name]:
            section[name] = os.path.relpath(section[name], base)
    return out


def write_profile(path: Path, profile: Profile, editing: ContextEditing, *, force: bool) -> None:
    """Save `profile` with `editing` as a complete TOML profile (loads back with build_profile)."""
    import tomli_w

    from agentctl.profile.loader import build_profile
    from agentctl.profile.writer import profile_to_dict

    data = profile_to_dict(dataclasses.replace(profile, context_editing=editing))
    data = relative_paths(data, path.resolve().parent)
    text = "# Written by `agentctl tune`: the cheapest settings on one recorded run.\n"
    text += "# Paths are relative to this file, as in any profile.\n"
    text += tomli_w.dumps(data)
    build_profile(tomllib.loads(text), source=str(path), base_dir=path.parent)  # round trip
    try:
        with path.open("w" if force else "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{path}: already exists (use --force to overwrite it)") from None
    except OSError as err:
        raise ConfigError(f"profile {path}: cannot write: {err.strerror or err}") from None
