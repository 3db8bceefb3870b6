"""What-if replay: a recorded conversation through the shared engine under other settings.

Each recorded turn's request is rebuilt (`replay.replay_request`) and handed to the one
implementation of the server's rules: `context.engine.apply_context_edits` for the edits and
one `context.cache.PromptCache` per replay for the cache, clocked by the recorded request
times (so TTLs expire as they did). The conversation never changes: the same messages, tool
results and output tokens on every turn. What the model would have done with other context
cannot be known; a simulation only reports what this replay computes.

Estimator fit (`EstimatorFit`, "calibration" in the JSON): the engine counts tokens with
agentctl's estimator; a real server counts with the model's tokenizer. Per turn, ratio =
recorded (prompt + cleared) / estimated unedited prompt; the factor is their token-weighted
mean. Thresholds go into the engine divided by the factor and token figures come out
multiplied by it. For emulator runs the factor is exactly 1.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentctl.agent.checkpoint import Tracker, notice_block, offered
from agentctl.agent.checkpoint import distance as checkpoint_distance
from agentctl.context.batching import Steering
from agentctl.context.cache import CacheUsage, Prefix, PromptCache
from agentctl.context.compaction import Compaction, compact
from agentctl.context.engine import EditOutcome, edit_as_server, validate_edits
from agentctl.context.incremental import Editor
from agentctl.context.memo import replay_memo
from agentctl.context.tokens import estimate_message_tokens
from agentctl.context.validate import validate_compaction_blocks
from agentctl.errors import ConfigError
from agentctl.profile.settings import ContextEditing, Profile
from agentctl.sessions.catalog import turn_pricing
from agentctl.sessions.replay import ReplaySettings, recorded_sizes, replay_request
from agentctl.sessions.transcript import Transcript, TurnRecord
from agentctl.types import AppliedEdit, Totals, Turn, Usage

LIMITS_NOTE = (
    "a replay keeps the recorded conversation: it cannot know how the model would have acted "
    "with other context, only what these settings would have cleared, cached and cost"
)


def sent_tokens(turn: Turn) -> int:
    """The unedited prompt the client sent (what the model sees plus what was cleared)."""
    return turn.usage.prompt_tokens + turn.cleared_input_tokens


@dataclass(frozen=True)
class Simulation:
    """A whole run under one set of settings: its turns (recorded or replayed) and what each
    cost at the recorded prices (None: no price)."""

    label: str
    turns: tuple[Turn, ...]
    costs: tuple[float | None, ...]

    @functools.cached_property
    def totals(self) -> Totals:
        """The sum of the turns at their costs (NaN: some turn had no price)."""
        return Totals.of(self.turns, self.costs)

    @property
    def usage(self) -> Usage:
        return self.totals.usage

    @property
    def cleared_input_tokens(self) -> int:
        return self.totals.cleared_input_tokens

    @property
    def cost_usd(self) -> float | None:
        return self.totals.known_cost

    @property
    def peak_prompt(self) -> int:
        return max((t.usage.prompt_tokens for t in self.turns), default=0)

    @property
    def cache_hit_ratio(self) -> float | None:
        return self.usage.cache_hit_ratio


@dataclass(frozen=True)
class EstimatorFit:
    """How agentctl's token estimator fits a transcript (not the probe's calibration file of
    server rules): recorded tokens per estimated token, and how far single turns stray."""

    factor: float
    max_error: float  # max |turn ratio - factor| / factor
    mean_error: float
    turns: int

    def to_json(self) -> dict[str, Any]:
        return {
            "factor": round(self.factor, 6),
            "max_error": round(self.max_error, 6),
            "mean_error": round(self.mean_error, 6),
            "turns": self.turns,
        }


def recorded_run(session: Transcript, prices: Profile) -> Simulation:
    """What happened, as the transcript says (usage, applied_edits, cost at its pricing)."""
    costs = tuple(turn_pricing(session, prices, t).usd(t.usage) for t in session.turns)
    return Simulation("recorded", tuple(t.event for t in session.turns), costs)


def calibrate(session: Transcript, settings: ReplaySettings) -> EstimatorFit:
    """The estimator's calibration against this transcript's recorded usage."""
    with replay_memo():
        return _calibrate(session, settings)


def _calibrate(session: Transcript, settings: ReplaySettings) -> EstimatorFit:
    editor, steering = Editor(settings.server), Steering()
    pairs = [
        (
            t.usage.prompt_tokens + t.cleared_input_tokens,
            _unedited_estimate(t, settings, editor, steering),
        )
        for t in session.turns
        if not t.usage.compactions  # its prompt is two calls' (the summary's and the reply's)
    ]
    pairs = [(rec, est) for rec, est in pairs if rec > 0 and est > 0]
    if not pairs:
        return EstimatorFit(1.0, 0.0, 0.0, 0)
    factor = sum(rec for rec, _ in pairs) / sum(est for _, est in pairs)
    errors = [abs(rec / est - factor) / factor for rec, est in pairs]
    return EstimatorFit(factor, max(errors), sum(errors) / len(errors), len(pairs))


def _unedited_estimate(
    turn: TurnRecord, settings: ReplaySettings, editor: Editor, steering: Steering
) -> int:
    """The prompt as sent, less what precedes a compaction block (never billed): the
    engine's `original_input_tokens`, from an editor kept across the turns."""
    return editor.edit(replay_request(turn, settings, steering=steering)).original_input_tokens


def simulate(
    session: Transcript,
    settings: ReplaySettings,
    prices: Profile,
    *,
    factor: float = 1.0,
    label: str = "simulated",
) -> Simulation:
    """Replay every recorded turn under `settings`; token figures scaled by `factor`.

    An offline run that was resumed ran against a new emulator, whose cache started empty:
    so does the replay's (a real server's cache outlives the client; its TTL decides).
    The replay remembers what it computed on the recorded history (`context.memo`), so each
    turn costs about what it adds.
    """
    with replay_memo():
        return _simulate(session, settings, prices, factor, label)


def _simulate(
    session: Transcript, settings: ReplaySettings, prices: Profile, factor: float, label: str
) -> Simulation:
    clock = _Clock()
    cache = PromptCache(clock=clock)
    settings = settings.scaled(factor)
    turns: list[Turn] = []
    costs: list[float | None] = []
    summaries = _Summaries()
    recorded: dict[int, int] = {}  # what the turns so far reported (`recorded_sizes`)
    steering = _Steer(recorded)
    editor, prefix = Editor(settings.server), Prefix()
    notice = _Notice.of(session, settings, prices, factor)
    for turn in session.turns:
        clock.now = turn.ts
        if session.offline and turns and turn.segment != session.turns[len(turns) - 1].segment:
            cache = PromptCache(clock=clock)
        # the recorded figures, until the replay compacts where the run did not
        sizes = recorded if summaries.at is None else None
        if sizes is None and steering.measured is not None:  # a new walk without figures
            steering = _Steer(None)
        built = replay_request(turn, settings, sizes, steering.walk, notice.patches)
        request = summaries.insert(built)
        recorded.update(notice.sizes(recorded_sizes([turn], factor)))
        if not turns:
            _check(request, session)
        outcome = editor.edit(request)
        # the editor counted the edited prompt: the emulator hands compact() that count too
        done = compact(outcome.request, outcome.input_tokens)
        figures: CacheUsage | None
        if done is None:
            figures, extra = cache.account(outcome.request, session.model, prefix), Usage()
        else:
            figures, extra = _compaction_figures(cache, outcome.request, done, session.model)
            summaries.add(len(turn.messages), done.summary)
        turns.append(_sim_turn(turn, outcome.applied_edits, figures, factor, extra))
        notice.decide(turn, turns[-1])
        # a what-if keeps the way it was billed
        costs.append(turn_pricing(session, prices, turn).usd(turns[-1].usage))
    return Simulation(label, tuple(turns), tuple(costs))


class _Notice:
    """agentctl's save-before-clear notice (agent/checkpoint.py) where a run under the replayed
    settings would have sent it: the client decides that turn by turn from the prompt's
    distance to the trigger, so a lower trigger sends it earlier. Each turn's tool results are
    decided when the turn is replayed, before the next request carries them: the recorded
    message when the decision is the recorded one, else a copy with the notice added or taken
    out (`patches`); the sizes batched clearing steers on move with it. Only for a run
    recorded against the emulator (its token counts are the engine's) in one segment, and a
    notice sent once (not `repeat`); otherwise the replay keeps the notice where it was."""

    def __init__(self, session: Transcript, editing: ContextEditing, moves: bool, memory: bool):
        self.block = notice_block(editing)
        self.edit = editing.tool_uses
        self.history = session.turns[-1].messages if moves else []
        self.recorded = next((i for i, m in enumerate(self.history) if _holds(m, self.block)), -1)
        self.tracker = Tracker(offered(editing, memory))
        self.patches: dict[int, dict[str, Any]] = {}
        self.shifts: list[tuple[int, int]] = []  # (message index, tokens it gained)

    @classmethod
    def of(
        cls, session: Transcript, settings: ReplaySettings, prices: Profile, factor: float
    ) -> _Notice:
        moves = (
            factor == 1.0
            and bool(session.turns)
            and not settings.editing.checkpoint.repeat
            and all(t.segment == session.turns[0].segment for t in session.turns)
        )
        return cls(session, settings.editing, moves, prices.tools.memory)

    def decide(self, turn: TurnRecord, replayed: Turn) -> None:
        """Whether the tool results that answer `turn` carry the notice (as the loop does)."""
        distance = checkpoint_distance(self.edit, replayed.usage, replayed.applied_edits)
        self.tracker.observe(replayed.applied_edits)
        index = len(turn.messages) + 1  # after the reply
        if index >= len(self.history) or replayed.stop_reason != "tool_use":
            return
        results = self.history[index]
        if results.get("role") != "user" or not isinstance(results.get("content"), list):
            return
        plain = [b for b in results["content"] if b != self.block]
        sent = self.tracker.take(distance, [self.history[index - 1], {"content": plain}])
        if sent == (index == self.recorded):
            return
        changed = {**results, "content": [*plain, self.block] if sent else plain}
        self.patches[index] = changed
        gained = estimate_message_tokens(changed) - estimate_message_tokens(results)
        self.shifts.append((index, gained))

    def sizes(self, measured: dict[int, int]) -> dict[int, int]:
        """The recorded prompt sizes as the run would have reported them with the notice
        where this replay puts it."""
        if not self.shifts:
            return measured
        return {
            n: size + sum(gained for index, gained in self.shifts if index < n)
            for n, size in measured.items()
        }


def _holds(message: Mapping[str, Any], block: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, list) and block in content


class _Steer:
    """Batched clearing's walk kept across the replay's turns, with the figures it steers on
    (a walk kept with figures is never continued without them)."""

    def __init__(self, measured: Mapping[int, int] | None) -> None:
        self.measured = measured
        self.walk = Steering()


class _Summaries:
    """Compactions the replay made: each later request carries its block where the response
    put it (after the history of the request that compacted), as a run resends it."""

    def __init__(self) -> None:
        self.at: tuple[int, str] | None = None

    def add(self, index: int, summary: str) -> None:
        self.at = (index, summary)

    def insert(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.at is None:
            return request
        index, summary = self.at
        messages = list(request["messages"])
        block = {"role": "assistant", "content": [{"type": "compaction", "content": summary}]}
        return {**request, "messages": [*messages[:index], block, *messages[index:]]}


def _compaction_figures(
    cache: PromptCache, request: Mapping[str, Any], done: Compaction, model: str
) -> tuple[CacheUsage | None, Usage]:
    """The emulator's accounting of a compaction (emulator/service.py): the summarising call
    reads and writes the prompt cache like a request (its instructions uncached after the
    prompt it closes); the reply reads the compacted prompt; a paused one has no reply."""
    closed = cache.account(request, model)
    cached = closed.cache_read_input_tokens + closed.cache_creation_input_tokens
    summarizing = Usage(
        done.input_tokens - cached,
        done.output_tokens,
        closed.cache_creation_input_tokens,
        closed.cache_read_input_tokens,
        compactions=1,
        ephemeral_5m_input_tokens=closed.ephemeral_5m_input_tokens,
        ephemeral_1h_input_tokens=closed.ephemeral_1h_input_tokens,
    )
    return (None if done.pause else cache.account(done.request, model)), summarizing


def edit_request(request: Mapping[str, Any], settings: ReplaySettings) -> EditOutcome:
    """What the server does to one replayed request under the settings' server model: its
    edits on the whole history, then the view from the last compaction block on (as the
    emulator: `context.engine.edit_as_server`)."""
    return edit_as_server(request, server=settings.server)


def _reply_output(turn: TurnRecord) -> int:
    """The recorded reply's output tokens, without a compaction's summary (the replay adds
    its own): the top-level `usage` leaves compaction iterations out."""
    top = (turn.response.get("usage") or {}).get("output_tokens")
    return int(top) if isinstance(top, int) else turn.usage.output_tokens


class _Clock:
    """The replay's clock: the recorded time of the request being replayed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _check(request: Mapping[str, Any], session: Transcript) -> None:
    """The settings' edits are valid, and the history's compaction blocks (the run received
    them) have their strategy: the whole history with the first request's edits (whether
    they hold the compact strategy does not change from turn to turn; rebuilding the last
    request would walk batched clearing over the whole history once more)."""
    history = {
        "messages": session.turns[-1].messages[:],
        "context_management": request.get("context_management"),
    }
    problem = validate_edits(request) or validate_compaction_blocks(history)
    if problem:
        raise ConfigError(f"session {session.id}: these settings cannot replay it: {problem}")


def _sim_turn(
    turn: TurnRecord,
    applied: Sequence[Mapping[str, Any]],
    figures: CacheUsage | None,
    factor: float,
    extra: Usage,
) -> Turn:
    def scale(value: int) -> int:
        return value if factor == 1.0 else round(value * factor)

    reply = Usage(
        figures.input_tokens,
        _reply_output(turn),
        figures.cache_creation_input_tokens,
        figures.cache_read_input_tokens,
        ephemeral_5m_input_tokens=figures.ephemeral_5m_input_tokens,
        ephemeral_1h_input_tokens=figures.ephemeral_1h_input_tokens,
    ) if figures else Usage()  # fmt: skip
    whole = reply + extra
    write = scale(whole.cache_creation_input_tokens)
    write_1h = min(scale(whole.ephemeral_1h_input_tokens), write)
    usage = dataclasses.replace(
        whole,
        input_tokens=scale(whole.input_tokens),
        cache_creation_input_tokens=write,
        cache_read_input_tokens=scale(whole.cache_read_input_tokens),
        ephemeral_5m_input_tokens=write - write_1h,
        ephemeral_1h_input_tokens=write_1h,
    )
    edits = tuple(
        AppliedEdit.from_json({**e, "cleared_input_tokens": scale(int(e["cleared_input_tokens"]))})
        for e in applied
    )
    return Turn(turn.turn, turn.event.stop_reason, usage, edits)


def replay_matches(a: Simulation, b: Simulation) -> bool:
    """The same usage and edits on every turn."""
    return [(t.usage, t.applied_edits) for t in a.turns] == [
        (t.usage, t.applied_edits) for t in b.turns
    ]
