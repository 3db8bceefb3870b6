"""Tool approvals: the profile's [approval] rules, the decision for one call, and who is asked.

A call is named by its tool (`read_file`, `mcp__git__status`); a memory call also by its
command (`memory:delete`), so `memory` matches every memory command and `memory:delete` one.
Patterns are shell-style globs (fnmatch, case-sensitive). The first kind of rule that matches,
in the order deny, ask, allow, decides; a call no pattern matches gets the rules' `default`.
An "ask" goes to an `Approver` (the terminal prompt of the CLI, or the `approve=` callback of
`agentctl.run`); with none, the call is denied. A denied call is answered with an is_error
tool_result and counted (`ToolCall.denied`, `Totals.tool_denials`).

Server tools (web search, web fetch, code execution) run on the API's side, where no one can
be asked: one that the rules deny or ask for is not offered at all (`offered_server_tools`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentctl.errors import UsageError
from agentctl.profile.settings import ApprovalSettings
from agentctl.types import MEMORY_TOOL

Decision = Literal["allow", "ask", "deny"]
DENIED = "denied by the user's approval rules: "
NOBODY = "nobody can be asked (no terminal, no approve= callback)"


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call that the rules say to ask about: what an `Approver` is shown."""

    name: str  # the tool the model called, as in `ToolCall.name`
    input: Mapping[str, Any]
    # The memory command (`view`, `delete`, ...) of a memory call, else None.
    command: str | None = None
    turn: int = 0
    tool_use_id: str = ""

    @property
    def label(self) -> str:
        """`memory:delete` for a memory call, the tool name otherwise."""
        return f"{self.name}:{self.command}" if self.command else self.name

    @property
    def subjects(self) -> tuple[str, ...]:
        """The names a pattern may match: the tool's, and a memory call's `memory:COMMAND`."""
        return (self.name, self.label) if self.command else (self.name,)


# What an approver answers: True allows the call, False denies it, "always" allows it and
# every later call of the same tool (memory: the same command) for the rest of the session.
Answer = bool | Literal["always"]
# The `approve=` callback of `agentctl.run`, or the CLI's terminal prompt.
Approver = Callable[[ApprovalRequest], Answer]


def require_approver(value: object) -> None:
    """UsageError unless `value` is an `approve=` the Python API takes (None too)."""
    if value is not None and not callable(value):
        raise UsageError(
            "approve: must be a function that takes an agentctl.ApprovalRequest and returns"
            f' True, False or "always", got {type(value).__name__}'
        )


@dataclass(frozen=True)
class Verdict:
    """The rules' decision for one call, and the pattern that made it ("" for the default)."""

    decision: Decision
    pattern: str = ""

    @property
    def rule(self) -> str:
        """`deny pattern "memory:*"`, or `default "ask"`: what a denial's text names."""
        if self.pattern:
            return f'{self.decision} pattern "{self.pattern}"'
        return f'default "{self.decision}"'


def request_for(
    name: str, tool_input: Mapping[str, Any], *, turn: int = 0, tool_use_id: str = ""
) -> ApprovalRequest:
    """The request of one call (a memory call's command read from its input)."""
    command = tool_input.get("command") if name == MEMORY_TOOL else None
    command = command if isinstance(command, str) and command else None
    return ApprovalRequest(name, tool_input, command, turn, tool_use_id)


def decide(rules: ApprovalSettings, subjects: Sequence[str]) -> Verdict:
    """deny, then ask, then allow: the first list with a pattern matching a subject decides."""
    order: tuple[tuple[Decision, tuple[str, ...]], ...] = (
        ("deny", rules.deny),
        ("ask", rules.ask),
        ("allow", rules.allow),
    )
    for decision, patterns in order:
        for pattern in patterns:
            if any(fnmatch.fnmatchcase(subject, pattern) for subject in subjects):
                return Verdict(decision, pattern)
    return Verdict(rules.default)


def has_asks(rules: ApprovalSettings) -> bool:
    """Whether some call may need the user's yes."""
    return bool(rules.ask) or rules.default == "ask"


@dataclass
class Gate:
    """Answers "may this call run?" for one run: the rules, who is asked, and what the user
    allowed for the rest of the session (`a` at the prompt)."""

    rules: ApprovalSettings = field(default_factory=ApprovalSettings)
    approver: Approver | None = None
    # The labels (`read_file`, `memory:create`) answered "always": allowed unasked from now on.
    allowed: set[str] = field(default_factory=set)

    def refusal(self, request: ApprovalRequest) -> str | None:
        """None when the call may run; else the is_error text the model gets."""
        verdict, label = decide(self.rules, request.subjects), request.label
        if verdict.decision == "allow" or (verdict.decision == "ask" and label in self.allowed):
            return None
        if verdict.decision == "deny":
            return f"{DENIED}{label} is refused ({verdict.rule})"
        if self.approver is None:
            return f"{DENIED}{label} needs the user's yes ({verdict.rule}) and {NOBODY}"
        answer = self.approver(request)
        if answer == "always":
            self.allowed.add(label)
        if answer is True or answer == "always":  # anything else refuses: no truthy "no"
            return None
        return f"{DENIED}the user refused this {label} call ({verdict.rule})"


def offered_server_tools(
    rules: ApprovalSettings, tools: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The server tools the rules let run unasked, and a warning for each one left out."""
    offered: list[dict[str, Any]] = []
    warnings: list[str] = []
    for tool in tools:
        name = str(tool.get("name", ""))
        verdict = decide(rules, (name,))
        rule = verdict.rule
        if verdict.decision == "allow":
            offered.append(dict(tool))
        elif verdict.decision == "deny":
            warnings.append(f"approval: server tool {name} is not offered ({rule})")
        else:
            warnings.append(
                f"approval: server tool {name} is not offered: the API runs it, where nobody"
                f" can be asked ({rule})"
            )
    return offered, warnings
