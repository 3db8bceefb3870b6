"""The Messages API behind the HTTP layer: validate, edit the context, account the cache, reply."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from agentctl.context.compaction import compact_edit, compacted, summarized
from agentctl.context.prices import context_window
from agentctl.emulator.context_engine import ContextEngine, Edited
from agentctl.emulator.conversations import Held
from agentctl.emulator.corpus import Corpus, builtin_corpus
from agentctl.emulator.model import (
    Block,
    Model,
    Reply,
    TextOut,
    ThinkingOut,
    ToolCall,
    assistant_turns,
)
from agentctl.emulator.protocol import (
    BETA_COMPACT,
    BETA_CONTEXT_MANAGEMENT,
    PAUSE_AFTER,
    header_betas,
    invalid,
    new_message_id,
    stable_id,
)
from agentctl.emulator.server_tools import ServerToolRunner, offered_server_tools
from agentctl.emulator.threads import ThreadStore, is_signed, unseen
from agentctl.emulator.validation import (
    Checked,
    sign_summary,
    validate_count_request,
    validate_request,
)

if TYPE_CHECKING:
    from agentctl.context.cache import CacheUsage
    from agentctl.context.compaction import Compaction

Json = dict[str, Any]
WINDOW_STOP = "model_context_window_exceeded"


class MessagesService:
    """Answers /v1/messages and /v1/messages/count_tokens bodies; thread-safe."""

    def __init__(
        self,
        engine: ContextEngine,
        model: Model,
        corpus: Corpus | None = None,
        pause_after: int = PAUSE_AFTER,
        context_window: int | None = None,
    ) -> None:
        self.engine = engine
        self.model = model
        self.corpus = corpus or builtin_corpus()
        self.pause_after = pause_after
        self.context_window = context_window  # None: each model's own (context.prices)
        self._cache_lock = threading.Lock()
        self.threads = ThreadStore()
        self.checked: Held[Checked] = Held()  # the messages each conversation passed

    def create(self, headers: dict[str, str], body: object) -> Json:
        """The BetaMessage JSON for a request (raises ApiFailure for invalid ones)."""
        betas = header_betas(headers)
        expanded = self.threads.expand(body, betas)
        try:
            return self._create(body, expanded, betas)
        finally:
            self.threads.release(_messages(expanded))

    def _create(self, body: object, expanded: object, betas: set[str]) -> Json:
        request = validate_request(expanded, betas, self.checked)
        edited = self._edit(server_view(request))
        edited, capped = self._within_window(edited, request)
        if request.get("compaction") is not None:  # on-demand: the signed block alone
            message = self._compact(request, summarized_now(edited, request), edited, signed=True)
        elif (compaction := self.engine.compact(edited.request)) is not None:
            message = self._compact(request, compaction, edited)
        else:
            with self._cache_lock:  # the cache state is shared across requests
                cache = self.engine.account(edited.request, request["model"])
            message = self._respond(request, edited, cache)
            if BETA_COMPACT in betas:  # every response under the beta has iterations [DOC]
                message["usage"]["iterations"] = [_iteration("message", message["usage"])]
        if capped and message["stop_reason"] == "max_tokens":
            message["stop_reason"] = WINDOW_STOP
        if BETA_CONTEXT_MANAGEMENT in betas:  # present under the beta, edits or not (observed)
            message.setdefault("context_management", {"applied_edits": []})
        self.threads.hold(body, request["messages"], message)
        return message

    def _compact(
        self, request: Json, compaction: Compaction, edited: Edited, *, signed: bool = False
    ) -> Json:
        """The reply that opens with the compaction block: the summarisation call is one
        iteration (it reads and writes the prompt cache like a request, as observed), the
        model's answer from the compacted prompt another, unless paused."""
        model = request["model"]
        with self._cache_lock:
            closed = self.engine.account(edited.request, model)
            cache = None if compaction.pause else self.engine.account(compaction.request, model)
        summarizing = {
            "type": "compaction",
            **_iteration_usage(closed),
            "output_tokens": compaction.output_tokens,
        }
        summarizing["input_tokens"] += compaction.input_tokens - edited.input_tokens
        block: Json = {"type": "compaction", "content": compaction.summary}
        if signed:
            block["signature"] = sign_summary(compaction.summary)
        if cache is None:  # paused: only the block; usage only input/output 0 and iterations
            message = _paused_message(model, block, summarizing)
            if edited.applied_edits is not None:
                message["context_management"] = {"applied_edits": edited.applied_edits}
            return message
        after = replace(edited, request=compaction.request)
        message = self._respond(request, after, cache)
        message["content"] = [block, *message["content"]]
        message["usage"]["iterations"] = [summarizing, _iteration("message", message["usage"])]
        return message

    def _within_window(self, edited: Edited, request: Json) -> tuple[Edited, bool]:
        """The API's 400 when the prompt (as edited: the model reads it so) is larger than
        the context window; else `edited` with max_tokens lowered to the room left, and
        whether that capped it. Newer models stop at the window (WINDOW_STOP) instead of
        refusing a max_tokens past it; older ones only with beta
        model-context-window-exceeded-2025-08-26, which the emulator does not check (ours)."""
        window = self.context_window or context_window(request["model"])
        if edited.input_tokens > window:
            raise invalid(f"prompt is too long: {edited.input_tokens} tokens > {window} maximum")
        room = window - edited.input_tokens
        if room >= request["max_tokens"]:
            return edited, False
        return replace(edited, request={**edited.request, "max_tokens": room}), True

    def count_tokens(self, headers: dict[str, str], body: object) -> Json:
        """The count_tokens answer: post-edit input tokens (and the pre-edit figure with edits)."""
        betas = header_betas(headers)
        expanded = self.threads.expand(body, betas)
        try:
            request = validate_count_request(expanded, betas, self.checked)
            edited = self._edit(server_view(request))  # `compaction` is accepted and ignored
        finally:
            self.threads.release(_messages(expanded))
        answer: Json = {"input_tokens": edited.input_tokens}
        if edited.applied_edits is not None:
            answer["context_management"] = {"original_input_tokens": edited.original_input_tokens}
        return answer

    def _respond(self, request: Json, edited: Edited, cache: CacheUsage) -> Json:
        """The model's reply; server tool calls are run and the model continues, as the API's
        server-side loop does, up to `pause_after` continuations (then `pause_turn`)."""
        tools = offered_server_tools(edited.request)
        if not tools:
            return build_message(self.model.reply(edited.request), edited, cache, self.engine)
        runner = ServerToolRunner(tools, self.corpus, json.dumps(request["messages"]))
        done = Continued()
        for _ in range(self.pause_after):
            reply = self.model.reply(continued(edited.request, done.blocks))
            if not done.add(reply, runner, assistant_turns(edited.request), self.engine):
                return build_message(reply, edited, cache, self.engine, done, runner)
        paused = Reply((), "pause_turn")
        return build_message(paused, edited, cache, self.engine, done, runner)

    def _edit(self, request: Json) -> Edited:
        problem = self.engine.validate(request)
        if problem:
            raise invalid(problem)
        return self.engine.edit(request)


def _messages(body: object) -> object:
    return body.get("messages") if isinstance(body, dict) else None


class Continued:
    """What the server-side loop produced before the last reply: blocks (server tool uses
    with their results), the model's output tokens and the result tokens it read."""

    def __init__(self) -> None:
        self.blocks: list[Json] = []
        self.output_tokens = 0
        self.input_tokens = 0

    def add(self, reply: Reply, runner: ServerToolRunner, turn: int, engine: ContextEngine) -> bool:
        """Run the reply's server tool calls and keep its blocks; True when the model goes on
        (it called only server tools and set no stop reason)."""
        server = [b for b in reply.blocks if isinstance(b, ToolCall) and b.name in runner.tools]
        client = [b for b in reply.blocks if isinstance(b, ToolCall) and b not in server]
        if not server or client or reply.stop_reason is not None:
            return False
        for block in reply.blocks:
            written = _block_json(block, turn, len(self.blocks), server=isinstance(block, ToolCall))
            self.blocks.append(written)
            self.output_tokens += engine.count_blocks([written])
            if isinstance(block, ToolCall):
                result = runner.run(block.name, written["id"], block.input)
                self.blocks.append(result)
                self.input_tokens += engine.count_blocks([result])
                runner.context += json.dumps(result)
        return True


def continued(request: Json, blocks: list[Json]) -> Json:
    """The request as the model sees it mid-response: what it wrote so far ends the last
    assistant message (or starts one)."""
    if not blocks:
        return request
    messages = list(request["messages"])
    last = messages[-1]
    if last.get("role") == "assistant":
        content = last["content"]
        earlier = [{"type": "text", "text": content}] if isinstance(content, str) else content
        messages[-1] = {**last, "content": [*earlier, *blocks]}
    else:
        messages.append({"role": "assistant", "content": list(blocks)})
    return {**request, "messages": messages}


def build_message(
    reply: Reply,
    edited: Edited,
    cache: CacheUsage,
    engine: ContextEngine,
    done: Continued | None = None,
    runner: ServerToolRunner | None = None,
) -> Json:
    """Assemble the API's message object from the model's reply and the accounting."""
    request = edited.request
    done = done or Continued()
    reply = stop_at_sequences(reply, request.get("stop_sequences") or [])
    turn = assistant_turns(request)
    blocks = _reply_json(reply, turn, len(done.blocks), runner)
    room = max(1, request["max_tokens"] - done.output_tokens)
    blocks, output_tokens, cut = fit_max_tokens(blocks, room, engine)
    if reply.output_tokens is not None and not cut:
        output_tokens = reply.output_tokens
    server = frozenset(runner.tools) if runner is not None else frozenset()
    stop_reason = "max_tokens" if cut else _stop_reason(reply, server)
    usage = usage_json(cache, done.output_tokens + output_tokens)
    usage["input_tokens"] += done.input_tokens
    if runner is not None:
        usage["server_tool_use"] = {
            "web_search_requests": runner.web_search_requests,
            "web_fetch_requests": runner.web_fetch_requests,
        }
    message: Json = {
        "id": new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": [*done.blocks, *blocks],
        "stop_reason": stop_reason,
        "stop_sequence": _stop_sequence(reply, request) if stop_reason == "stop_sequence" else None,
        "usage": usage,
    }
    if edited.applied_edits is not None:
        message["context_management"] = {"applied_edits": edited.applied_edits}
    return message


def server_view(request: Json) -> Json:
    """The request as the server reads it before any edit: system-role messages rendered,
    and everything before a signed (on-demand) compaction block dropped even without the
    compact strategy (threshold blocks are dropped by the engine under the strategy)."""
    view = render_system_messages(request)
    if compact_edit(view) is None and _signed_summary(view):
        view = compacted(view)
    return view


def render_system_messages(request: Json) -> Json:
    """`request` with its system-role messages as the model reads them (ours): a shown
    message's text joins the nearest user message (the one before it, else the next one,
    else a user message of its own at the end); one with `clear_at: "next_user_message"`
    is not shown once a user message follows it. Other block kinds (tool additions and
    removals) are not modelled."""
    messages = request["messages"]
    if "system" not in map(itemgetter("role"), unseen(messages, "system")):  # at C speed
        return request
    out: list[Json] = []
    carried: list[Json] = []  # shown system text waiting for the next user message
    for i, message in enumerate(messages):
        if message["role"] != "system":
            if message["role"] == "user" and carried:
                message = {**message, "content": [*_blocks(message), *carried]}
                carried = []
            out.append(message)
            continue
        later_user = any(m["role"] == "user" for m in messages[i + 1 :])
        if message.get("clear_at") == "next_user_message" and later_user:
            continue
        texts = [b for b in _blocks(message) if b.get("type") == "text"]
        if out and out[-1]["role"] == "user":
            out[-1] = {**out[-1], "content": [*_blocks(out[-1]), *texts]}
        else:
            carried += texts
    if carried:
        out.append({"role": "user", "content": carried})
    return {**request, "messages": out}


def _blocks(message: Json) -> list[Json]:
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _signed_summary(request: Json) -> bool:
    return any(map(is_signed, unseen(request["messages"], "signed")))


def summarized_now(edited: Edited, request: Json) -> Compaction:
    """On-demand compaction of the edited view, with the request's instructions."""
    return summarized(edited.request, request["compaction"].get("instructions"))


def _iteration_usage(cache: CacheUsage) -> Json:
    usage = usage_json(cache, 0)
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return {**{k: usage[k] for k in keys}, "cache_creation": usage["cache_creation"]}


def _iteration(kind: str, usage: Json) -> Json:
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens")
    entry = {"type": kind, **{k: usage[k] for k in keys}}
    entry["cache_creation_input_tokens"] = usage["cache_creation_input_tokens"]
    entry["cache_creation"] = dict(usage["cache_creation"])
    return entry


def _paused_message(model: str, block: Json, summarizing: Json) -> Json:
    usage = {"input_tokens": 0, "output_tokens": 0, "iterations": [summarizing]}
    return {
        "id": new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "compaction",
        "stop_sequence": None,
        "usage": usage,
    }


def stop_at_sequences(reply: Reply, sequences: list[str]) -> Reply:
    """The model stops where its text first produces one of the request's stop_sequences."""
    for index, block in enumerate(reply.blocks):
        found = _first_stop(block.text, sequences) if isinstance(block, TextOut) else None
        if found is None or not isinstance(block, TextOut):
            continue
        at, sequence = found
        kept = (*reply.blocks[:index], *([TextOut(block.text[:at])] if at else []))
        return Reply(kept, "stop_sequence", sequence)
    return reply


def _first_stop(text: str, sequences: list[str]) -> tuple[int, str] | None:
    hits = [(text.find(q), q) for q in sequences if q]
    return min(((at, q) for at, q in hits if at >= 0), default=None)


def usage_json(cache: CacheUsage, output_tokens: int) -> Json:
    """The `usage` object as the API reports it."""
    return {
        "input_tokens": cache.input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache.cache_creation_input_tokens,
        "cache_read_input_tokens": cache.cache_read_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.ephemeral_5m_input_tokens,
            "ephemeral_1h_input_tokens": cache.ephemeral_1h_input_tokens,
        },
        "service_tier": "standard",
    }


def _reply_json(reply: Reply, turn: int, start: int, runner: ServerToolRunner | None) -> list[Json]:
    """The reply's blocks; its server tool calls (if any) run, each followed by its result."""
    blocks: list[Json] = []
    for block in reply.blocks:
        server = runner is not None and isinstance(block, ToolCall) and block.name in runner.tools
        written = _block_json(block, turn, start + len(blocks), server=server)
        blocks.append(written)
        if runner is not None and server and isinstance(block, ToolCall):
            blocks.append(runner.run(block.name, written["id"], block.input))
    return blocks


def _block_json(block: Block, turn: int, index: int, *, server: bool = False) -> Json:
    if isinstance(block, TextOut):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingOut):
        signature = stable_id("EmuSig", block.thinking)
        return {"type": "thinking", "thinking": block.thinking, "signature": signature}
    if server:  # run by the API itself: `srvtoolu_` ids, as the API's
        tool_id = stable_id("srvtoolu_emu", turn, index, block.name, block.input)
        return {"type": "server_tool_use", "id": tool_id, "name": block.name, "input": block.input}
    tool_id = stable_id("toolu_emu", turn, index, block.name, block.input)
    return {"type": "tool_use", "id": tool_id, "name": block.name, "input": block.input}


def fit_max_tokens(
    blocks: list[Json], max_tokens: int, engine: ContextEngine
) -> tuple[list[Json], int, bool]:
    """Cut the output at max_tokens: text is shortened, a tool call that does not fit is dropped.

    Returns (blocks, output_tokens, cut). The real API would stream a partial tool call; a
    dropped call is simpler for clients and still shows `stop_reason: max_tokens`.
    """
    kept: list[Json] = []
    used = 0
    for block in blocks:
        cost = engine.count_blocks([block])
        if used + cost <= max_tokens:
            kept.append(block)
            used += cost
            continue
        partial = _shorten(block, (max_tokens - used) / cost)
        if partial is not None:
            kept.append(partial)
        return kept, max_tokens, True
    return kept, max(used, 1), False


def _shorten(block: Json, share: float) -> Json | None:
    key = {"text": "text", "thinking": "thinking"}.get(block["type"])
    if key is None:
        return None
    text = block[key][: int(len(block[key]) * share)]
    return {**block, key: text} if text else None


def _stop_reason(reply: Reply, server: frozenset[str] = frozenset()) -> str:
    if reply.stop_reason is not None:
        return reply.stop_reason
    client = [b for b in reply.blocks if isinstance(b, ToolCall) and b.name not in server]
    return "tool_use" if client else "end_turn"


def _stop_sequence(reply: Reply, request: Json) -> str:
    if reply.stop_sequence:
        return reply.stop_sequence
    sequences = request.get("stop_sequences") or ["\n\nHuman:"]
    return str(sequences[0])
