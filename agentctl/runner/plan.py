"""Resolve what a run needs (task, profile, overrides, workspace, history) into a `Plan`."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentctl import __version__
from agentctl.agent.structured import load_schema
from agentctl.agent.task import (
    WEB_DIR,
    Task,
    default_web,
    default_workspace,
    parse_task,
    read_task,
)
from agentctl.context.calibration import ResolvedModel, resolve_server_model
from agentctl.context.prices import Pricing
from agentctl.errors import UsageError
from agentctl.profile.loader import (
    Overrides,
    build_overridden,
    profile_to_dict,
    read_profile_file,
    resolve_profile,
)
from agentctl.profile.settings import Profile
from agentctl.sessions.catalog import priced
from agentctl.sessions.resume import recorded_sizes
from agentctl.sessions.transcript import (
    BATCH_PRICE,
    LIST_PRICE,
    SessionHeader,
    Transcript,
    new_session_id,
)
from agentctl.tools.mcp import masked
from agentctl.tools.registry import Tool

ProfileArg = Profile | str | Path | None


@dataclass(frozen=True)
class Plan:
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
    # The offline web behind web_search/web_fetch: `web/` beside the task (None: built-in).
    web: Path | None = None
    # How many leading messages the transcript already holds (the rest get recorded first).
    recorded: int = 0
    transcript: Path | None = None  # the file resumed (None: a new file named by the session)
    transcript_size: int | None = None  # its size when read (a resume refuses if it grew)
    batch_price: bool = False  # its requests go through Message Batches (half price)
    # The server rules the run plays offline and steers batched clearing by, and where they
    # came from (the profile, the probe's calibration, or the default): resolved once.
    server: ResolvedModel = field(default_factory=ResolvedModel)
    # A resumed run's recorded prompt sizes, by messages answered (batched steering).
    measured: dict[int, int] = field(default_factory=dict)
    # The JSON Schema the final answer must match: the profile's output.schema file, read
    # when the run is planned (a bad file stops it with exit 2), or one given in Python.
    output_schema: dict[str, Any] | None = None
    # The caller's Python functions offered as tools (`agentctl.run(tools=...)`).
    functions: tuple[Tool, ...] = ()
    # A follow-up (`--continue`, or a fork given a prompt): its text, the last message; and
    # whether a new client sends it (False: the one that answered the turn before).
    follow_up: str | None = None
    new_client: bool = True
    # A fork: the session and turn its history was taken from (runner.conversation).
    forked_from: str | None = None
    forked_at: int | None = None

    @property
    def priced(self) -> str:
        """How this run's turns are billed, as its transcript records it."""
        return BATCH_PRICE if self.batch_price else LIST_PRICE

    def pricing(self) -> Pricing:
        """How this run's tokens are priced: the profile's prices, halved for a batch (the
        same rule that prices the recorded session: `sessions.catalog.priced`)."""
        return priced(self.profile, self.profile.model, self.priced)

    def profile_record(self) -> dict[str, Any]:
        """The profile as the transcript keeps it: one that names no server model records the
        one this run played (the calibration's), so that a resume or replay plays it again;
        no MCP env/headers values."""
        data = profile_to_dict(self.profile)
        if not self.profile.context_editing.server_model and self.server.source != "default":
            data["context_editing"]["server_model"] = self.server.model.spec()
        return masked(data)

    def header(self) -> SessionHeader:
        """What a new run's transcript records about this plan (its first record), naming the
        plan's folders and this cwd; `plan_saved` reads a plan back from it."""
        mine: dict[str, Any] = {name: getattr(self, attr) for name, attr in HEADER_FIELDS.items()}
        mine = {name: str(v) if isinstance(v, Path) else v for name, v in mine.items()}
        return SessionHeader(
            **mine,
            profile=self.profile_record(),
            profile_source=self.profile.source,
            model=self.profile.model,
            cwd=str(Path.cwd()),
            memory_root=str(self.profile.memory.root),
            agentctl_version=__version__,
            pricing=self.priced,
            # A schema no profile file holds (a dict from Python) is kept for a continuation.
            output_schema=self.output_schema if self.profile.output.schema is None else None,
        )


# The header's fields that are the Plan's own (header field: Plan field; paths as text);
# the rest the header takes from the plan's profile, and `plan_saved` rebuilds it from them.
HEADER_FIELDS = {
    "session": "session",
    "task": "prompt",
    "task_source": "task_source",
    "offline": "offline",
    "workspace": "workspace",
    "emulator_script": "script",
    "forked_from": "forked_from",
    "forked_at": "forked_at",
}


def load_profile(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> Profile:
    """The profile at `path` (None: the normal lookup), with `{dotted key: value}` overrides."""
    return resolve(path, Overrides(values=dict(overrides or {})))[0]


def resolve(profile: ProfileArg, overrides: Overrides) -> tuple[Profile, list[str]]:
    """A Profile from a path, a lookup (None) or a Profile, under `overrides`; with warnings.

    A Profile is the base the overrides are set on, as it is (its relative paths taken from
    the current folder), checked like one read from a file."""
    if not isinstance(profile, Profile):
        return resolve_profile(profile, overrides=overrides)
    return build_overridden({}, overrides, source=profile.source, base_dir=Path.cwd(), base=profile)


def task_of(task: str | Path) -> Task:
    """A task from a file (a Path, `-` for stdin, or a string naming a file) or from its text."""
    if isinstance(task, Path) or task == "-" or Path(task).expanduser().is_file():
        return read_task(str(task), sys.stdin)
    return parse_task(task, "<text>", Path.cwd())


def plan_new(
    task: Task,
    profile: ProfileArg = None,
    overrides: Overrides | None = None,
    *,
    workspace: Path | None = None,
    offline: bool = False,
    trust_task: bool = False,
) -> Plan:
    """A new run of `task`; the task's front matter sits under `overrides`.

    Unless `trust_task`, the front matter may only tune the run: not where the key goes, not
    looser limits or prices, not paths outside the task's folder (agentctl.profile.trust).
    """
    front = task.front_matter(workspace_given=workspace is not None)
    untrusted = None if trust_task else front
    more = dataclasses.replace(overrides or Overrides(), extra=front.data, untrusted=untrusted)
    resolved, warnings = resolve(profile, more)
    server = resolve_server_model(resolved.context_editing.server_model, source=resolved.source)
    chosen = workspace or task.workspace or default_workspace(task)
    return Plan(
        session=new_session_id(),
        profile=resolved,
        server=server,
        prompt=task.prompt,
        task_source=task.source,
        workspace=_workspace(resolved, chosen),
        messages=[{"role": "user", "content": task.prompt}],
        offline=offline,
        warnings=warnings,
        script=task.script,
        web=default_web(task),
        output_schema=output_schema(resolved),
    )


def _saved_web(task_source: str, cwd: Path) -> Path | None:
    """The `web/` beside a resumed session's task file, if it is still there."""
    if not task_source or task_source.startswith("<"):
        return None
    candidate = (cwd / task_source).parent / WEB_DIR
    return candidate if candidate.is_dir() else None


def plan_resume(
    ref: str,
    overrides: Overrides | None = None,
    *,
    workspace: Path | None = None,
    offline: bool = False,
) -> Plan:
    """The continuation of a saved session (id, unique prefix or `last`) with its own profile."""
    from agentctl.sessions.resume import load_run, resumable_history

    saved = load_run(ref)
    return plan_saved(saved, resumable_history(saved), overrides, workspace, offline)


def plan_saved(
    saved: Transcript,
    history: list[dict[str, Any]],
    overrides: Overrides | None,
    workspace: Path | None,
    offline: bool,
) -> Plan:
    """A run that goes on in `saved`'s transcript from `history`, with its recorded profile
    under `overrides` (a resume, or a follow-up: runner.conversation)."""
    head = saved.header
    profile, warnings = build_overridden(
        recorded_profile(head.profile, head.profile_source, Path(head.cwd)),
        overrides or Overrides(),
        source=head.profile_source or "<session>",
        base_dir=Path(head.cwd),
    )
    server = resolve_server_model(profile.context_editing.server_model, source=profile.source)
    mine = {**from_header(head), "session": saved.id, "offline": offline or head.offline}
    mine["workspace"] = _workspace(profile, workspace or mine["workspace"])
    recorded = min(len(saved.history), len(history))
    return Plan(
        **mine,
        profile=profile,
        server=server,
        messages=history,
        warnings=[*saved.warnings, *warnings],
        first_turn=saved.last_turn,
        resumed=True,
        web=_saved_web(head.task_source, Path(head.cwd)),
        recorded=recorded,
        transcript=saved.path,
        transcript_size=saved.size,
        measured={n: v for n, v in recorded_sizes(saved.turns).items() if n <= recorded},
        output_schema=output_schema(profile) or head.output_schema,
    )


def from_header(head: SessionHeader) -> dict[str, Any]:
    """The Plan's own fields as a transcript's header recorded them (`Plan.header`)."""
    paths = ("workspace", "script")
    values = {attr: getattr(head, name) for name, attr in HEADER_FIELDS.items()}
    return {k: Path(v) if k in paths and v else v for k, v in values.items()}


def output_schema(profile: Profile) -> dict[str, Any] | None:
    """The schema in the profile's `output.schema` file (ConfigError naming it), or None."""
    path = profile.output.schema
    return None if path is None else load_schema(path)


def recorded_profile(data: Mapping[str, Any], source: str | None, cwd: Path) -> dict[str, Any]:
    """A session's recorded profile, with the MCP env/headers values that transcripts do not
    keep read again from its profile file."""
    from agentctl.tools.mcp import MASK, unmask

    if MASK not in json.dumps(data):
        return dict(data)
    path = cwd / (source or "")
    current = read_profile_file(path) if source and path.is_file() else {}
    return unmask(dict(data), current, source or "the session's profile")


def _workspace(profile: Profile, chosen: Path | None) -> Path | None:
    if not profile.tools.workspace:
        return None
    root = (chosen or profile.tools.workspace_root).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"workspace {root}: no such directory")
    return root
