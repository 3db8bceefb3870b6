"""Assemble one `agentctl run`: task + profile + tools + client + transcript, then drive the loop.

New runs and resumed ones differ only in where the profile, prompt and history come from
(`prepare_new` / `prepare_resume`); `execute` is the same for both, and for the real API and
the in-process emulator (`--offline`), which differ only in base URL and key.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agentctl import __version__
from agentctl.agent.events import ErrorEvent, Event, ResultEvent, Usage
from agentctl.agent.loop import LoopSetup, run_loop
from agentctl.agent.model import ModelClient
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.task import default_workspace, read_task
from agentctl.errors import AgentctlError, ApiError, InterruptedRunError, LimitError, UsageError
from agentctl.profile.loader import apply_set_overrides, build_profile, resolve_profile
from agentctl.profile.settings import Profile
from agentctl.profile.writer import profile_to_dict
from agentctl.sessions.record import ResumeRecord, SessionHeader
from agentctl.sessions.resume import load_run, resumable_history
from agentctl.sessions.transcript import TranscriptWriter, new_session_id, session_path
from agentctl.tools.memory import open_memory_tool
from agentctl.tools.registry import Tool, ToolBox
from agentctl.tools.workspace import WorkspaceTools

OFFLINE_KEY = "offline-dummy-key"
KEY_ENV = "ANTHROPIC_API_KEY"
TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"
NO_KEY = (
    "no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...), "
    "or run against the built-in emulator with --offline"
)


@dataclass(frozen=True)
class RunOptions:
    """What the command line asked for; None means "not given"."""

    task: str | None = None
    profile: str | None = None
    model: str | None = None
    max_turns: int | None = None
    max_usd: float | None = None
    sets: tuple[str, ...] = ()
    workspace: Path | None = None
    offline: bool = False
    resume: str | None = None


@dataclass(frozen=True)
class PreparedRun:
    """A run ready to execute: everything resolved, nothing started."""

    session: str
    profile: Profile
    prompt: str
    task_source: str
    workspace: Path | None
    messages: list[dict[str, Any]]
    offline: bool
    warnings: list[str] = field(default_factory=list)
    first_turn: int = 0
    resumed: bool = False
    script: Path | None = None
    # How many leading messages the transcript already holds (the rest get recorded first).
    recorded: int = 0
    transcript: Path | None = None  # the file resumed (None: a new file named by the session)
    transcript_size: int | None = None  # its size when read (a resume refuses if it grew)


def flag_overrides(opts: RunOptions) -> list[str]:
    """--model / --max-turns / --max-usd as --set items, applied after every other source."""
    items = [] if opts.model is None else [f"model={json.dumps(opts.model)}"]
    items += [] if opts.max_turns is None else [f"max_turns={opts.max_turns}"]
    items += [] if opts.max_usd is None else [f"limits.max_usd={float(opts.max_usd)!r}"]
    return [*opts.sets, *items]


def prepare(opts: RunOptions, stdin: TextIO) -> PreparedRun:
    """A new run from TASK, or the continuation of a saved session with --resume."""
    if opts.resume is not None:
        if opts.task is not None or opts.profile is not None:
            raise UsageError(
                "--resume continues a saved session with its own task and profile; "
                "drop TASK/--profile (change keys with --set)"
            )
        return prepare_resume(opts)
    if opts.task is None:
        raise UsageError("missing TASK: give a Markdown file, - for stdin, or --resume SESSION")
    return prepare_new(opts, stdin)


def prepare_new(opts: RunOptions, stdin: TextIO) -> PreparedRun:
    task = read_task(opts.task or "-", stdin)
    profile, warnings = resolve_profile(opts.profile, flag_overrides(opts), task.overrides)
    workspace = opts.workspace or task.workspace or default_workspace(task)
    return PreparedRun(
        session=new_session_id(),
        profile=profile,
        prompt=task.prompt,
        task_source=task.source,
        workspace=_workspace(profile, workspace),
        messages=[{"role": "user", "content": task.prompt}],
        offline=opts.offline,
        warnings=warnings,
        script=task.script,
    )


def prepare_resume(opts: RunOptions) -> PreparedRun:
    saved = load_run(opts.resume or "last")
    head = saved.header
    data = apply_set_overrides(dict(head.profile), flag_overrides(opts))
    source = head.profile_source or "<session>"
    profile, warnings = build_profile(data, source=source, base_dir=Path(head.cwd))
    saved_ws = head.workspace
    workspace = opts.workspace or (Path(saved_ws) if saved_ws else None)
    script = head.emulator_script
    history = resumable_history(saved)
    return PreparedRun(
        session=saved.session,
        profile=profile,
        prompt=head.task,
        task_source=head.task_source,
        workspace=_workspace(profile, workspace),
        messages=history,
        offline=opts.offline or head.offline,
        warnings=[*saved.warnings, *warnings],
        first_turn=saved.last_turn,
        resumed=True,
        script=Path(script) if script else None,
        recorded=min(len(saved.messages), len(history)),
        transcript=saved.path,
        transcript_size=saved.size,
    )


def _workspace(profile: Profile, chosen: Path | None) -> Path | None:
    if not profile.tools.workspace:
        return None
    root = (chosen or profile.tools.workspace_root).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"workspace {root}: no such directory (set --workspace DIR)")
    return root


def build_toolbox(prep: PreparedRun) -> ToolBox:
    """Memory (journaling under the session id), workspace tools, server tools: per profile."""
    from agentctl.agent.request import server_tools

    settings = prep.profile.tools
    tools: list[Tool] = []
    if settings.memory:
        tools.append(open_memory_tool(prep.profile.memory, prep.session))
    if prep.workspace is not None:
        tools.extend(WorkspaceTools(prep.workspace, settings.max_result_chars).tools())
    return ToolBox(
        tools,
        max_result_chars=settings.max_result_chars,
        server_tools=server_tools(prep.profile),
    )


def cost_function(profile: Profile) -> Callable[[Usage], float]:
    """Estimated USD of one response (NaN when the model has no known price)."""
    from agentctl.context.prices import cost_usd

    def cost(usage: Usage) -> float:
        one_hour = usage.cache_creation_input_tokens if profile.cache.ttl == "1h" else 0
        value = cost_usd(
            profile.model, usage, overrides=profile.prices, cache_write_1h_tokens=one_hour
        )
        return math.nan if value is None else value

    return cost


def credentials(offline: bool) -> dict[str, str]:
    """SDK credentials: ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN (a bearer token).

    UsageError (exit 2) when there is neither and no --offline, which uses a dummy key.
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
def open_client(prep: PreparedRun, retry: RetryPolicy | None = None) -> Iterator[ModelClient]:
    """The SDK client, aimed at the in-process emulator when offline; same code path otherwise."""
    from agentctl.agent.client import AnthropicClient

    api = prep.profile.api
    policy = retry or RetryPolicy(max_retries=api.max_retries)
    creds = credentials(prep.offline)
    if not prep.offline:
        yield AnthropicClient(**creds, base_url=api.base_url, timeout_s=api.timeout_s, retry=policy)
        return
    from agentctl.emulator.server import running

    placeholder = prep.profile.context_editing.placeholder
    with running(script=prep.script, result_placeholder=placeholder) as emulator:
        yield AnthropicClient(
            **creds, base_url=emulator.base_url, timeout_s=api.timeout_s, retry=policy
        )


def write_header(writer: TranscriptWriter, prep: PreparedRun) -> None:
    """The session record (new run) or a resume record, then the messages not yet recorded."""
    if prep.resumed:
        writer.append(ResumeRecord(prep.session, prep.first_turn))
    else:
        _write_session_record(writer, prep)
    for index in range(prep.recorded, len(prep.messages)):
        writer.message(index, prep.messages[index])


def _write_session_record(writer: TranscriptWriter, prep: PreparedRun) -> None:
    header = SessionHeader(
        session=prep.session,
        task=prep.prompt,
        task_source=prep.task_source,
        profile=profile_to_dict(prep.profile),
        profile_source=prep.profile.source,
        model=prep.profile.model,
        cwd=str(Path.cwd()),
        offline=prep.offline,
        workspace=str(prep.workspace) if prep.workspace else None,
        memory_root=str(prep.profile.memory.root),
        emulator_script=str(prep.script) if prep.script else None,
        agentctl_version=__version__,
    )
    writer.append(header)


def execute(
    prep: PreparedRun,
    emit: Callable[[Event], None],
    client: ModelClient,
    open_transcript: Callable[..., TranscriptWriter] = TranscriptWriter,
) -> ResultEvent:
    """Run the loop, feeding every event to `emit` and the transcript; the final ResultEvent.

    On failure an ErrorEvent goes out first, then the AgentctlError (with how to resume)
    propagates; Ctrl-C becomes InterruptedRunError. `open_transcript` is a seam for tests.
    """
    path = prep.transcript or session_path(prep.session)
    with open_transcript(path, expect_size=prep.transcript_size) as writer:
        write_header(writer, prep)

        def both(event: Event) -> None:
            writer.event(event)
            emit(event)

        return _drive(prep, client, writer, both)


def _drive(
    prep: PreparedRun, client: ModelClient, writer: TranscriptWriter, emit: Callable[[Event], None]
) -> ResultEvent:
    setup = LoopSetup(
        profile=prep.profile,
        client=client,
        tools=build_toolbox(prep),
        session=prep.session,
        recorder=writer,
        cost=cost_function(prep.profile),
        first_turn=prep.first_turn,
        task=prep.task_source,
    )
    try:
        return _consume(run_loop(setup, prep.messages), emit)
    except KeyboardInterrupt:
        error: AgentctlError = InterruptedRunError(f"interrupted{resume_hint(prep.session)}")
    except AgentctlError as err:
        error = with_resume_hint(err, prep.session)
    emit(ErrorEvent(error.kind, str(error)))
    raise error


def with_resume_hint(err: AgentctlError, session: str) -> AgentctlError:
    """The same error, its message ending with how to continue (for resumable stops)."""
    if isinstance(err, ApiError):
        text = f"{err}{resume_hint(session)}"
        return ApiError(text, status=err.status, request_id=err.request_id)
    if isinstance(err, LimitError):
        return LimitError(f"{err}{resume_hint(session)}")
    return err


def _consume(events: Iterator[Event], emit: Callable[[Event], None]) -> ResultEvent:
    result: ResultEvent | None = None
    for event in events:
        emit(event)
        if isinstance(event, ResultEvent):
            result = event
    if result is None:
        raise ApiError("the run ended without a result")
    return result


def resume_hint(session: str) -> str:
    return f"; continue with: agentctl run --resume {session}"
