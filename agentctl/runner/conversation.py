"""`Session`, a conversation held from Python (`send`, `fork`, `totals`), and `arun`, the
async entry; the plans behind them are runner.followup's."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from agentctl.agent.model import ModelClient
from agentctl.agent.structured import require_schema_argument
from agentctl.agent.task import Task, parse_task
from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.loader import Overrides
from agentctl.runner.execute import RunResult, execute, open_client, run, with_programs
from agentctl.runner.followup import plan_call
from agentctl.runner.plan import Plan, ProfileArg
from agentctl.sessions.transcript import session_path
from agentctl.tools.approval import Approver, require_approver
from agentctl.types import Event, Totals, TurnEvent


class Session:
    """A conversation held from Python: each `send(text)` is a user turn of one recorded
    session, answered in turn. The first send starts the session (or continues
    `continue_session`, or forks `fork`); the rest are follow-ups in the same transcript.

        with agentctl.Session(offline=True) as chat:
            chat.send("Summarise the notes.")
            chat.send("Which note mentions the cache?")
            print(chat.totals.cost_usd)

    Offline, one emulator answers every turn (its prompt cache lives on between them);
    `close()` (or leaving the `with` block) stops it.
    """

    def __init__(
        self,
        profile: ProfileArg = None,
        *,
        offline: bool = False,
        client: ModelClient | None = None,
        workspace: str | Path | None = None,
        memory_root: str | Path | None = None,
        overrides: Mapping[str, Any] | Overrides | None = None,
        on_event: Callable[[Event], None] | None = None,
        trust_task: bool = False,
        continue_session: str | None = None,
        fork: str | None = None,
        output_schema: Mapping[str, Any] | str | Path | None = None,
        tools: Sequence[Callable[..., Any]] = (),
        approve: Approver | None = None,
    ) -> None:
        require_schema_argument(output_schema)
        require_approver(approve)
        given = overrides if isinstance(overrides, Overrides) else Overrides(values=overrides or {})
        values = dict(given.values)
        if memory_root is not None:
            values["memory.root"] = str(memory_root)
        if isinstance(output_schema, str | Path):  # a file: the profile key, as in `run`
            values["output.schema"] = str(Path(output_schema).expanduser().resolve())
        # A schema given as a dict, and the functions, go with every send (`run`'s rules).
        self._schema = output_schema if isinstance(output_schema, Mapping) else None
        self._tools = tools
        self._overrides = dataclasses.replace(given, values=values)
        self._profile, self._offline, self._client = profile, offline, client
        self._workspace = Path(workspace) if workspace is not None else None
        self._on_event, self._trust = on_event, trust_task
        self._continue, self._fork = continue_session, fork
        self._approve = approve
        self._stack = ExitStack()
        self.results: list[RunResult] = []
        self._id: str | None = None

    @property
    def id(self) -> str | None:
        """The session id (None until a send was answered: one that failed before the
        model answered leaves no session)."""
        return self._id

    @property
    def totals(self) -> Totals:
        """The sum over every user turn this object sent."""
        return sum((r.totals for r in self.results), Totals())

    @property
    def turns(self) -> tuple[TurnEvent, ...]:
        return tuple(t for r in self.results for t in r.turns)

    @property
    def text(self) -> str:
        """The latest answer ("" before the first send)."""
        return self.results[-1].text if self.results else ""

    def send(self, text: str) -> RunResult:
        """Ask `text` (the task, then each follow-up); the result of that user turn."""
        return self.execute(self.prepare(text))

    def prepare(self, text: str, source: str = "<text>") -> Plan:
        """The plan of sending `text` next (nothing is sent): `send` is `execute(prepare())`.
        `source`: what the session header names as the task's origin."""
        plan = self._plan(parse_task(text, source, Path.cwd()))
        return with_programs(plan, self._schema, self._tools)

    def execute(
        self,
        plan: Plan,
        on_event: Callable[[Event], None] | None = None,
        approve: Approver | None = None,
    ) -> RunResult:
        """Run a plan from `prepare`, its events to `on_event` (default: the session's), the
        calls the [approval] rules ask about to `approve` (default: the session's)."""
        client = self._client or self._stack.enter_context(open_client(plan))
        self._client = client
        try:
            result = execute(
                plan,
                client=client,
                on_event=on_event or self._on_event,
                approve=approve or self._approve,
            )
        except AgentctlError:
            # Stopped after an answer (a limit, Ctrl-C): the session is recorded, and the
            # next send is refused until it is finished (`agentctl run --resume`).
            if session_path(plan.session).exists():
                self._id = plan.session
            raise
        self._id = result.session_id
        self.results.append(result)
        return result

    async def asend(self, text: str) -> RunResult:
        """`send` for callers inside an event loop (runs in a worker thread)."""
        return await asyncio.to_thread(self.send, text)

    def fork(self, turn: int | None = None) -> Session:
        """A new conversation whose first `send` forks this session at `turn` (default: its
        last turn); this one is left as it is."""
        if self.id is None:
            raise UsageError("fork(): nothing to fork yet (send something first)")
        spec = self.id if turn is None else f"{self.id}@{turn}"
        return Session(
            offline=self._offline,
            workspace=self._workspace,
            overrides=self._overrides,
            on_event=self._on_event,
            fork=spec,
            output_schema=self._schema,
            tools=self._tools,
            approve=self._approve,
        )

    def _plan(self, text: Task) -> Plan:
        common: dict[str, Any] = {
            "overrides": self._overrides,
            "workspace": self._workspace,
            "offline": self._offline,
        }
        if self.id is not None:  # a follow-up, from the client that answered the last turn
            return plan_call(text, continue_session=self.id, new_client=False, **common)
        profile = None if (self._continue or self._fork) else self._profile
        return plan_call(
            text,
            profile=profile,
            trust_task=self._trust,
            continue_session=self._continue,
            fork=self._fork,
            **common,
        )

    def close(self) -> None:
        """Stop the emulator this conversation started (offline), if any."""
        self._stack.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


async def arun(task: str | Path | None = None, **kwargs: Any) -> RunResult:
    """`agentctl.run` for callers inside an event loop: the run goes on in a worker thread
    while the loop serves other tasks; same arguments, same result and exceptions."""
    return await asyncio.to_thread(run, task, **kwargs)
