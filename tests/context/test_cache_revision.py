"""`cache.Revision`: an edited view that knows which of its messages are the last view's own."""

from __future__ import annotations

import json
import random
from typing import Any

from agentctl.context.cache import Prefix, PromptCache, Revision, shared_messages, snapshot
from agentctl.context.engine import edit_as_server
from agentctl.context.incremental import Editor
from tests.context.test_incremental import SEEDS, conversation, requests

Json = dict[str, Any]
TOOL = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 3000}}


def _message(n: int) -> Json:
    return {"role": "user", "content": f"m{n}"}


def test_a_revision_shares_what_it_says_and_compares_the_rest() -> None:
    first = Revision([_message(n) for n in range(6)], None, 0)
    assert first.same == 0  # no previous: nothing known
    now = Revision([*first[:4], _message(4), _message(9)], first, 4)
    assert now.same == 4
    # past what it knows it compares: an equal message counts, a different one ends it
    assert shared_messages(first, now) == 5
    assert shared_messages(first, Revision(first, first, 99)) == 6  # capped at the lengths
    # what it knows holds against its previous only: another list is compared
    assert shared_messages([_message(7)], Revision(first[:2], Revision(first, None, 0), 2)) == 0


def test_a_revision_is_kept_as_itself_and_cuts_the_link_before_it() -> None:
    a = Revision([_message(0)], None, 0)
    b = Revision(a, a, 1)
    c = Revision(b, b, 1)
    assert snapshot(c) is c and snapshot([*c]) is not c
    assert c.previous is b and b.previous is None  # two views at most, not a chain
    assert shared_messages(a, c) == 1  # an older one is compared, not known


def _check_views(editor: Editor, got: Json, last: list[Any]) -> int:
    """The messages a view says are its previous view's are those very objects; returns
    how many it says so of."""
    view = got["messages"]
    assert isinstance(view, Revision)
    if view.previous is None:
        last[:] = [view]
        return 0
    assert view.previous is last[0]
    assert all(a is b for a, b in zip(view[: view.same], last[0][: view.same], strict=True))
    last[:] = [view]
    return view.same


def test_the_editors_views_share_only_the_messages_they_say() -> None:
    """Generated conversations with clearings, thinking, compaction views, forks, histories
    edited in the middle and other conversations: each view the editor makes names the
    messages it shares with its previous one by identity, and those are the same objects;
    and it knows most of them (the test would pass trivially with `same` always 0)."""
    known = total = 0
    for seed in SEEDS[:40]:
        editor, last = Editor(), list[Any]()
        for body in requests(seed):
            got = editor.edit(json.loads(json.dumps(body)))
            if not isinstance(got.request["messages"], Revision):  # edited from scratch
                last.clear()
                continue
            known += _check_views(editor, got.request, last)
            total += len(got.request["messages"])
    assert total > 5000 and known > total // 4  # 41% here


def test_a_clearing_or_an_edited_history_lowers_what_a_view_knows() -> None:
    """Batched clearings rewrite earlier messages: a view never claims one of those."""
    history = conversation(random.Random(5), 60, unanswered=0)
    editor = Editor()
    body: Json = {"model": "claude-sonnet-5", "context_management": {"edits": [TOOL]}}
    before: list[Any] = []
    rewrote = 0
    for count in range(3, len(history) + 1, 2):
        body["messages"] = history[:count]
        view = editor.edit(body).request["messages"]
        assert isinstance(view, Revision)
        if before:
            assert view.previous is before
            first = next(
                (i for i, (a, b) in enumerate(zip(view, before, strict=False)) if a is not b), None
            )
            if first is not None and first < len(before) - 2:  # an earlier message changed
                rewrote += 1
                assert view.same <= first
        before = view
    assert rewrote > 3
    # a history whose 10th message changed: the next view knows at most the first 10
    edited = [*history]
    edited[10] = {"role": "user", "content": "changed"}
    body["messages"] = edited
    view = editor.edit(body).request["messages"]
    assert isinstance(view, Revision) and view.previous is before and view.same <= 10
    assert editor.edit(body).request == edit_as_server(body).request


def test_the_cache_positions_follow_revisions_as_from_scratch() -> None:
    """`Prefix` keeps a revision rather than a copy; the usage is the whole prompt's."""
    now = [0.0]
    for seed in SEEDS[:10]:
        fresh, kept, prefix, editor = PromptCache(lambda: now[0]), PromptCache(), Prefix(), Editor()
        kept = PromptCache(lambda: now[0])
        for body in requests(seed):
            now[0] += 30.0
            edited = editor.edit(json.loads(json.dumps(body))).request
            assert kept.account(edited, "claude-sonnet-5", prefix) == fresh.account(
                edited, "claude-sonnet-5"
            )
