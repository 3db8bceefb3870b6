"""The [approval] rules: precedence, memory commands, the session's "always", server tools,
the prompt's safe text, and what a task's front matter may (not) change."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.errors import ConfigError
from agentctl.profile.loader import build_profile
from agentctl.profile.settings import ApprovalSettings
from agentctl.profile.trust import FrontMatter, check_front_matter
from agentctl.render.prompt import TerminalApprover, call_text, question
from agentctl.tools.approval import (
    DENIED,
    Answer,
    ApprovalRequest,
    Gate,
    decide,
    offered_server_tools,
    request_for,
)

RULES = ApprovalSettings(
    allow=("read_file", "mcp__git__*", "memory"),
    ask=("mcp__git__commit", "memory:delete"),
    deny=("mcp__git__push*", "list_*"),
    default="deny",
)


@pytest.mark.parametrize(
    ("name", "tool_input", "decision"),
    [
        ("read_file", {}, "allow"),
        ("mcp__git__status", {}, "allow"),
        ("mcp__git__commit", {}, "ask"),  # ask wins over allow
        ("mcp__git__push_tags", {}, "deny"),  # deny wins over allow
        ("list_files", {}, "deny"),
        ("memory", {"command": "view", "path": "/memories"}, "allow"),
        ("memory", {"command": "delete", "path": "/memories/a"}, "ask"),
        ("search_files", {}, "deny"),  # no pattern: the default
        ("Read_File", {}, "deny"),  # case matters
    ],
)
def test_deny_wins_over_ask_over_allow_over_default(
    name: str, tool_input: dict[str, Any], decision: str
) -> None:
    assert decide(RULES, request_for(name, tool_input).subjects).decision == decision


def test_memory_alone_matches_every_command_and_deny_of_it_beats_allow_of_one() -> None:
    rules = ApprovalSettings(allow=("memory:view",), deny=("memory",))
    assert decide(rules, request_for("memory", {"command": "view"}).subjects).decision == "deny"
    verdict = decide(ApprovalSettings(deny=("memory:*",)), ("memory", "memory:rename"))
    assert (verdict.decision, verdict.pattern) == ("deny", "memory:*")
    assert request_for("memory", {"command": 3}).label == "memory"  # no command: the tool


class Answers:
    """An approver that gives the next of its answers and keeps what it was asked."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def __call__(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request.label)
        return self.answers.pop(0)


def test_gate_asks_and_always_allows_that_tool_for_the_session_only() -> None:
    answers = Answers(False, "always", True)
    gate = Gate(ApprovalSettings(ask=("memory:delete", "read_file")), answers)
    delete = request_for("memory", {"command": "delete", "path": "/memories/x"})
    refused = gate.refusal(delete)
    assert (
        refused == f'{DENIED}the user refused this memory:delete call (ask pattern "memory:delete")'
    )
    assert gate.refusal(delete) is None  # "always"
    assert gate.refusal(delete) is None  # not asked again
    assert gate.refusal(request_for("read_file", {"path": "a"})) is None
    assert answers.asked == ["memory:delete", "memory:delete", "read_file"]


def test_without_an_approver_ask_is_a_denial_naming_the_rule() -> None:
    gate = Gate(ApprovalSettings(default="ask", deny=("rm*",)))
    text = gate.refusal(request_for("read_file", {}))
    assert text is not None and text.startswith(DENIED)
    assert 'read_file needs the user\'s yes (default "ask")' in text and "no terminal" in text
    assert (
        gate.refusal(request_for("rmdir", {})) == f'{DENIED}rmdir is refused (deny pattern "rm*")'
    )
    assert Gate().refusal(request_for("anything", {})) is None  # the built-in rules allow all


def test_server_tools_that_would_need_asking_or_are_denied_are_not_offered() -> None:
    tools = [{"type": "web_search_20250305", "name": "web_search"}, {"name": "web_fetch"}]
    offered, warnings = offered_server_tools(
        ApprovalSettings(ask=("web_search",), deny=("web_fetch",)), tools
    )
    assert offered == []
    assert warnings == [
        "approval: server tool web_search is not offered: the API runs it, where nobody can be"
        ' asked (ask pattern "web_search")',
        'approval: server tool web_fetch is not offered (deny pattern "web_fetch")',
    ]
    assert offered_server_tools(ApprovalSettings(), tools) == (tools, [])


def test_the_prompt_shows_hostile_input_inert_and_cut() -> None:
    request = request_for("read_\x1bfile", {"path": "\x1b]0;owned\x07\u202e\x9b" + "x" * 2000})
    request = ApprovalRequest(request.name, request.input, turn=4)
    shown = question(request)
    assert not any(c in shown for c in "\x1b\x07\u202e\x9b")
    assert "\\u001b]0;owned\\u0007\\u202e\\x9b" in shown and "read_\\x1bfile" in shown
    assert "(turn 4)" in shown and "more characters)" in shown
    assert len(call_text(request)) < 700


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("y\n", True),
        ("n\n", False),
        ("a\n", "always"),
        ("\n", False),
        ("", False),
        ("maybe\nYES\n", True),
    ],
)
def test_terminal_approver_reads_y_n_a(typed: str, answer: Answer) -> None:
    out = io.StringIO()
    paused: list[str] = []

    class Pause:
        def __enter__(self) -> None:
            paused.append("in")

        def __exit__(self, *exc: object) -> None:
            paused.append("out")

    approver = TerminalApprover(io.StringIO(typed), out, Pause)
    assert approver(request_for("mcp__git__commit", {"message": "m"})) == answer
    assert paused == ["in", "out"]
    assert "mcp__git__commit" in out.getvalue() and '{"message": "m"}' in out.getvalue()
    assert ("answer y, n or a" in out.getvalue()) == typed.startswith("maybe")


# --- the front matter may only tighten ------------------------------------------------------


def check(front: dict[str, Any], base: dict[str, Any] | None = None) -> None:
    approval = {"allow": [], "ask": [], "deny": [], "default": "allow", **(base or {})}
    matter = FrontMatter({"approval": front}, "task.md", Path("/tmp"))
    check_front_matter(matter, {"approval": approval})


@pytest.mark.parametrize(
    "front",
    [
        {"deny": ["mcp__*"]},
        {"ask": ["read_file", "memory:delete"]},
        {"default": "ask", "ask": ["x"]},
        {"default": "deny"},
        {"allow": []},
    ],
)
def test_front_matter_may_tighten(front: dict[str, Any]) -> None:
    check(front, {"allow": ["read_file"]})


@pytest.mark.parametrize(
    ("front", "base", "key", "words"),
    [
        ({"allow": ["memory"]}, {}, "approval.allow", "may not add allow patterns ('memory')"),
        ({"deny": []}, {"deny": ["rm"]}, "approval.deny", "drop the profile's deny patterns"),
        ({"ask": ["b"]}, {"ask": ["a"]}, "approval.ask", "drop the profile's ask patterns ('a')"),
        ({"default": "allow"}, {"default": "ask"}, "approval.default", "looser"),
        ({"ask": ["x"]}, {"default": "deny"}, "approval.ask", "add them to approval.deny"),
    ],
)
def test_front_matter_may_not_loosen_and_the_error_names_the_key(
    front: dict[str, Any], base: dict[str, Any], key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as err:
        check(front, base)
    message = str(err.value)
    assert message.startswith(f"task task.md: front matter: {key}: ")
    assert words in message and message.endswith("(pass --trust-task to allow it)")


def test_profile_validates_the_approval_table(tmp_path: Path) -> None:
    data = {"approval": {"deny": ["memory:delete"], "default": "ask"}}
    profile, _ = build_profile(data, source="p.toml", base_dir=tmp_path)
    assert profile.approval == ApprovalSettings(deny=("memory:delete",), default="ask")
    with pytest.raises(ConfigError, match=r"p\.toml.*approval\.default"):
        build_profile({"approval": {"default": "maybe"}}, source="p.toml", base_dir=tmp_path)


@pytest.mark.parametrize(
    ("rules", "words"),
    [
        ({"deny": ["memory:remove"]}, "approval.deny[0]: 'memory:remove': memory has no command"),
        ({"ask": ["read_file", " "]}, "approval.ask[1]: an empty pattern matches no tool"),
    ],
)
def test_patterns_that_match_nothing_are_refused(
    tmp_path: Path, rules: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"profile p.toml: {words}")):
        build_profile({"approval": rules}, source="p.toml", base_dir=tmp_path)
    build_profile(
        {"approval": {"deny": ["memory:*", "memory:delete"]}}, source="p.toml", base_dir=tmp_path
    )


PATTERNS = ("a", "a*", "b", "*", "memory", "memory:view", "memory:*")
CALLS = (("a",), ("ab",), ("b",), ("c",), ("memory", "memory:view"), ("memory", "memory:delete"))
RANK = {"allow": 0, "ask": 1, "deny": 2}
pattern_lists = st.lists(st.sampled_from(PATTERNS), max_size=3, unique=True)
defaults = st.sampled_from(("allow", "ask", "deny"))


@pytest.mark.slow  # 300 examples: about 2 s
@settings(max_examples=300)
@given(
    base=st.fixed_dictionaries(
        {"allow": pattern_lists, "ask": pattern_lists, "deny": pattern_lists, "default": defaults}
    ),
    data=st.data(),
)
def test_front_matter_the_check_lets_through_never_loosens_any_call(
    base: dict[str, Any], data: st.DataObject
) -> None:
    front: dict[str, Any] = {}
    for name in ("allow", "ask", "deny"):  # left out, grown or shrunk from the base, or anew
        kind = data.draw(st.sampled_from(("out", "grown", "shrunk", "new")))
        if kind == "grown":
            front[name] = list(dict.fromkeys([*base[name], *data.draw(pattern_lists)]))
        elif kind == "shrunk":
            front[name] = [p for p in base[name] if data.draw(st.booleans())]
        elif kind == "new":
            front[name] = data.draw(pattern_lists)
    if data.draw(st.booleans()):
        front["default"] = data.draw(defaults)
    try:
        check(front, base)
    except ConfigError:
        return
    before = ApprovalSettings(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in base.items()}
    )
    merged = {**base, **front}
    after = ApprovalSettings(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in merged.items()}
    )
    for subjects in CALLS:
        was, now = decide(before, subjects).decision, decide(after, subjects).decision
        assert RANK[now] >= RANK[was], (subjects, was, now)
