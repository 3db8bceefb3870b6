"""`agentctl run`'s conversation flags: -p/--prompt, --continue, --fork, --input-format ndjson.

Parses them into a plan (runner.followup) or, for NDJSON stdin, into a `Session` that answers
each line in turn; the rendering is `agentctl run`'s own (`execute_plan`). Thin.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentctl.errors import AgentctlError, UsageError
from agentctl.profile.loader import Overrides

if TYPE_CHECKING:
    from agentctl.runner import Plan, RunResult
    from agentctl.tools.approval import Approver
    from agentctl.types import Event

    Runner = Callable[[Plan, Callable[[Event], None], Approver | None], RunResult]
    ExecutePlan = Callable[..., None]

# Lazy imports: the runner (and through it the SDK's client module) loads when a run starts,
# not for `run --help`.

INPUT_FORMATS = ("text", "ndjson")


def check_flags(
    task: str | None,
    prompt: str | None,
    resume: str | None,
    follow: str | None,
    fork: str | None,
    input_format: str,
) -> None:
    """UsageError for flags that do not go together."""
    if input_format not in INPUT_FORMATS:
        raise UsageError(f"--input-format {input_format}: choose text or ndjson")
    if resume is not None and input_format == "ndjson":
        raise UsageError(
            "--resume finishes a run that stopped; to go on with NDJSON user turns, finish "
            "it first, then --continue SESSION --input-format ndjson"
        )
    if resume is not None and (prompt is not None or follow is not None or fork is not None):
        raise UsageError(
            "--resume finishes a run that stopped; a follow-up to a finished one is "
            "--continue SESSION -p TEXT, a new branch is --fork SESSION@TURN"
        )
    if follow is not None and fork is not None:
        raise UsageError("--continue and --fork: give one (continue a session, or fork it)")
    if prompt is not None and task is not None:
        raise UsageError(f"give the task as TASK ({task}) or as -p TEXT, not both")
    if input_format == "ndjson" and (task != "-" or prompt is not None):
        raise UsageError("--input-format ndjson reads the user turns from stdin: give - as TASK")


CONTINUE_FLAGS = ("-c", "--continue")


def latest_by_default(args: list[str]) -> list[str]:
    """`-c`/`--continue` with no SESSION after it (the end, another option, or `-` next) gets
    `last`, so `run -c -p TEXT` asks the latest session."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return [*out, *args[index:]]
        out.append(arg)
        following = args[index + 1] if index + 1 < len(args) else None
        if arg in CONTINUE_FLAGS and (following is None or _is_option(following)):
            out.append("last")
    return out


def _is_option(arg: str) -> bool:
    """An option, or `-` (stdin: never a session id)."""
    return arg.startswith("-")


@dataclass(frozen=True)
class Talk:
    """The flags a conversation is planned by: --continue, --fork, and the run's own."""

    follow: str | None
    fork: str | None
    workspace: Path | None
    offline: bool
    trust_task: bool


def plan_flags(
    task: str | None, prompt: str | None, profile: str | None, overrides: Overrides, talk: Talk
) -> Plan:
    """The plan of a run given as -p TEXT, or a --continue / --fork (the follow-up from -p,
    or from stdin with TASK -)."""
    from agentctl.agent.task import parse_task, read_stdin
    from agentctl.runner import plan_call

    follow, fork = talk.follow, talk.fork
    if (follow is not None or fork is not None) and task not in (None, "-"):
        raise UsageError(
            f"--continue/--fork take the follow-up as -p TEXT (or - for stdin), not TASK {task}"
        )
    if (follow is not None or fork is not None) and profile is not None:
        raise UsageError(
            "--continue/--fork run with the session's recorded profile; drop --profile "
            "(change keys with --set)"
        )
    text = read_stdin(sys.stdin) if task == "-" else prompt
    parsed = None
    if text is not None and follow is None and fork is None:
        parsed = parse_task(text, "<prompt>" if task is None else "<stdin>", Path.cwd())
    return plan_call(
        parsed or text,
        profile=profile,
        overrides=overrides,
        workspace=talk.workspace,
        offline=talk.offline,
        trust_task=talk.trust_task,
        continue_session=follow,
        fork=fork,
    )


def user_turns(lines: Iterable[str], source: str = "stdin") -> Iterator[str]:
    """The text of each NDJSON line (`{"text": "..."}`), read as it arrives; blank lines are
    skipped. UsageError naming the line for anything else."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            raise UsageError(
                f'{source} line {number}: not JSON (one {{"text": ...}} a line)'
            ) from None
        text = data.get("text") if isinstance(data, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise UsageError(
                f'{source} line {number}: needs a non-empty "text" string ({{"text": "..."}})'
            )
        yield text


def converse(
    stdin: TextIO,
    profile: str | None,
    overrides: Overrides,
    talk: Talk,
    *,
    execute_plan: ExecutePlan,
    on_error: Callable[[AgentctlError], None],
) -> None:
    """Answer each NDJSON line of `stdin` in turn, in one session (the first line starts it,
    or continues/forks the session named); `execute_plan(plan, runner=...)` runs and renders
    each (and reports its errors); `on_error` reports a bad line or a turn that cannot start."""
    from agentctl.runner import Session

    session = Session(
        profile,
        offline=talk.offline,
        workspace=talk.workspace,
        overrides=overrides,
        trust_task=talk.trust_task,
        continue_session=talk.follow,
        fork=talk.fork,
    )
    turns = user_turns(stdin)
    with session:
        for number in itertools.count():
            try:
                text = next(turns, None)
                if text is None and number == 0:  # as `run -` refuses an empty stdin
                    raise UsageError('stdin: no user turn (one {"text": ...} a line)')
                if text is None:
                    return
                plan = session.prepare(text, "<stdin>")
            except AgentctlError as err:
                on_error(err)
                raise
            execute_plan(plan, runner=session.execute)
