"""Server-held conversation state (beta `message-threads-2026-08-12`), as the SDK's runner uses.

`thread: {"type": "create"}` asks the server to hold the conversation under the response's
id; `thread: {"type": "continue", "previous_message_id": ID}` sends only the new turn's
messages, and the server prepends what it holds. The response shape is unchanged. Context
editing and the cache then work on the whole conversation, as without threads.

From the SDK (anthropic/lib/threads/_thread_state.py): `system` and `tools` are the thread's,
fixed by its `create`; a `continue` leaves them out and the server uses the thread's (the
SDK's CREATE_ONLY_FIELDS; a continue that sends one is refused here, text ours). An unknown
id is refused with `error.details.error_code` "thread_not_found", on which the SDK replays
the whole history under a new thread.
Ours (not public): a held message keeps no `cache_control` (a marker applies to the request
that sent it, as the SDK strips the markers of answered messages when it replays a history),
so a thread's breakpoints are its create's tools/system ones plus the new messages' own; a
reply continued twice forks (the second continuation copies the conversation up to it).
Memory: a conversation is one list shared by the replies along it, so holding a long thread
costs its messages once, not once per reply.
CPU: a continue's messages are a `HeldMessages` (a `context.cache.Continuation` of the held
list), so what the emulator kept of the thread's last request is compared with it from where
the new messages start, not message by message from the first. That list is the
conversation's working one: once the request before is answered (`release`), the next continue
changes only what differs in it (what was kept of the last one is a `cache.Snapshot`, never the
list), so a continue neither copies nor frees the held conversation; the conversation also knows
where its first system-role message and its first signed compaction block are, so the request
views that look for them (emulator/service.py) look only at what is new.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentctl.context.cache import Continuation
from agentctl.emulator.protocol import ApiFailure, invalid

Json = dict[str, Any]
BETA_THREADS = "message-threads-2026-08-12"
HELD_LIMIT = 1000  # replies a thread can continue from, at once; the oldest is forgotten first
CREATE_ONLY = ("system", "tools")  # the thread's, from its create (the SDK's CREATE_ONLY_FIELDS)


@dataclass
class _Conversation:
    """One thread's messages as held (append-only) and its create-only fields, with the
    index of the first message of each kind in `KINDS` (absent: none yet)."""

    fields: Json
    messages: list[Json] = field(default_factory=list)
    firsts: dict[str, int] = field(default_factory=dict)
    # the messages of its last continue, to reuse for the next while no request is using them
    working: HeldMessages | None = None
    busy: bool = False

    def append(self, message: Json) -> None:
        for kind, found in KINDS.items():
            if kind not in self.firsts and found(message):
                self.firsts[kind] = len(self.messages)
        self.messages.append(message)

    def upto(self, length: int) -> _Conversation:
        """A copy of the conversation's first `length` messages (a fork)."""
        firsts = {kind: at for kind, at in self.firsts.items() if at < length}
        return _Conversation(self.fields, self.messages[:length], firsts)


def is_system(message: Json) -> bool:
    """A `{"role": "system"}` message (SDK 2.15 `BetaSystemMessageParam`)."""
    return message.get("role") == "system"


def is_signed(message: Json) -> bool:
    """A message holding a signed (on-demand) compaction block."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "compaction" and b.get("signature")
        for b in content
    )


KINDS = {"system": is_system, "signed": is_signed}


class HeldMessages(Continuation):
    """A continue's messages: the thread's held ones, then the request's new ones."""

    def __init__(self, conversation: _Conversation, held: int, new: list[Json]) -> None:
        super().__init__(conversation.messages, held, new)
        self.conversation = conversation
        self._firsts = dict(conversation.firsts)

    def reset(self, held: int, new: Sequence[Any]) -> None:
        super().reset(held, new)
        self._firsts = dict(self.conversation.firsts)

    def without(self, kind: str) -> int:
        """How many leading messages are known to hold none of `kind` (a key of KINDS)."""
        return min(self.held, self._firsts.get(kind, self.held))


def unseen(messages: list[Json], kind: str) -> list[Json]:
    """The messages that may hold one of `kind`: those after the held ones known to hold
    none (all of them when `messages` is not a thread's)."""
    start = messages.without(kind) if isinstance(messages, HeldMessages) else 0
    return messages[start:] if start else messages


@dataclass(frozen=True)
class _Held:
    """A reply to continue from: its conversation and how many of its messages end there."""

    conversation: _Conversation
    length: int


class ThreadStore:
    """Conversations held by response id; thread-safe."""

    def __init__(self, limit: int = HELD_LIMIT) -> None:
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def expand(self, body: object, betas: set[str]) -> object:
        """The body with the held history prepended and `thread` removed (others unchanged)."""
        if not isinstance(body, dict) or "thread" not in body:
            return body
        if BETA_THREADS not in betas:
            raise invalid("thread: Extra inputs are not permitted")
        rest = {k: v for k, v in body.items() if k != "thread"}
        thread = body["thread"]
        kind = thread.get("type") if isinstance(thread, dict) else None
        if kind == "create":
            return rest
        if kind != "continue":
            raise invalid(
                f"thread: Input tag '{kind}' found using 'type' does not match any of the "
                "expected tags: 'continue', 'create'"
            )
        for name in CREATE_ONLY:
            if name in rest:  # text ours
                raise invalid(f"{name}: a thread keeps the {name} of its create; leave it out")
        held = self._find(thread.get("previous_message_id"))
        new = rest.get("messages")
        with self._lock:  # its firsts and messages as of `held.length`
            messages = self._messages(held, new if isinstance(new, list) else [])
        return {**rest, **held.conversation.fields, "messages": messages}

    @staticmethod
    def _messages(held: _Held, new: list[Json]) -> HeldMessages:
        """The continue's messages: the conversation's working list made to hold them (what
        its last continue left in it is kept only as snapshots), or a new one while another
        request uses that (lock held)."""
        conversation = held.conversation
        working = conversation.working
        if working is None or conversation.busy:
            messages = HeldMessages(conversation, held.length, new)
            if working is None:
                conversation.working, conversation.busy = messages, True
            return messages
        working.reset(held.length, new)
        conversation.busy = True
        return working

    def release(self, messages: object) -> None:
        """The request that was given `messages` (by `expand`) is answered: its conversation
        may reuse them."""
        if isinstance(messages, HeldMessages):
            with self._lock:
                if messages.conversation.working is messages:
                    messages.conversation.busy = False

    def hold(self, body: object, messages: list[Json], message: Json) -> None:
        """Keep the conversation (request messages + this reply) under the reply's id."""
        if not isinstance(body, dict) or not isinstance(body.get("thread"), dict):
            return
        thread = body["thread"]
        turn = {"role": "assistant", "content": message["content"]}
        with self._lock:
            base = self._held.get(str(thread.get("previous_message_id")))
            if thread.get("type") == "continue" and base is not None:
                conversation = self._extend(base, messages)
            else:
                conversation = _Conversation({k: body[k] for k in CREATE_ONLY if k in body})
                for sent in messages:
                    conversation.append(_unmarked(sent))
            conversation.append(turn)
            self._held[message["id"]] = _Held(conversation, len(conversation.messages))
            while len(self._held) > self._limit:
                self._held.popitem(last=False)

    def forget(self) -> None:
        """Forget every thread (as a server that lost what it held)."""
        with self._lock:
            self._held.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    @staticmethod
    def _extend(base: _Held, messages: list[Json]) -> _Conversation:
        """`base`'s conversation with the request's new messages (a copy when `base` is not
        its last reply: a fork)."""
        conversation = base.conversation
        if base.length != len(conversation.messages):
            conversation = conversation.upto(base.length)
        for sent in messages[base.length :]:
            conversation.append(_unmarked(sent))
        return conversation

    def _find(self, message_id: object) -> _Held:
        with self._lock:
            held = self._held.get(str(message_id))
        if held is None:
            # Text ours: the API's wording for an unknown or expired Thread is not public.
            raise ApiFailure(
                404,
                f"thread.previous_message_id: no thread holds {message_id}",
                details={"error_code": "thread_not_found"},
            )
        return held


def _unmarked(message: Json) -> Json:
    """The message as held: without the `cache_control` of its blocks."""
    content = message.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, dict) and "cache_control" in b for b in content
    ):
        return message
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
        for b in content
    ]
    return {**message, "content": blocks}
