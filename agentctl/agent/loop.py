"""The tool-use loop: a generator of events that never prints and never knows its concrete client.

Each turn sends the unedited history (context editing happens on the server; from the last
compaction block on, see "Bounded history" below), answers the model's tool calls, and
yields a TurnEvent. The run ends on end_turn / stop_sequence / refusal, resends on
pause_turn (and compaction), and raises LimitError on max_tokens, on the model's context
window, on max_turns and on the profile's budgets.

On-demand compaction: when a `RunControl` asked for it, or a response's prompt reached the
trigger of `context_editing.compaction` in mode "on-demand", the next request is a compaction
request (agent/request.py), sent only while the history ends with a user message (no tool_use
unanswered, no paused turn). Its answer, a signed block alone, is appended like any reply and
counted as a turn; the requests after it send the history from that block on.

Bounded history: the loop holds the history from where the server still reads it on (the
last on-demand summary, or with compact_20260112 the last reply holding a compaction block;
request.opens_view) and drops what precedes, which the transcript keeps. Indexes it reports
(the recorder's, the thread's) count from the session's first message.

Save-before-clear (agent/checkpoint.py): once per run, the tool results sent before the first
clearing can happen carry a notice telling the model to save to memory what it still needs;
the turn they answer has `checkpoint` set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agentctl.agent import checkpoint
from agentctl.agent.model import ModelClient, ModelResponse, Progress
from agentctl.agent.request import (
    build_compaction_request,
    build_context_management,
    build_request,
    opens_view,
    read_from,
    reported_size,
)
from agentctl.agent.structured import parse_output
from agentctl.agent.thread import Thread
from agentctl.agent.trace_hooks import NullTrace, Trace
from agentctl.context.batching import Steering
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.errors import ApiError, LimitError, UsageError
from agentctl.profile.settings import Profile
from agentctl.tools.approval import Gate, request_for
from agentctl.tools.registry import ToolBox, ToolOutcome, relay
from agentctl.types import (
    Event,
    ProgressEvent,
    ResultEvent,
    StartEvent,
    ToolCall,
    Totals,
    TurnEvent,
    Usage,
)

FINAL_STOPS = frozenset({"end_turn", "stop_sequence", "refusal"})
RESEND_STOPS = frozenset({"pause_turn", "compaction"})

Message = dict[str, Any]


class Recorder(Protocol):
    """Where the loop reports what a transcript needs besides events."""

    def message(self, index: int, message: Mapping[str, Any]) -> None: ...

    def request(self, turn: int, request: Mapping[str, Any], history: int) -> None: ...

    def response(self, turn: int, response: ModelResponse) -> None: ...

    def tool_result(self, turn: int, call: ToolCall, content: str) -> None: ...


class NullRecorder:
    """Records nothing (tests of the loop logic)."""

    def message(self, index: int, message: Mapping[str, Any]) -> None:
        pass

    def request(self, turn: int, request: Mapping[str, Any], history: int) -> None:
        pass

    def response(self, turn: int, response: ModelResponse) -> None:
        pass

    def tool_result(self, turn: int, call: ToolCall, content: str) -> None:
        pass


def no_cost(usage: Usage) -> float:
    """A cost function for runs without a price table."""
    del usage
    return 0.0


THRESHOLD_CLASH = (
    'compact_before_next_turn(): context_editing.compaction is on in mode "threshold", and'
    " the API refuses a signed compaction block beside the compact_20260112 edit (set"
    ' mode = "on-demand", or turn compaction off)'
)


class RunControl:
    """Asks a running loop for things between turns; safe to call from any thread, or from an
    `on_event` callback. `compact_before_next_turn()` is the SDK tool runner's call of that
    name: the next request summarises the conversation (docs/python.md)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: str | None = None  # the instructions ("": the profile's or the server's)
        self._profile: Profile | None = None

    def compact_before_next_turn(self, instructions: str | None = None) -> None:
        """Make the next request a compaction request (`instructions` replace the server's
        summarisation prompt; None: the profile's `context_editing.compaction.instructions`).
        A second call before it is sent replaces the first. UsageError while the run's
        profile has threshold compaction."""
        with self._lock:
            if self._profile is not None and self._profile.context_editing.compaction.threshold:
                raise UsageError(THRESHOLD_CLASH)
            self._pending = instructions or ""

    @property
    def compaction_pending(self) -> bool:
        with self._lock:
            return self._pending is not None

    def bind(self, profile: Profile) -> None:
        """The loop starts with `profile` (UsageError if a pending compaction cannot be sent)."""
        with self._lock:
            self._profile = profile
            if self._pending is not None and profile.context_editing.compaction.threshold:
                raise UsageError(THRESHOLD_CLASH)

    def take_compaction(self) -> str | None:
        """The pending compaction's instructions ("" for none), once; None when none is."""
        with self._lock:
            pending, self._pending = self._pending, None
            return pending


@dataclass(frozen=True)
class LoopSetup:
    """Everything the loop needs; `first_turn` > 0 when a resumed session continues."""

    profile: Profile
    client: ModelClient
    tools: ToolBox
    session: str
    recorder: Recorder = field(default_factory=NullRecorder)
    cost: Callable[[Usage], float] = no_cost
    first_turn: int = 0
    task: str = ""
    control: RunControl = field(default_factory=RunControl)
    # A resumed run's recorded prompt sizes, by messages answered (`request.reported_size`).
    measured: Mapping[int, int] = field(default_factory=dict)
    # The server rules batched clearing counts tool uses by (the run's, resolved once).
    server: ServerModel = DEFAULT_SERVER_MODEL
    # Told of each request and tool call as it starts and ends (OpenTelemetry: runner/trace.py).
    trace: Trace = field(default_factory=NullTrace)
    # The JSON Schema the final answer must match (agent/structured.py); None: free text.
    output_schema: Mapping[str, Any] | None = None
    # The [approval] rules and who answers their "ask" (tools/approval.py): allow all by default.
    gate: Gate = field(default_factory=Gate)


@dataclass
class _State:
    # The history from where the server still reads it on (`_forget`): the session's
    # messages from index `base` on (what precedes is in the transcript, if one is written).
    messages: list[Message]
    turn: int
    base: int = 0
    turns_run: int = 0
    totals: Totals = field(default_factory=Totals)
    last_prompt: int = 0  # prompt tokens of the latest response
    # what each response reported of its prompt, by the messages it answered (steering)
    measured: dict[int, int] = field(default_factory=dict)
    steering: Steering = field(default_factory=Steering)  # batched clearing's walk so far
    thread: Thread = field(default_factory=lambda: Thread(on=False))  # api.threads
    # where the run stands with the save-before-clear notice (agent/checkpoint.py)
    notice: checkpoint.Tracker = field(default_factory=lambda: checkpoint.Tracker(False))


def run_loop(setup: LoopSetup, messages: list[Message]) -> Iterator[Event]:
    """Run until a final stop; yields StartEvent, ProgressEvents, TurnEvents, one ResultEvent.

    `messages` is the history so far (already recorded); the loop appends to its own copy,
    which holds the history from where the server reads it on (`_forget`).
    Raises LimitError / ApiError; the caller turns those into an ErrorEvent and an exit code.
    """
    state = _State(messages=list(messages), turn=setup.first_turn, measured=dict(setup.measured))
    state.thread.on = setup.profile.api.threads
    state.notice = checkpoint.Tracker.start(setup.profile, messages)
    del messages  # the generator holds its own copy only, which `_forget` can shorten
    _forget(state, read_from(state.messages, _threshold(setup)))
    setup.control.bind(setup.profile)
    yield _start_event(setup)
    while True:
        state.turn += 1
        state.turns_run += 1
        compaction = _compaction_due(setup, state)
        response = yield from _send(setup, state, compaction)
        _measure(state, response, compaction is not None)
        # A compaction's prompt is the one it closed: it must not call for another.
        state.last_prompt = 0 if compaction is not None else response.usage.prompt_tokens
        event = yield from _finish_turn(setup, state, response, summarised=compaction is not None)
        state.totals = state.totals.add_turn(event, setup.cost(event.usage))
        yield event
        if response.stop_reason in FINAL_STOPS:
            setup.control.take_compaction()  # asked for after the last turn: nothing to send
            totals = replace(state.totals, tool_failures=setup.tools.failures)
            schema, text = setup.output_schema, response.text
            output = None if schema is None else parse_output(text, schema, response.stop_reason)
            yield ResultEvent(
                setup.session, state.turns_run, response.stop_reason, text, totals, output
            )
            return
        check_stop(setup.profile, response, state.turn)
        check_limits(setup.profile, state.turns_run, state.totals)


def _measure(state: _State, response: ModelResponse, compaction: bool) -> None:
    size = reported_size(
        response.usage, response.content, response.applied_edits, compaction_request=compaction
    )
    if size is not None:
        state.measured[len(state.messages)] = size


def _start_event(setup: LoopSetup) -> StartEvent:
    profile = setup.profile
    cm = build_context_management(profile.context_editing)
    trigger = profile.context_editing.tool_uses.input_trigger  # the live view's mark
    return StartEvent(setup.session, profile.model, cm, profile.source, setup.task, trigger)


def _compaction_due(setup: LoopSetup, state: _State) -> str | None:
    """The instructions of the compaction the next request should be ("" for none), or None.

    Only while the history ends with a user message (the task or tool results): the API
    cannot compact a conversation with an unanswered tool_use or a paused turn, so a request
    waits for then. An on-demand profile asks once a response's prompt reached its trigger.
    """
    if not state.messages or state.messages[-1].get("role") != "user":
        return None
    settings = setup.profile.context_editing.compaction
    pending = setup.control.take_compaction()
    if pending is None and settings.on_demand and state.last_prompt >= settings.trigger:
        pending = ""
    if pending is None:
        return None
    return pending or settings.instructions


def _send(
    setup: LoopSetup, state: _State, compaction: str | None = None
) -> Generator[Event, None, ModelResponse]:
    tools = setup.tools.definitions()
    if compaction is None:
        request = build_request(
            setup.profile,
            state.messages,
            tools,
            state.measured,
            setup.server,
            state.steering,
            0,  # the history the loop holds starts where the server reads (`_forget`)
            output_schema=setup.output_schema,
        )
    else:
        request = build_compaction_request(setup.profile, state.messages, tools, compaction)
    # The transcript counts the whole history (a request after a summary sends only its
    # tail: what precedes a compaction block is what the server ignores).
    history = state.base + len(state.messages)
    setup.recorder.request(state.turn, request, history)
    start = history - len(request["messages"])
    while True:
        # A compaction request goes without a thread (the next request starts a new one).
        wire = request if compaction is not None else state.thread.wire(request, history, start)
        try:
            response = yield from _stream(setup, state, wire)
        except ApiError as err:
            if "thread" in wire and state.thread.recovers(err):
                continue
            raise
        if "thread" in wire:
            state.thread.answered(response.raw, response.stop_reason)
        setup.recorder.response(state.turn, response)
        return response


def _stream(
    setup: LoopSetup, state: _State, request: Mapping[str, Any]
) -> Generator[Event, None, ModelResponse]:
    response: ModelResponse | None = None
    with setup.trace.request(state.turn, request) as traced:
        for item in setup.client.stream(request):
            if isinstance(item, Progress):
                yield ProgressEvent(
                    state.turn, item.kind, item.chars, item.tool_name, text=item.text, at=item.at
                )
            else:
                response = item
        if response is None:
            raise ApiError("the model client returned no response")
        traced(response)
    return response


def _append(setup: LoopSetup, state: _State, message: Message) -> None:
    setup.recorder.message(state.base + len(state.messages), message)
    state.messages.append(message)
    if opens_view(message, _threshold(setup)):
        _forget(state, len(state.messages) - 1)


def _threshold(setup: LoopSetup) -> bool:
    """Whether the run's requests carry compact_20260112 (the server then reads from the
    last compaction block on)."""
    return setup.profile.context_editing.compaction.threshold


def _forget(state: _State, count: int) -> None:
    """Drop the first `count` messages of the history the loop holds: the server no longer
    reads them (they precede the last compaction block), and the transcript has them. What
    is kept by message count moves with them; the next request starts a new thread (its
    history starts elsewhere)."""
    if count <= 0:
        return
    del state.messages[:count]
    state.base += count
    state.measured = {n - count: v for n, v in state.measured.items() if n > count}


def _finish_turn(
    setup: LoopSetup, state: _State, response: ModelResponse, *, summarised: bool = False
) -> Generator[Event, None, TurnEvent]:
    """Append the answer to the history, act on the stop reason, run tools: the TurnEvent.

    A compaction answer without a summary (`content: null`, a failed compaction) is not
    appended: the conversation goes on as it was (as the SDK's tool runner does)."""
    calls: tuple[ToolCall, ...] = ()
    distance = trigger_distance(setup.profile, response)
    state.notice.observe(response.applied_edits)
    notice = False
    if not (summarised and _failed_summary(response)):
        _append(setup, state, {"role": "assistant", "content": list(response.content)})
        calls, notice = yield from _answer_tools(setup, state, response, distance)
    return TurnEvent(
        turn=state.turn,
        stop_reason=response.stop_reason,
        usage=response.usage,
        applied_edits=response.applied_edits,
        tool_calls=calls,
        trigger_distance=distance,
        request_id=response.request_id,
        server_tool_calls=response.server_tool_calls,
        checkpoint=notice,
    )


def _failed_summary(response: ModelResponse) -> bool:
    """A compaction answer holding compaction blocks only, none with a summary."""
    blocks = response.content
    return all(b.get("type") == "compaction" and not b.get("content") for b in blocks)


def check_stop(profile: Profile, response: ModelResponse, turn: int) -> None:
    """LimitError / ApiError for a stop reason that ends the run without an answer."""
    reason = response.stop_reason
    if reason in FINAL_STOPS or reason in RESEND_STOPS or reason == "tool_use":
        return
    if reason == "max_tokens":
        where = "in the middle of a tool call" if response.tool_uses else "before finishing"
        raise LimitError(
            f"turn {turn}: the model hit max_tokens={profile.max_tokens} {where}; "
            "raise it with --set max_tokens=N"
        )
    if reason == "model_context_window_exceeded":
        raise LimitError(
            f"turn {turn}: the prompt exceeded the model's context window; lower "
            "context_editing.tool_uses.trigger so clearing starts earlier"
        )
    raise ApiError(f"turn {turn}: unexpected stop_reason {reason!r} from the API")


def _answer_tools(
    setup: LoopSetup, state: _State, response: ModelResponse, distance: int | None = None
) -> Generator[Event, None, tuple[tuple[ToolCall, ...], bool]]:
    """Run the response's tool calls and append their results (with the save-before-clear
    notice when it is due): the calls, and whether the notice went with them."""
    if response.stop_reason != "tool_use" or not response.tool_uses:
        return (), False
    calls: list[ToolCall] = []
    results: list[dict[str, Any]] = []
    for block in response.tool_uses:
        call, result = yield from _run_tool(setup, state.turn, block)
        calls.append(call)
        results.append(result)
    notice = state.notice.take(distance, [state.messages[-1], {"content": results}])
    if notice:
        # After the results: the API wants a tool_result user message to open with them.
        results.append(checkpoint.notice_block(setup.profile.context_editing))
    _append(setup, state, {"role": "user", "content": results})
    return tuple(calls), notice


def _run_tool(
    setup: LoopSetup, turn: int, block: Mapping[str, Any]
) -> Generator[Event, None, tuple[ToolCall, dict[str, Any]]]:
    tool_input = block.get("input")
    tool_input = dict(tool_input) if isinstance(tool_input, Mapping) else {}
    name, tool_use_id = str(block.get("name", "")), str(block.get("id", ""))
    request = request_for(name, tool_input, turn=turn, tool_use_id=tool_use_id)
    refusal = setup.gate.refusal(request)  # before the span: a prompt's wait is not the tool's
    with setup.trace.tool(turn, name, tool_input) as traced:
        if refusal is not None:
            outcome = ToolOutcome(refusal, True)
        else:  # the tool's progress messages go to the status line while it runs
            outcome = yield from relay(
                setup.tools.run(name, tool_input, turn=turn, tool_use_id=tool_use_id),
                lambda message: ProgressEvent(turn, "tool_progress", 0, name, message),
            )
        call = ToolCall(
            tool_use_id,
            name,
            tool_input,
            outcome.is_error,
            len(outcome.content),
            denied=refusal is not None,
        )
        traced(call)
    setup.recorder.tool_result(turn, call, outcome.content)
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": outcome.api_content,
    }
    if outcome.is_error:
        result["is_error"] = True
    return call, result


def trigger_distance(profile: Profile, response: ModelResponse) -> int | None:
    """The response's prompt minus the clear_tool_uses trigger (`checkpoint.distance`)."""
    edit = profile.context_editing.tool_uses
    return checkpoint.distance(edit, response.usage, response.applied_edits)


def check_limits(profile: Profile, turns_run: int, totals: Totals) -> None:
    """LimitError when this run has used up its turns or one of the profile's budgets."""
    if turns_run >= profile.max_turns:
        raise LimitError(f"stopped after max_turns={profile.max_turns} turns")
    budget = profile.limits
    if budget.max_input_tokens and totals.usage.prompt_tokens >= budget.max_input_tokens:
        raise LimitError(
            f"input-token budget reached: {totals.usage.prompt_tokens} >= "
            f"limits.max_input_tokens={budget.max_input_tokens}"
        )
    if budget.max_usd and totals.cost_usd >= budget.max_usd:
        raise LimitError(
            f"cost budget reached: ${totals.cost_usd:.4f} >= limits.max_usd={budget.max_usd}"
        )
