"""Sweep context-editing and cache settings on one recorded run; best by cost, Pareto front.

Every candidate is a full replay (`simulate.simulate`) of the same conversation; the
recorded settings are always in the sweep, so the winner is never more expensive than they
are under the same model. Grid syntax: `key=v1,v2;key=v3` with keys `trigger`, `keep`,
`clear_at_least`, `thinking_keep`, `strategy`, `low_water`, `ttl` and `clear_tool_inputs`
(integers, `k` suffix for thousands, `all` for thinking_keep, `off` for trigger = no
clear_tool_uses at all, `server` / `batched`, a low_water as tokens or `N%` of the trigger,
`5m` / `1h`, `false` / `true` / tool names joined by `+` for clear_tool_inputs); a key alone
takes its default values. The grid is swept in full; without `--grid`, the default grid is,
and then a descent from its winner: one key at a time over every key's default values
(strategy, low_water, ttl and clear_tool_inputs too), moving to the cheapest, until a round
finds nothing cheaper.

clear_tool_inputs is searched in the descent only, over two values (`default_inputs`): false,
and the session's tools whose inputs pile up (`piling_tools`: by the input tokens of their
calls in the recorded history). The memory tool is never among them: its inputs are the
model's own notes, and a replay keeps the recorded conversation, so it cannot see a model
that no longer has them act otherwise (`hides_notes`; a grid may still name it, and such
candidates are marked).

The default grid does not grow with the session: its token triggers are fractions of the
largest unedited prompt capped at the model's context window, and of the recorded trigger
(below it too), at most 6 values (`default_triggers`). So the default search replays at most
154 settings, however many turns the session has: the recorded settings and no clearing, the
grid's 6 x 5 x 2 points, and 4 descent rounds of at most 23 new neighbours each (6 triggers,
5 keeps, 4 clear_at_least, 4 low_water marks, 2 clear_tool_inputs, and one each for strategy
and ttl, whose other value is the only new one); with thinking on: 286, the grid x 3 thinking
keeps and 26 new neighbours a round.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import os
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentctl.context.memo import replay_memo
from agentctl.context.pairs import TOOL_USE_TYPES
from agentctl.context.prices import context_window
from agentctl.context.server_model import ServerModel
from agentctl.context.tokens import estimate_block_tokens
from agentctl.errors import ConfigError, UsageError
from agentctl.profile.rules import check_batched, memory_input_warning
from agentctl.profile.schema import FieldError
from agentctl.profile.settings import CacheTtl, ClearToolUses, Compaction, ContextEditing, Profile
from agentctl.sessions.replay import ReplaySettings
from agentctl.sessions.simulate import Simulation, simulate
from agentctl.sessions.transcript import Transcript

GRID_KEYS = (
    "trigger", "keep", "clear_at_least", "thinking_keep", "strategy", "low_water", "ttl",
    "clear_tool_inputs",
)  # fmt: skip
DEFAULT_KEEP = (1, 2, 3, 4, 6)
# The default grid's clear_at_least; the descent then tries every value of the longer list.
DEFAULT_CLEAR_AT_LEAST = (0, 10_000)
DESCENT_CLEAR_AT_LEAST = (0, 5_000, 10_000, 20_000)
DEFAULT_TOOL_USE_TRIGGERS = (5, 10, 20)
PEAK_SHARES = (0.25, 0.5, 0.75)  # of the largest unedited prompt, capped at the window
RECORDED_SHARES = (0.25, 0.5, 1.0)  # of the recorded trigger
DEFAULT_THINKING_KEEP: tuple[int | Literal["all"], ...] = (1, 2, "all")
DEFAULT_STRATEGY = ("server", "batched")
DEFAULT_LOW_WATER = (0, "20%", "40%", "60%")  # of the trigger; 0: as far as keep allows
DEFAULT_TTL: tuple[CacheTtl, ...] = ("5m", "1h")
WORDS = {"strategy": DEFAULT_STRATEGY, "ttl": DEFAULT_TTL}  # keys whose values are words
DESCENT_ROUNDS = 4  # a bound; on the research run the descent stops after 2
OFF = "off"
# A tool piles up inputs when its calls' input tokens reach this share of the largest tool's.
PILING_SHARE = 0.5
PILING_MIN = 500  # tokens: below this over the whole run, a tool's inputs do not pile up
HIDES_NOTES_NOTE = (
    "(hides notes): these settings clear the memory tool's inputs, the notes the model wrote, "
    "from what it sees; the replay assumes it acts the same without them, which a run may not "
    "(tune never offers this itself: only a --grid or the recorded settings can)"
)
NO_INPUTS, ALL_INPUTS = "false", "true"  # clear_tool_inputs grid values; else names joined by +

GridValue = int | str
Grid = dict[str, tuple[GridValue, ...]]


@dataclass(frozen=True)
class Setting:
    """One point of the search: the context editing and the cache TTL to replay with."""

    editing: ContextEditing
    ttl: CacheTtl = "5m"


@dataclass(frozen=True)
class Candidate:
    """One point of the sweep and its replay."""

    setting: Setting
    simulation: Simulation
    recorded: bool = False
    hides_notes: bool = False  # clears the memory tool's inputs (`hides_notes`)

    @property
    def editing(self) -> ContextEditing:
        return self.setting.editing

    @property
    def cost(self) -> float:
        cost = self.simulation.cost_usd
        return float("inf") if cost is None else cost

    def label(self) -> str:
        return settings_label(self.setting)

    def to_json(self) -> dict[str, Any]:
        sim = self.simulation
        return {
            "settings": settings_json(self.setting),
            "recorded": self.recorded,
            "hides_notes": self.hides_notes,
            "cost_usd": sim.totals.cost_json,
            "prompt_tokens": sim.usage.prompt_tokens,
            "peak_prompt": sim.peak_prompt,
            "cleared_input_tokens": sim.cleared_input_tokens,
            "cache_hit_ratio": sim.cache_hit_ratio,
            "compactions": sim.usage.compactions,
        }


def settings_json(setting: Setting | ContextEditing) -> dict[str, Any]:
    """The searched settings as JSON (a bare ContextEditing: at the default TTL)."""
    if isinstance(setting, ContextEditing):
        setting = Setting(setting)
    ce = setting.editing
    tu, th = ce.tool_uses, ce.thinking
    data: dict[str, Any] = {"clear_tool_uses": tu.enabled}
    if tu.enabled:
        data.update(trigger=tu.trigger, keep=tu.keep, clear_at_least=tu.clear_at_least)
        data["strategy"] = tu.strategy
    if tu.enabled and tu.strategy == "batched":
        data["low_water"] = tu.low_water
    if tu.enabled:
        inputs = tu.clear_tool_inputs
        data["clear_tool_inputs"] = list(inputs) if isinstance(inputs, tuple) else inputs
    if th.enabled:
        data["thinking_keep"] = th.keep
    if ce.compaction.enabled:  # every candidate keeps the recorded compaction (not searched)
        data["compaction_trigger"] = ce.compaction.trigger
    data["ttl"] = setting.ttl
    return data


def settings_label(setting: Setting | ContextEditing) -> str:
    """`trigger=40000 keep=3 clear_at_least=0`, or `clear_tool_uses off`; a low_water means
    batched clearing (the strategy is not repeated); the TTL is shown when it is 1h, the
    compaction trigger (never searched) when it is not the built-in one."""
    data = settings_json(setting)
    data.pop("strategy", None)
    inputs = data.pop("clear_tool_inputs", False)
    if inputs:  # shown only when inputs are cleared too
        data["clear_tool_inputs"] = "+".join(inputs) if isinstance(inputs, list) else "true"
    if data["ttl"] == "5m":
        del data["ttl"]
    if data.get("compaction_trigger") == Compaction().trigger:
        del data["compaction_trigger"]
    if not data.pop("clear_tool_uses"):
        head = "clear_tool_uses off"
        return " ".join([head, *(f"{k}={v}" for k, v in data.items())])
    return " ".join(f"{k}={v}" for k, v in data.items())


def _inputs(text: str) -> str:
    """A clear_tool_inputs grid value: `false`, `true`, or tool names joined by `+` (tool
    names keep their case)."""
    word = text.strip()
    if word.lower() in (NO_INPUTS, "off", "none"):
        return NO_INPUTS
    if word.lower() in (ALL_INPUTS, "all"):
        return ALL_INPUTS
    names = [name.strip() for name in word.split("+")]
    if not all(names) or any(any(c.isspace() for c in name) for name in names):
        raise UsageError(
            f"--grid clear_tool_inputs: {word!r}: expected false, true or tool names joined by +"
        )
    return "+".join(dict.fromkeys(names))


def _number(key: str, text: str) -> GridValue:
    if key == "clear_tool_inputs":
        return _inputs(text)
    word = text.strip().lower().replace("_", "")
    if (key == "trigger" and word == OFF) or (key == "thinking_keep" and word == "all"):
        return word
    if key in WORDS:
        if word not in WORDS[key]:
            raise UsageError(f"--grid {key}: {text.strip()!r}: expected {' or '.join(WORDS[key])}")
        return word
    if key == "low_water" and word.endswith("%"):
        try:
            share = float(word[:-1])
        except ValueError:
            raise UsageError(f"--grid low_water: {text.strip()!r} is not a percentage") from None
        if not 0 <= share < 100:
            raise UsageError(f"--grid low_water: {text.strip()} is out of range (0-99%)")
        return f"{share:g}%"
    scale = 1000 if word.endswith("k") else 1
    try:
        value = int(float(word[:-1]) * scale) if scale > 1 else int(word)
    except ValueError:
        raise UsageError(f"--grid {key}: {text.strip()!r} is not a whole number") from None
    if value < (0 if key in ("clear_at_least", "low_water") else 1):
        raise UsageError(f"--grid {key}: {value} is out of range")
    return value


def parse_grid(text: str) -> Grid:
    """`trigger=20000,40000;keep=2,4` -> {"trigger": (20000, 40000), "keep": (2, 4)}; a key
    alone (`strategy`) -> () , filled with its default values by `fill_defaults`."""
    grid: Grid = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, sep, values = item.partition("=")
        key = key.strip()
        if key not in GRID_KEYS:
            known = ", ".join(GRID_KEYS)
            raise UsageError(f"--grid {item!r}: expected KEY=V1,V2 or KEY, with KEY one of {known}")
        if not sep:
            grid[key] = ()
            continue
        parsed = tuple(_number(key, v) for v in values.split(",") if v.strip())
        if not parsed:
            raise UsageError(f"--grid {key}: no values given")
        grid[key] = parsed
    return grid


def default_grid(session: Transcript, recorded: ContextEditing, thinking_on: bool) -> Grid:
    """The grid swept first: `default_triggers`, keep 1, 2, 3, 4, 6, clear_at_least 0 and
    10,000 (and thinking keep 1, 2, all when thinking was on): at most 6 x 5 x 2 (x 3) points,
    whatever the session's length."""
    grid: Grid = {
        "trigger": default_triggers(session, recorded.tool_uses),
        "keep": DEFAULT_KEEP,
        "clear_at_least": DEFAULT_CLEAR_AT_LEAST,
    }
    if thinking_on:
        grid["thinking_keep"] = DEFAULT_THINKING_KEEP
    return grid


def default_triggers(session: Transcript, recorded: ClearToolUses) -> tuple[GridValue, ...]:
    """For a token trigger: a quarter, half and three quarters of the run's largest unedited
    prompt, capped at the model's context window (a prompt past it was never sent whole to a
    real model, and the longer the session the further past it the peak goes), and a quarter,
    half and all of the recorded trigger (the cheapest marks are often below it); rounded to
    1,000, at least 1,000, no repeats: at most 6 values. For a tool_uses trigger 5, 10, 20."""
    if recorded.trigger_kind == "tool_uses":
        return DEFAULT_TOOL_USE_TRIGGERS
    peak = max((t.usage.prompt_tokens + t.cleared_input_tokens for t in session.turns), default=0)
    return trigger_marks(peak, context_window(session.model), recorded.trigger)


def trigger_marks(peak: int, window: int, recorded: int) -> tuple[int, ...]:
    """`default_triggers` of a run whose largest unedited prompt was `peak` tokens, for a
    model of that `window`, recorded with that token trigger."""
    marks = [min(peak, window) * share for share in PEAK_SHARES]
    marks += [recorded * share for share in RECORDED_SHARES]
    return tuple(sorted({max(round(mark / 1000) * 1000, 1000) for mark in marks}))


def descent_grid(session: Transcript, recorded: ContextEditing, thinking_on: bool) -> Grid:
    """Every key's default values: what the descent after the default grid moves along."""
    grid: Grid = {
        **default_grid(session, recorded, thinking_on),
        "clear_at_least": DESCENT_CLEAR_AT_LEAST,
        "strategy": DEFAULT_STRATEGY,
        "low_water": DEFAULT_LOW_WATER,
        "ttl": DEFAULT_TTL,
        "clear_tool_inputs": default_inputs(session, recorded.tool_uses),
    }
    return grid


def default_inputs(session: Transcript, recorded: ClearToolUses) -> tuple[GridValue, ...]:
    """The descent's clear_tool_inputs: false, and the tools whose inputs pile up
    (`piling_tools`) when there are any."""
    piling = piling_tools(session, recorded)
    return (NO_INPUTS, "+".join(piling)) if piling else (NO_INPUTS,)


def piling_tools(session: Transcript, recorded: ClearToolUses) -> tuple[str, ...]:
    """The tools whose calls' inputs take the most tokens in the recorded history (each
    call: what clearing its input would free), largest first: the largest and every tool
    with at least PILING_SHARE of its tokens, none with fewer than PILING_MIN. Never the
    memory tool (its inputs are the model's notes: `hides_notes`) nor a tool the recorded
    settings exclude from clearing."""
    history = session.turns[-1].messages if session.turns else []
    skip = {"memory", *recorded.exclude_tools}
    tokens: dict[str, int] = {}
    for message in history:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") in TOOL_USE_TYPES:
                name = str(block.get("name", ""))
                if name and name not in skip and block.get("input"):
                    freed = estimate_block_tokens(block)
                    freed -= estimate_block_tokens({**block, "input": {}})
                    tokens[name] = tokens.get(name, 0) + freed
    top = max(tokens.values(), default=0)
    ranked = sorted(tokens.items(), key=lambda item: (-item[1], item[0]))
    return tuple(name for name, count in ranked if count >= max(top * PILING_SHARE, PILING_MIN))


def hides_notes(setting: Setting, memory_on: bool) -> bool:
    """Whether the setting clears the memory tool's inputs (the notes the model wrote) from
    what the model sees: the case `profile check` warns about."""
    tu = setting.editing.tool_uses
    return tu.enabled and any(memory_input_warning(tu, memory_on=memory_on))


def fill_defaults(grid: Grid, session: Transcript, recorded: ContextEditing) -> Grid:
    """The grid with each key given alone (no values) set to its default values."""
    defaults = descent_grid(session, recorded, thinking_on=True)
    return {key: values or defaults[key] for key, values in grid.items()}


def candidates(recorded: ContextEditing | Setting, grid: Grid) -> list[Setting]:
    """The recorded settings first, no clearing at all, then every grid point that is a valid
    profile (batched clearing needs a token trigger above low_water); no duplicates."""
    base = recorded if isinstance(recorded, Setting) else Setting(recorded)
    no_clearing = dataclasses.replace(base.editing.tool_uses, enabled=False)
    off = dataclasses.replace(
        base, editing=dataclasses.replace(base.editing, tool_uses=no_clearing)
    )
    found: list[Setting | None] = [base, off]
    axes = [grid.get(k) or (None,) for k in GRID_KEYS]
    for point in itertools.product(*axes):
        found.append(_grid_point(base, dict(zip(GRID_KEYS, point, strict=True))))
    return _unique(s for s in found if s is not None)


def neighbours(base: Setting, grid: Grid) -> list[Setting]:
    """`base` with one key changed to each of its grid values (valid profiles only)."""
    found: list[Setting | None] = []
    for key in GRID_KEYS:
        for value in grid.get(key) or ():
            point: dict[str, GridValue | None] = dict.fromkeys(GRID_KEYS)
            point[key] = value
            found.append(_grid_point(base, point))
    return _unique(s for s in found if s is not None)


def _grid_point(base: Setting, point: dict[str, GridValue | None]) -> Setting | None:
    """`base` with this point's values (None: keep base's value); None when the result is not
    a valid profile."""
    tu, th = base.editing.tool_uses, base.editing.thinking
    if point["trigger"] == OFF:
        tu = dataclasses.replace(tu, enabled=False)
    else:
        trigger = _or(point["trigger"], tu.trigger)
        strategy = point["strategy"] or tu.strategy
        low = point["low_water"]
        if strategy == "server":
            if low not in (None, 0):
                return None  # a low-water mark means nothing to the server's clearing
            low_water = 0
        elif isinstance(low, str):  # "40%" of the trigger
            low_water = round(trigger * float(low[:-1]) / 100)
        elif low is not None:
            low_water = int(low)
        else:  # the low-water mark keeps its ratio to the trigger (high-water mark)
            low_water = round(tu.low_water * trigger / tu.trigger) if tu.low_water else 0
        tu = dataclasses.replace(
            tu,
            enabled=True,
            trigger=trigger,
            keep=_or(point["keep"], tu.keep),
            clear_at_least=_or(point["clear_at_least"], tu.clear_at_least),
            strategy="batched" if strategy == "batched" else "server",
            low_water=low_water,
        )
        inputs = point["clear_tool_inputs"]
        if inputs is not None:
            tu = dataclasses.replace(tu, clear_tool_inputs=_inputs_value(str(inputs)))
        try:
            check_batched(tu)
        except FieldError:
            return None
    think = point["thinking_keep"]
    if think is not None:  # turns clear_thinking on (the replay refuses it without thinking)
        th = dataclasses.replace(th, enabled=True, keep="all" if think == "all" else int(think))
    ttl: CacheTtl = "1h" if point["ttl"] == "1h" else "5m" if point["ttl"] else base.ttl
    editing = dataclasses.replace(base.editing, tool_uses=tu, thinking=th)
    return Setting(editing, ttl)


def _inputs_value(value: str) -> bool | tuple[str, ...]:
    """A clear_tool_inputs grid value as the setting holds it."""
    if value in (NO_INPUTS, ALL_INPUTS):
        return value == ALL_INPUTS
    return tuple(value.split("+"))


def _or(value: GridValue | None, default: int) -> int:
    return default if value is None else int(value)


def setting_key(setting: Setting) -> str:
    return json.dumps(settings_json(setting), sort_keys=True)


def _unique(settings: Iterable[Setting]) -> list[Setting]:
    seen: set[str] = set()
    out: list[Setting] = []
    for setting in settings:
        key = setting_key(setting)
        if key not in seen:
            seen.add(key)
            out.append(setting)
    return out


def recorded_setting(profile: Profile) -> Setting:
    return Setting(profile.context_editing, profile.cache.ttl)


def with_setting(profile: Profile, setting: Setting) -> Profile:
    cache = dataclasses.replace(profile.cache, ttl=setting.ttl)
    return dataclasses.replace(profile, context_editing=setting.editing, cache=cache)


def replay(
    session: Transcript,
    profile: Profile,
    settings: Sequence[Setting],
    *,
    factor: float = 1.0,
    server: ServerModel | None = None,
) -> list[Candidate]:
    """Replay each setting under one server model (None: the profile's, else the
    calibration's, else the default); the recorded settings are marked."""
    recorded = setting_key(recorded_setting(profile))
    results: list[Candidate] = []
    with _frozen() as freeze:
        for setting in settings:
            other = with_setting(profile, setting)
            replayed = ReplaySettings.from_profile(other, server)
            sim = simulate(session, replayed, other, factor=factor, label=settings_label(setting))
            hidden = hides_notes(setting, profile.tools.memory)
            results.append(Candidate(setting, sim, setting_key(setting) == recorded, hidden))
            freeze()
    return results


@contextmanager
def _frozen() -> Iterator[Callable[[], None]]:
    """`freeze()` between candidates: what is alive then (the transcript, the memo the
    candidates share, the candidates so far) is left out of the cycle collector's full
    collections, which would otherwise walk all of it, more with each candidate (`tune` at
    1,000 turns: a fifth of its time). Undone at the end; nothing when the process already
    froze objects of its own (`gc.freeze` has one permanent generation)."""
    if gc.get_freeze_count():
        yield lambda: None
        return
    gc.freeze()
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def sweep(
    session: Transcript,
    profile: Profile,
    grid: Grid,
    *,
    factor: float = 1.0,
    server: ServerModel | None = None,
    descent: Grid | None = None,
    limit: float | None = None,
) -> list[Candidate]:
    """Replay every grid candidate (the first one is the recorded settings); with `descent`,
    then move from the best one (`ranked` with `limit`) one key at a time over `descent`'s
    values while that finds a better setting (at most DESCENT_ROUNDS rounds). Each setting
    is replayed once; the replays share what they compute on the recorded history
    (`context.memo`)."""
    with replay_memo():
        return _sweep(session, profile, grid, factor, server, descent, limit)


def _sweep(
    session: Transcript,
    profile: Profile,
    grid: Grid,
    factor: float,
    server: ServerModel | None,
    descent: Grid | None,
    limit: float | None,
) -> list[Candidate]:
    found = {
        setting_key(c.setting): c
        for c in replay(session, profile, candidates(recorded_setting(profile), grid),
                        factor=factor, server=server)
    }  # fmt: skip
    for _ in range(DESCENT_ROUNDS if descent else 0):
        best = ranked(list(found.values()), limit)[0]
        new = [s for s in neighbours(best.setting, descent or {}) if setting_key(s) not in found]
        for c in replay(session, profile, new, factor=factor, server=server):
            found[setting_key(c.setting)] = c
        if ranked(list(found.values()), limit)[0] is best:
            break
    return list(found.values())


def ranked(results: Sequence[Candidate], limit: float | None = None) -> list[Candidate]:
    """Cheapest first; ties go to fewer prompt tokens, then to the recorded settings. With a
    cost `limit` (dollars): first the settings that cost at most that, fewest prompt tokens
    first (ties to the cheaper), then the others, cheapest first."""
    if limit is None:
        return sorted(
            results,
            key=lambda c: (round(c.cost, 9), c.simulation.usage.prompt_tokens, not c.recorded),
        )

    def key(c: Candidate) -> tuple[bool, float, float, bool]:
        cost, tokens = round(c.cost, 9), c.simulation.usage.prompt_tokens
        over = cost > limit
        return (over, cost if over else tokens, tokens if over else cost, not c.recorded)

    return sorted(results, key=key)


def no_editing(setting: Setting, compacted: bool) -> Setting:
    """`setting` with every context edit off (as configs/no-editing.toml): what `--tokens-
    within` measures cost against; compaction stays on for a run that compacted (its
    history holds the summaries, which need the edit)."""
    ce = setting.editing
    editing = dataclasses.replace(
        ce,
        tool_uses=dataclasses.replace(ce.tool_uses, enabled=False),
        thinking=dataclasses.replace(ce.thinking, enabled=False),
        compaction=dataclasses.replace(ce.compaction, enabled=ce.compaction.enabled and compacted),
    )
    return dataclasses.replace(setting, editing=editing)


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


def write_profile(
    path: Path, profile: Profile, setting: Setting | ContextEditing, *, force: bool
) -> None:
    """Save `profile` with `setting` (its editing and cache TTL; a bare ContextEditing keeps
    the profile's TTL) as a complete TOML profile (loads back with build_profile)."""
    import tomli_w

    from agentctl.profile.loader import build_profile
    from agentctl.profile.to_toml import profile_to_dict

    if isinstance(setting, ContextEditing):
        setting = Setting(setting, profile.cache.ttl)
    data = profile_to_dict(with_setting(profile, setting))
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
