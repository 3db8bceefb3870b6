"""Execute a `Plan`: tools, model client (the emulator when offline), transcript, loop;
the `RunResult`. `run` plans and executes in one call for Python users."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentctl.agent.loop import LoopSetup, RunControl, run_loop
from agentctl.agent.model import ModelClient
from agentctl.agent.structured import require_schema_argument, schema_argument
from agentctl.agent.trace_hooks import Trace
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.errors import (
    AgentctlError,
    ApiError,
    InterruptedRunError,
    LimitError,
    RequestTooLargeError,
    UsageError,
)
from agentctl.profile.loader import Overrides
from agentctl.runner.followup import plan_call
from agentctl.runner.plan import Plan, ProfileArg
from agentctl.runner.record import SessionRecorder, session_balances, write_header
from agentctl.runner.trace import traced_run, tracing
from agentctl.sessions.breakeven import EditBalance
from agentctl.sessions.transcript import WriteFn, session_path
from agentctl.tools.approval import (
    NOBODY,
    Approver,
    Gate,
    has_asks,
    offered_server_tools,
    require_approver,
)
from agentctl.tools.functions import function_tools
from agentctl.tools.mcp import mcp_tools
from agentctl.tools.memory import open_memory_tool
from agentctl.tools.registry import Tool, ToolBox, ToolSource
from agentctl.tools.workspace import WorkspaceTools
from agentctl.types import ErrorEvent, Event, ResultEvent, Totals, TurnEvent

if TYPE_CHECKING:
    from agentctl.agent.client import AnthropicClient
    from agentctl.agent.retry import RetryGate
    from agentctl.profile.settings import Profile

SdkClient = TypeVar("SdkClient", bound="AnthropicClient")
OFFLINE_KEY = "offline-dummy-key"
KEY_ENV = "ANTHROPIC_API_KEY"
TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"
# Offline only: the context window the built-in emulator enforces for every model, instead
# of each model's own (docs/emulator.md, "The context window").
WINDOW_ENV = "AGENTCTL_EMULATOR_CONTEXT_WINDOW"
NO_KEY = (
    "no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...), "
    "or run offline against the built-in emulator (agentctl run --offline; run(offline=True))"
)


@dataclass(frozen=True)
class RunResult:
    """What a run did. `turns` and `totals` cover this call (a resumed session continues after
    `first_turn`); `balances`, the per-edit cache accounting, covers the whole session."""

    session_id: str
    text: str
    stop_reason: str
    turns: tuple[TurnEvent, ...]
    totals: Totals
    balances: tuple[EditBalance, ...] | None  # None: no price for the model
    # False when the transcript could not be read back: `balances` then covers this call only.
    balances_cover_session: bool = True
    first_turn: int = 0
    recorded: bool = True
    warnings: tuple[str, ...] = ()
    # The answer parsed and checked against the output schema (None: the run had none).
    output: Any = None

    @property
    def resumed(self) -> bool:
        return self.first_turn > 0


def build_toolbox(plan: Plan, mcp: ToolSource | None = None) -> ToolBox:
    """Memory (journaling under the session id), workspace tools, the running MCP servers'
    tools (`mcp`), server tools: per profile."""
    from agentctl.agent.request import server_tools

    settings = plan.profile.tools
    offered, left_out = offered_server_tools(plan.profile.approval, server_tools(plan.profile))
    plan.warnings.extend(left_out)
    tools: list[Tool] = []
    if settings.memory:
        tools.append(open_memory_tool(plan.profile.memory, plan.session))
    if plan.workspace is not None:
        tools.extend(WorkspaceTools(plan.workspace, settings.max_result_chars).tools())
    clash = {t.name for t in tools} & {f.name for f in plan.functions}
    if clash:
        raise UsageError(f"tools: {sorted(clash)[0]!r} is the name of one of agentctl's tools")
    tools.extend(plan.functions)
    return ToolBox(
        tools,
        max_result_chars=settings.max_result_chars,
        server_tools=offered,
        sources=[mcp] if mcp is not None else [],
    )


def emulator_window() -> int | None:
    """$AGENTCTL_EMULATOR_CONTEXT_WINDOW as a positive integer, None when unset."""
    text = os.environ.get(WINDOW_ENV, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"${WINDOW_ENV}: {text!r} is not a positive integer (a token count)")
    return int(text)


def credentials(offline: bool) -> dict[str, str]:
    """SDK credentials: ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN (a bearer token).

    UsageError (exit 2) when there is neither and the run is not offline (a dummy key then).
    """
    if offline:
        return {"api_key": OFFLINE_KEY}
    key = os.environ.get(KEY_ENV, "").strip()
    if key:
        return {"api_key": key}
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return {"auth_token": token}
    raise UsageError(NO_KEY)


@contextmanager
def open_client(plan: Plan, *, gate: RetryGate | None = None) -> Iterator[ModelClient]:
    """The SDK client; offline, aimed at a built-in emulator started here for this run.
    `gate`: a retry gate shared with other clients (a batch's workers back off together)."""
    from agentctl.agent.client import AnthropicClient

    with connect(
        plan.profile,
        AnthropicClient,
        offline=plan.offline,
        server=plan.server.model,
        script=plan.script,
        web=plan.web,
        gate=gate,
    ) as client:
        yield client


@contextmanager
def connect(
    profile: Profile,
    kind: type[SdkClient],
    *,
    offline: bool,
    server: ServerModel = DEFAULT_SERVER_MODEL,
    script: Path | None = None,
    web: Path | None = None,
    gate: RetryGate | None = None,
) -> Iterator[SdkClient]:
    """A `kind` (AnthropicClient, or AnthropicBatches for the Message Batches calls) set up
    from the profile's [api] settings; offline, aimed at an emulator started here (playing
    `server`, the run's server model, with `script` and the offline `web`)."""
    from agentctl.agent.retry import RetryPolicy
    from agentctl.agent.wire import WireLimits

    api = profile.api
    # While agentctl traces, its `chat` spans replace the SDK's own (runner.trace.tracing).
    build = functools.partial(
        kind,
        **credentials(offline),
        timeout_s=api.timeout_s,
        retry=RetryPolicy(max_retries=api.max_retries, gate=gate),
        wire=WireLimits(deadline_s=api.deadline_s),
        sdk_spans=not tracing(),
    )
    if not offline:
        yield build(base_url=api.base_url)
        return
    from agentctl.emulator import KEEP_BYTES, KEEP_REQUESTS, running

    with running(
        keep_requests=KEEP_REQUESTS,  # a long run must not keep every body it sent
        keep_bytes=KEEP_BYTES,
        script=script,
        web=web,
        server_model=server,
        context_window=emulator_window(),
    ) as emulator:
        yield build(base_url=emulator.base_url)


def execute(
    plan: Plan,
    *,
    client: ModelClient | None = None,
    on_event: Callable[[Event], None] | None = None,
    record: bool = True,
    transcript_write: WriteFn = os.write,
    control: RunControl | None = None,
    approve: Approver | None = None,
) -> RunResult:
    """Run the plan; every event goes to `on_event` and the transcript. On failure an
    ErrorEvent goes out, then the AgentctlError propagates (Ctrl-C: InterruptedRunError).
    `control`: asks the running loop for a compaction (`RunControl.compact_before_next_turn`).
    `approve`: answers the calls the profile's [approval] rules ask about (None: denied).

    A resumed plan appends to the file it was read from. `transcript_write` is the os.write-like
    call the transcript uses (a seam: tests give it a full disk)."""
    path = plan.transcript or session_path(plan.session)
    recorder = SessionRecorder(
        path if record else None,
        resumed=plan.resumed,
        expect_size=plan.transcript_size,
        write=transcript_write,
    )
    write_header(recorder, plan)
    turns: list[TurnEvent] = []

    def emit(event: Event) -> None:
        recorder.event(event)
        turns.extend([event] if isinstance(event, TurnEvent) else [])
        if on_event is not None:
            on_event(event)

    connection: AbstractContextManager[ModelClient] = (
        nullcontext(client) if client is not None else open_client(plan)
    )
    # Started once per run, stopped on every exit; what they cannot offer is said at the start.
    servers = mcp_tools(plan.profile.mcp.servers, plan.warnings.append)
    gate = approval_gate(plan, approve)
    # The run's span (runner.trace) covers starting the emulator and the MCP servers too.
    with traced_run(plan) as traced, recorder, connection as model, servers as mcp:
        steps = traced.steps
        result = _drive(plan, model, recorder, emit, mcp, control or RunControl(), gate, steps)
        traced.ended(result)
    return _result(plan, result, tuple(turns), recorder.opened)


def _drive(
    plan: Plan,
    client: ModelClient,
    recorder: SessionRecorder,
    emit: Callable[[Event], None],
    mcp: ToolSource,
    control: RunControl,
    gate: Gate,
    trace: Trace,
) -> ResultEvent:
    setup = LoopSetup(
        profile=plan.profile,
        client=client,
        tools=build_toolbox(plan, mcp),
        session=plan.session,
        recorder=recorder,
        cost=plan.pricing().cost,
        first_turn=plan.first_turn,
        task=plan.task_source,
        control=control,
        measured=plan.measured,
        server=plan.server.model,
        output_schema=plan.output_schema,
        gate=gate,
        trace=trace,
    )
    try:
        return _consume(run_loop(setup, plan.messages), emit)
    except KeyboardInterrupt as stop:  # Ctrl-C, or a reason the CLI's signal handlers give
        error: AgentctlError = InterruptedRunError(str(stop) or "stopped by Ctrl-C")
    except AgentctlError as err:
        error = err
    if recorder.opened:  # only a recorded session can be continued
        error = with_resume_hint(error, plan.session)
    emit(ErrorEvent(error.kind, str(error)))
    raise error


def approval_gate(plan: Plan, approve: Approver | None) -> Gate:
    """The run's approval gate; rules that ask, with nobody to ask, are warned about."""
    rules = plan.profile.approval
    if approve is None and has_asks(rules):
        plan.warnings.append(
            f"approval: {NOBODY}: the calls the [approval] rules ask for will be denied"
        )
    return Gate(rules, approve)


def _consume(events: Iterator[Event], emit: Callable[[Event], None]) -> ResultEvent:
    result: ResultEvent | None = None
    for event in events:
        emit(event)
        if isinstance(event, ResultEvent):
            result = event
    if result is None:
        raise ApiError("the run ended without a result")
    return result


def with_resume_hint(err: AgentctlError, session: str) -> AgentctlError:
    """The same error, its message ending with how to continue (for resumable stops; not
    for a request over the API's size limit, which a resume would send again)."""
    if isinstance(err, RequestTooLargeError) or (isinstance(err, ApiError) and err.status == 413):
        return err
    hint = f"{err}; continue with: agentctl run --resume {session}"
    if isinstance(err, ApiError):
        return ApiError(hint, status=err.status, request_id=err.request_id)
    if isinstance(err, LimitError | InterruptedRunError):
        return type(err)(hint)
    return err


def _result(
    plan: Plan, result: ResultEvent, turns: tuple[TurnEvent, ...], recorded: bool
) -> RunResult:
    balances, whole = session_balances(plan.session, plan.pricing(), turns, recorded=recorded)
    return RunResult(
        session_id=result.session,
        text=result.text,
        stop_reason=result.stop_reason,
        turns=turns,
        totals=result.totals,
        balances=balances,
        balances_cover_session=whole,
        first_turn=plan.first_turn,
        recorded=recorded,
        warnings=tuple(plan.warnings),
        output=result.output,
    )


def run(
    task: str | Path | None = None,
    *,
    profile: ProfileArg = None,
    offline: bool = False,
    client: ModelClient | None = None,
    workspace: str | Path | None = None,
    memory_root: str | Path | None = None,
    on_event: Callable[[Event], None] | None = None,
    record: bool = True,
    trust_task: bool = False,
    control: RunControl | None = None,
    continue_session: str | None = None,
    fork: str | None = None,
    output_schema: Mapping[str, Any] | str | Path | None = None,
    tools: Sequence[Callable[..., Any]] = (),
    approve: Approver | None = None,
) -> RunResult:
    """Run `task` (its text, or a task file) to the end and return what happened.

    `profile`: a Profile, a path, or None for the normal lookup; `offline`: against the
    built-in emulator; `client`: any ModelClient (e.g. `ScriptedClient`); `record=False`
    writes no transcript; `trust_task=True` lets a task file's front matter set what only the
    caller may (`agentctl run --trust-task`); `control`: a `RunControl` whose
    `compact_before_next_turn()` (from `on_event` or another thread) makes the next request
    an on-demand compaction; `continue_session` (an id, prefix or "last"): `task` is a
    follow-up to that finished session; `fork` ("SESSION[@TURN]"): a new session from that
    turn's history, `task` (optional) its next prompt; `output_schema`: a JSON Schema (dict)
    or its file, which the final answer must match (`RunResult.output` holds it parsed;
    OutputError if it does not); `tools`: Python functions (sync or async) offered to the
    model as tools; `approve`: called with an `ApprovalRequest` for each call the profile's
    [approval] rules ask about, returns True to allow it, False to deny it, or "always" to
    allow that tool for the rest of the run (None: such calls are denied). Raises the
    agentctl exception tree.
    """
    require_schema_argument(output_schema)
    require_approver(approve)
    values = {} if memory_root is None else {"memory.root": str(memory_root)}
    if isinstance(output_schema, str | Path):
        values["output.schema"] = str(Path(output_schema).expanduser().resolve())
    plan = plan_call(
        task,
        profile=profile,
        overrides=Overrides(values=values),
        workspace=Path(workspace) if workspace is not None else None,
        offline=offline,
        trust_task=trust_task,
        continue_session=continue_session,
        fork=fork,
    )
    plan = with_programs(plan, output_schema, tools)
    return execute(
        plan, client=client, on_event=on_event, record=record, control=control, approve=approve
    )


def with_programs(
    plan: Plan,
    output_schema: Mapping[str, Any] | str | Path | None,
    tools: Sequence[Callable[..., Any]],
) -> Plan:
    """`plan` with a schema given as a dict (a file is a profile key already) and the
    caller's Python functions as tools."""
    if isinstance(output_schema, Mapping):
        plan = dataclasses.replace(plan, output_schema=schema_argument(output_schema))
    if tools:
        plan = dataclasses.replace(plan, functions=function_tools(tools))
    return plan
