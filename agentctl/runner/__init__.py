"""The one entry point that runs an agent, for the CLI and Python callers alike.

`plan_new` / `plan_resume` (runner.plan) resolve a task or a saved session, a profile and its
overrides into a `Plan`; `execute` (runner.execute) runs it with a model client (the real API,
the built-in emulator when offline, or any `ModelClient` handed in), records the transcript
(runner.record) and returns a `RunResult`. Nothing here knows command-line flags or prints.
"""

from __future__ import annotations

from agentctl.agent.loop import RunControl
from agentctl.runner.conversation import Session, arun
from agentctl.runner.execute import RunResult, connect, credentials, execute, open_client, run
from agentctl.runner.followup import plan_call, plan_continue, plan_fork
from agentctl.runner.plan import Plan, load_profile, plan_new, plan_resume, resolve, task_of
from agentctl.runner.trace import (
    BatchTrace,
    exporter_problem,
    traced_batch,
    traces_from_env,
    tracing,
    wanted_exporters,
)

__all__ = [
    "BatchTrace",
    "Plan",
    "RunControl",
    "RunResult",
    "Session",
    "arun",
    "connect",
    "credentials",
    "execute",
    "exporter_problem",
    "load_profile",
    "open_client",
    "plan_call",
    "plan_continue",
    "plan_fork",
    "plan_new",
    "plan_resume",
    "resolve",
    "run",
    "task_of",
    "traced_batch",
    "traces_from_env",
    "tracing",
    "wanted_exporters",
]
