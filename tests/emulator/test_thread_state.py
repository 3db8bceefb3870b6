"""What the emulator keeps of a thread's requests (the held messages as a `Continuation`,
where a thread's first system-role message and signed compaction block are, conversation
keys by identity) changes no answer: a conversation held on the server gets, turn by turn,
the answers the same conversation gets sent whole to another emulator, through clearing,
compaction, system-role messages, a fork back to an earlier reply, a second conversation
in between and the 65th conversation pushing the first out of what is kept."""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest

from agentctl.context.cache import Continuation, Snapshot, shared_messages, snapshot
from agentctl.emulator.conversations import _KEYS, CONVERSATIONS, Held, conversation_key
from agentctl.emulator.model import Script, ScriptTurn, ToolCall
from agentctl.emulator.protocol import BETA_COMPACT, BETA_CONTEXT_MANAGEMENT
from agentctl.emulator.server import Emulator, running
from agentctl.emulator.service import server_view
from agentctl.emulator.threads import BETA_THREADS, ThreadStore

from .helpers import MODEL, make_client

Json = dict[str, Any]
CLOCK = lambda: 0.0  # noqa: E731  (no wall clock: both emulators see the same instant)
HEADERS = {"anthropic-beta": f"{BETA_CONTEXT_MANAGEMENT},{BETA_COMPACT},{BETA_THREADS}"}
TOOLS = [{"name": "read", "description": "Read.", "input_schema": {"type": "object"}}]
EDITS = {
    "edits": [
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 20000},
         "keep": {"type": "tool_uses", "value": 2}},
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}},
    ]
}  # fmt: skip
SCRIPT = Script(
    tuple(ScriptTurn(text=f"step {n}", tool_calls=(ToolCall("read", {"n": n}),)) for n in range(60))
)


class Talk:
    """One conversation as its client holds it: the whole history, and its thread's replies
    (the history's length after each, for a fork)."""

    def __init__(self, task: str) -> None:
        self.history: list[Json] = [{"role": "user", "content": task}]
        self.new: list[Json] = list(self.history)  # what the next thread request sends
        self.replies: list[tuple[str, int]] = []

    def answer(self, reply: Json, turn: int) -> None:
        """Keep the reply and write the next user turn: its tool results and a note that
        stays (so the prompt grows past clearing), the cache marker on its last block."""
        for message in self.history:  # the marker moves on (a thread holds none)
            for block in message["content"] if isinstance(message["content"], list) else []:
                block.pop("cache_control", None)
        self.history.append({"role": "assistant", "content": reply["content"]})
        self.replies.append((reply["id"], len(self.history)))
        results = [
            {"type": "tool_result", "tool_use_id": b["id"], "content": f"r{turn} " * 700}
            for b in reply["content"]
            if b["type"] == "tool_use"
        ]
        note = {
            "type": "text",
            "text": f"note {turn} " * 550,
            "cache_control": {"type": "ephemeral"},
        }
        self.new = [{"role": "user", "content": [*results, note]}]
        if turn % 9 == 4:  # a system-role message, shown with the user turn before it
            self.new.append({"role": "system", "content": f"keep going ({turn})"})
        if turn % 13 == 6:  # one the next user message clears
            self.new.append({"role": "system", "content": "hurry", "clear_at": "next_user_message"})
        self.history.extend(self.new)

    def fork(self, back: int) -> None:
        """Go back to the reply `back` replies before the last and answer it differently."""
        reply_id, length = self.replies[-1 - back]
        del self.history[length:], self.replies[-1 - back :]
        last = self.history.pop()  # `answer` puts it back
        self.answer({"id": reply_id, "content": last["content"]}, 1000 + len(self.replies))


def _bodies(talk: Talk) -> tuple[Json, Json]:
    """The thread's request (only what is new) and the whole history's."""
    whole = {"model": MODEL, "max_tokens": 500, "messages": copy.deepcopy(talk.history),
             "tools": TOOLS, "system": "be brief", "context_management": EDITS}  # fmt: skip
    if not talk.replies:
        return {**whole, "thread": {"type": "create"}}, whole
    follow = {"type": "continue", "previous_message_id": talk.replies[-1][0]}
    thread = {"model": MODEL, "max_tokens": 500, "messages": copy.deepcopy(talk.new),
              "context_management": EDITS, "thread": follow}  # fmt: skip
    return thread, whole


def _post(client: anthropic.Anthropic, body: Json) -> Json:
    reply = client.post("/v1/messages", cast_to=object, body=body, options={"headers": HEADERS})
    assert isinstance(reply, dict)
    return reply


def _turn(clients: tuple[anthropic.Anthropic, anthropic.Anthropic], talk: Talk, n: int) -> Json:
    """One turn of `talk` to both emulators; the replies must be the same but for the id."""
    thread, whole = _bodies(talk)
    held, sent = _post(clients[0], thread), _post(clients[1], whole)
    assert {**held, "id": ""} == {**sent, "id": ""}, f"turn {n}"
    talk.answer(held, n)
    return held


@pytest.mark.slow
def test_a_thread_is_answered_as_its_whole_history_is() -> None:
    """Clearing, compaction, system-role messages, a fork and a second conversation in
    between: every reply is the one the whole history gets."""
    first, second = Talk("read everything"), Talk("read it all, again")
    kinds: set[str] = set()
    with running(script=SCRIPT, clock=CLOCK) as a, running(script=SCRIPT, clock=CLOCK) as b:
        clients = (make_client(a.base_url), make_client(b.base_url))
        for n in range(48):
            reply = _turn(clients, first, n)
            kinds |= {e["type"] for e in reply["context_management"]["applied_edits"]}
            kinds |= {c["type"] for c in reply["content"]}
            if n % 5 == 2:
                _turn(clients, second, n)
            if n == 40:
                first.fork(3)
        _assert_served(a, b)
    assert {"clear_tool_uses_20250919", "compaction"} <= kinds  # what the test is about


@pytest.mark.slow
def test_the_65th_conversation_pushes_the_first_out_and_it_is_answered_the_same() -> None:
    talks = [Talk(f"task {n}") for n in range(CONVERSATIONS + 1)]
    with running(script=SCRIPT, clock=CLOCK) as a, running(script=SCRIPT, clock=CLOCK) as b:
        clients = (make_client(a.base_url), make_client(b.base_url))
        for n in range(3):
            _turn(clients, talks[0], n)
        for talk in talks[1:]:
            _turn(clients, talk, 0)
        assert len(a.service.checked._held) == CONVERSATIONS  # the first is not kept
        for n in range(3, 6):
            _turn(clients, talks[0], n)
        _assert_served(a, b)


def _assert_served(*emulators: Emulator) -> None:
    for emulator in emulators:
        assert emulator.errors == []


# --- the pieces -----------------------------------------------------------------------------


def _held_store(turns: int) -> tuple[ThreadStore, list[Json], list[str]]:
    """A thread store holding a conversation of `turns` replies (a system-role message in
    the third turn), the messages sent and the reply ids."""
    store = ThreadStore()
    sent: list[Json] = [{"role": "user", "content": "go"}]
    body: Json = {"model": MODEL, "messages": list(sent), "thread": {"type": "create"}}
    ids: list[str] = []
    for n in range(turns):
        expanded = store.expand(body, {BETA_THREADS})
        assert isinstance(expanded, dict)
        ids.append(f"msg_{n}")
        store.hold(
            body,
            expanded["messages"],
            {"id": ids[-1], "content": [{"type": "text", "text": f"{n}"}]},
        )
        store.release(expanded["messages"])  # answered, as the service does
        sent.append({"role": "assistant", "content": [{"type": "text", "text": f"{n}"}]})
        new = [{"role": "user", "content": f"more {n}"}]
        if n == 2:
            new.append({"role": "system", "content": "be brief"})
        sent.extend(new)
        follow = {"type": "continue", "previous_message_id": ids[-1]}
        body = {"model": MODEL, "messages": new, "thread": follow}
    return store, sent, ids


def test_a_continue_is_compared_from_where_its_new_messages_start() -> None:
    store, sent, ids = _held_store(6)
    follow = {"type": "continue", "previous_message_id": ids[-1]}
    body = {"model": MODEL, "messages": [{"role": "user", "content": "last"}], "thread": follow}
    one = store.expand(body, {BETA_THREADS})["messages"]  # type: ignore[index]
    two = store.expand(copy.deepcopy(body), {BETA_THREADS})["messages"]  # type: ignore[index]
    assert isinstance(one, Continuation) and one == [*sent[:-1], *body["messages"]]
    assert one == two and one[-1] is not two[-1]  # the new message parsed twice: equal
    assert shared_messages(one, two) == len(one)
    changed = [*two[:-1], {"role": "user", "content": "other"}]
    assert shared_messages(one, changed) == len(one) - 1  # a plain list: looked at whole
    back = {"type": "continue", "previous_message_id": ids[2]}  # a fork, three replies back
    fork = store.expand({**body, "thread": back}, {BETA_THREADS})["messages"]  # type: ignore[index]
    assert shared_messages(one, fork) == shared_messages(list(one), list(fork)) == fork.held
    kept = snapshot(one)  # the held messages by reference, the new ones themselves
    assert isinstance(kept, Snapshot) and kept.base is one.base and kept.new == (one[-1],)
    assert shared_messages(kept, two) == len(one) and shared_messages(kept, fork) == fork.held
    assert shared_messages(kept, changed) == len(one) - 1
    assert snapshot(changed) is not changed


def test_a_continue_reuses_the_last_ones_list_once_it_is_answered() -> None:
    """The working list of a conversation is made to hold the next continue's messages
    (changing what differs) once the request before is answered, never while one uses it;
    what was kept of the last one (a `Snapshot`) still compares as it was."""
    store, sent, ids = _held_store(6)
    follow = {"type": "continue", "previous_message_id": ids[-1]}
    body = {"model": MODEL, "messages": [{"role": "user", "content": "last"}], "thread": follow}
    one = store.expand(body, {BETA_THREADS})["messages"]  # type: ignore[index]
    kept = snapshot(one)
    busy = store.expand(body, {BETA_THREADS})["messages"]  # type: ignore[index]
    assert busy is not one and busy == one  # `one` is in use: a list of its own
    store.release(busy)
    store.release(one)
    back = {"type": "continue", "previous_message_id": ids[2]}  # a fork, three replies back
    other = [{"role": "user", "content": "other"}]
    fork = store.expand({**body, "messages": other, "thread": back}, {BETA_THREADS})["messages"]  # type: ignore[index]
    assert fork is one  # reused: the held messages of reply 3, then the new one
    assert fork == [*sent[: fork.held], *other] and fork.held < kept.held
    assert shared_messages(kept, fork) == fork.held
    store.release(fork)
    again = store.expand(body, {BETA_THREADS})["messages"]  # type: ignore[index]
    assert again is one and again == [*sent[:-1], *body["messages"]]
    assert shared_messages(kept, again) == len(again)


def test_a_threads_system_messages_and_signed_blocks_are_found_past_the_held_ones() -> None:
    store, sent, ids = _held_store(5)
    follow = {"type": "continue", "previous_message_id": ids[-1]}
    signed = {"type": "compaction", "content": "s", "signature": "EmuCmpx"}
    for new in (
        [{"role": "user", "content": "plain"}],
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "system", "content": "y"},
        ],
        [{"role": "assistant", "content": [signed]}, {"role": "user", "content": "z"}],
    ):
        body = {"model": MODEL, "messages": new, "thread": follow}
        held = store.expand(body, {BETA_THREADS})
        assert isinstance(held, dict)
        whole = {**held, "messages": list(held["messages"])}
        assert server_view(held) == server_view(whole)
    assert store.expand(body, {BETA_THREADS})["messages"].without("system") == 7  # type: ignore[index,union-attr]
    assert store.expand(body, {BETA_THREADS})["messages"].without("signed") == len(sent) - 1  # type: ignore[index,union-attr]


def test_conversation_keys_are_kept_by_identity_for_the_latest_openings() -> None:
    heads = [[{"role": "user", "content": f"task {n}"}] for n in range(CONVERSATIONS + 1)]
    keys = [conversation_key({"model": MODEL, "messages": h}) for h in heads]
    assert len(set(keys)) == len(keys)  # different conversations, different keys
    again = conversation_key({"model": MODEL, "messages": copy.deepcopy(heads[-1])})
    assert again == keys[-1]  # by value when the objects are new
    assert (MODEL, id(heads[0][0])) not in _KEYS._keys  # the 65th opening pushed the first out
    assert conversation_key({"model": MODEL, "messages": heads[0]}) == keys[0]


def test_held_keeps_a_copy_of_a_plain_list_and_a_continuation_itself() -> None:
    held: Held[int] = Held()
    messages = [{"role": "user", "content": "a"}]
    held.keep(("k", None), messages, 1)
    messages.append({"role": "user", "content": "b"})  # the caller changes its list after
    assert held.recall(("k", None), messages) == (1, 1)
    base = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    one = Continuation(base, 2, [{"role": "user", "content": "c"}])
    held.keep(("k", None), one, 2)
    two = Continuation(base, 2, [{"role": "user", "content": "d"}])
    assert held.recall(("k", None), two) == (2, 2)
    assert held.recall(("other", None), two) == (0, None)  # another conversation: nothing


def test_continuations_of_one_base_share_their_held_messages_unlooked() -> None:
    """What the held part of two continuations holds is not looked at: one whose held part
    was (against the contract) changed still counts as sharing it; from a different base,
    or as plain lists, the same messages are compared and the change is found."""
    base = [{"role": "user", "content": str(n)} for n in range(50)]
    one = Continuation(base, 40, [{"role": "user", "content": "new"}])
    two = Continuation(base, 45, [{"role": "user", "content": "newer"}])
    two[3] = {"role": "user", "content": "changed"}
    assert shared_messages(one, two) == 40  # the 40 both hold; then "new" against base[40]
    other = Continuation(list(base), 45, [{"role": "user", "content": "newer"}])
    other[3] = {"role": "user", "content": "changed"}
    assert shared_messages(one, other) == shared_messages(list(one), list(other)) == 3
