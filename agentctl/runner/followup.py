"""Follow-ups and forks as plans: `--continue` (a user turn appended to a finished session)
and `--fork SESSION[@TURN]` (a new session from one turn's history), and `plan_call`, which
picks the plan of one `run` call.

A follow-up appends to the session's own transcript (a `follow_up` record, then its message)
and runs on with the recorded profile, so memory, context editing, the cache accounting and
`stats`/`simulate` see one session. A fork is a new session whose history is the original's
up to and including one turn's answer (and that turn's tool results); its header names where
it came from, and the original file is only read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentctl.agent.task import Task
from agentctl.errors import UsageError
from agentctl.profile.loader import Overrides
from agentctl.runner.plan import Plan, ProfileArg, plan_new, plan_saved, task_of
from agentctl.sessions.resume import RESEND_STOPS, recorded_sizes
from agentctl.sessions.transcript import (
    FollowUpRecord,
    MessageRecord,
    RequestRecord,
    ResponseRecord,
    ResumeRecord,
    Transcript,
    apply_message,
    in_use,
    load_session,
    new_session_id,
)

Message = dict[str, Any]


def follow_up_text(text: str, flag: str = "-p") -> str:
    """The follow-up's text, stripped; UsageError when there is none."""
    if not text.strip():
        raise UsageError(f"{flag}: the follow-up is empty (write what to ask next)")
    return text.strip()


def plan_continue(
    ref: str,
    text: str,
    overrides: Overrides | None = None,
    *,
    workspace: Path | None = None,
    offline: bool = False,
    new_client: bool = True,
) -> Plan:
    """A follow-up `text` to the finished session `ref` (id, unique prefix or `last`), in its
    own transcript, with its recorded profile under `overrides`.

    UsageError (exit 2) when a run is using the session, or when its last run did not finish
    (that one is continued with `--resume`).
    """
    session = load_session(ref)
    if in_use(session.path):
        raise UsageError(
            f"session {session.id}: still running (another agentctl run is using it); "
            "wait for it to end, then continue it"
        )
    # "output": it finished with an answer that did not match its output schema; a
    # follow-up may ask again (a resume would have nothing to send).
    if session.outcome not in ("result", "output"):
        raise UsageError(
            f"session {session.id}: its last turn did not finish ({session.status}); "
            f"continue it with: agentctl run --resume {session.id}"
        )
    history = [*session.history, {"role": "user", "content": follow_up_text(text)}]
    plan = plan_saved(session, history, overrides, workspace, offline)
    return dataclasses.replace(plan, follow_up=follow_up_text(text), new_client=new_client)


def parse_fork(spec: str) -> tuple[str, int | None]:
    """`SESSION[@TURN]` as (session ref, turn or None for the last)."""
    ref, at, turn = spec.partition("@")
    if not ref:
        raise UsageError(f"--fork {spec}: name a session (SESSION[@TURN], e.g. last@3)")
    if not at:
        return ref, None
    if not turn.isdigit() or int(turn) < 1:
        raise UsageError(f"--fork {spec}: TURN must be a turn number (1, 2, ...), not {turn!r}")
    return ref, int(turn)


def plan_fork(
    spec: str,
    text: str | None = None,
    overrides: Overrides | None = None,
    *,
    workspace: Path | None = None,
    offline: bool = False,
) -> Plan:
    """A new session from `spec` (`SESSION[@TURN]`, the last turn by default): its history
    up to and including turn TURN's answer and tool results, then `text` as a follow-up.

    Without `text` the fork goes on where the turn left off, which needs a turn that ended
    on tool calls (or a paused turn). UsageError for an unknown session or turn.
    """
    ref, turn = parse_fork(spec)
    session = load_session(ref)
    answered = [t.turn for t in session.turns]
    turn = turn if turn is not None else session.last_turn
    if turn not in answered:
        span = f"{min(answered)}-{max(answered)}" if answered else "none"
        raise UsageError(
            f"--fork {spec}: session {session.id} has no answered turn {turn} (turns: {span})"
        )
    history = forked_history(session, turn)
    stop = next(t.response.get("stop_reason") for t in session.turns if t.turn == turn)
    prompt = follow_up_text(text) if text is not None else None
    history = _with_prompt(history, prompt, spec, paused=stop in RESEND_STOPS)
    sizes = recorded_sizes([t for t in session.turns if t.turn <= turn])
    plan = plan_saved(session, history, overrides, workspace, offline)
    return dataclasses.replace(
        plan,
        session=new_session_id(),
        resumed=False,
        recorded=0,
        transcript=None,
        transcript_size=None,
        first_turn=turn,
        measured={n: v for n, v in sizes.items() if n <= len(history)},
        follow_up=follow_up_text(text) if text is not None else None,
        forked_from=session.id,
        forked_at=turn,
    )


def forked_history(session: Transcript, turn: int) -> list[Message]:
    """The history as it stood after turn `turn`'s answer (and its tool results): what its
    request carried, the answer, and the results of the answer's tool calls."""
    count = 0
    history: list[Message] = []
    answered = False
    for record in session.records:
        if answered and isinstance(record, RequestRecord | ResumeRecord | FollowUpRecord):
            break
        if isinstance(record, MessageRecord):
            apply_message(history, record)
        elif isinstance(record, RequestRecord) and record.turn == turn:
            count = len(history) if record.messages_count is None else record.messages_count
        elif isinstance(record, ResponseRecord) and record.turn == turn:
            answered = True
    after = history[count:]
    kept = history[:count]
    if after and after[0].get("role") == "assistant":
        kept.append(after[0])
        if len(after) > 1 and _tool_results(after[1]):
            kept.append(after[1])
    return kept


def _tool_results(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return (
        message.get("role") == "user"
        and bool(blocks)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
    )


def _tool_uses(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)


def _with_prompt(
    history: list[Message], text: str | None, spec: str, *, paused: bool
) -> list[Message]:
    """The forked history with the follow-up `text` as the user's next words: a message of
    its own after an answer, or beside the tool results that end the history."""
    last = history[-1] if history else {}
    if last.get("role") == "assistant" and _tool_uses(last):
        raise UsageError(
            f"--fork {spec}: the transcript holds no results for that turn's tool calls; "
            "fork at an earlier turn"
        )
    if text is None:
        if last.get("role") == "assistant" and not paused:
            raise UsageError(
                f"--fork {spec}: that turn ended with an answer; say what to ask next with -p TEXT"
            )
        return history
    if last.get("role") == "user":  # tool results: the text goes beside them
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
        return [*history[:-1], {"role": "user", "content": [*blocks, _text(text)]}]
    return [*history, {"role": "user", "content": text}]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def plan_call(
    task: str | Path | Task | None,
    *,
    profile: ProfileArg = None,
    overrides: Overrides | None = None,
    workspace: Path | None = None,
    offline: bool = False,
    trust_task: bool = False,
    continue_session: str | None = None,
    fork: str | None = None,
    new_client: bool = True,
) -> Plan:
    """The plan of one call: a new run of `task`, a follow-up `task` to `continue_session`,
    or a fork of `fork` (`SESSION[@TURN]`) with `task` as its prompt. A string is a task
    file's name or the task's text (`task_of`); a parsed `Task` is taken as it is."""
    if continue_session is not None and fork is not None:
        raise UsageError("continue a session or fork one, not both")
    if (continue_session is not None or fork is not None) and profile is not None:
        raise UsageError(
            "a follow-up or a fork runs with the session's recorded profile; drop the "
            "profile (change keys with overrides / --set)"
        )
    text = None if task is None else task.prompt if isinstance(task, Task) else str(task)
    if continue_session is not None:
        if text is None:
            raise UsageError(f"--continue {continue_session}: give the follow-up (-p TEXT)")
        return plan_continue(
            continue_session,
            text,
            overrides,
            workspace=workspace,
            offline=offline,
            new_client=new_client,
        )
    if fork is not None:
        return plan_fork(fork, text, overrides, workspace=workspace, offline=offline)
    if task is None:
        raise UsageError("missing task: give its text or a task file")
    return plan_new(
        task if isinstance(task, Task) else task_of(task),
        profile,
        overrides,
        workspace=workspace,
        offline=offline,
        trust_task=trust_task,
    )
