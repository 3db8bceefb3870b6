"""The Messages API behind the HTTP layer: validate, edit the context, account the cache, reply."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentctl.emulator.editing import ContextEngine, Edited
from agentctl.emulator.model import Block, Model, Reply, TextOut, ThinkingOut, assistant_turns
from agentctl.emulator.protocol import header_betas, invalid, new_message_id, stable_id
from agentctl.emulator.threads import ThreadStore
from agentctl.emulator.validation import validate_count_request, validate_request

if TYPE_CHECKING:
    from agentctl.context.cache import CacheUsage

Json = dict[str, Any]
WINDOW_STOP = "model_context_window_exceeded"


class MessagesService:
    """Answers /v1/messages and /v1/messages/count_tokens bodies; thread-safe."""

    def __init__(self, engine: ContextEngine, model: Model, placeholder: str) -> None:
        self.engine = engine
        self.model = model
        self.placeholder = placeholder
        self._cache_lock = threading.Lock()
        self.threads = ThreadStore()
        # None: each model's own window (context.prices); a number: that window for all.
        self.context_window: int | None = None

    def create(self, headers: dict[str, str], body: object) -> Json:
        """The BetaMessage JSON for a request (raises ApiFailure for invalid ones)."""
        betas = header_betas(headers)
        request = validate_request(self.threads.expand(body, betas), betas)
        edited = self._edit(request)
        edited, capped = self._within_window(edited, request)
        with self._cache_lock:  # the cache state is shared across requests
            cache = self.engine.account(edited.request, request["model"])
        reply = self.model.reply(edited.request)
        message = build_message(reply, edited, cache, self.engine)
        if capped and message["stop_reason"] == "max_tokens":
            message["stop_reason"] = WINDOW_STOP
        self.threads.hold(body, request["messages"], message)
        return message

    def _within_window(self, edited: Edited, request: Json) -> tuple[Edited, bool]:
        """The API's 400 when the prompt (as edited: the model reads it so) is larger than
        the context window; else `edited` with max_tokens lowered to the room left, and
        whether that capped it. Newer models stop at the window (WINDOW_STOP) instead of
        refusing a max_tokens past it; older ones only with beta
        model-context-window-exceeded-2025-08-26, which the emulator does not check (ours)."""
        from agentctl.context.prices import context_window

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
        request = validate_count_request(self.threads.expand(body, betas), betas)
        edited = self._edit(request)
        answer: Json = {"input_tokens": edited.input_tokens}
        if edited.applied_edits is not None:
            answer["context_management"] = {"original_input_tokens": edited.original_input_tokens}
        return answer

    def _edit(self, request: Json) -> Edited:
        problem = self.engine.validate(request)
        if problem:
            raise invalid(problem)
        return self.engine.edit(request, self.placeholder)


def build_message(reply: Reply, edited: Edited, cache: CacheUsage, engine: ContextEngine) -> Json:
    """Assemble the API's message object from the model's reply and the accounting."""
    request = edited.request
    reply = stop_at_sequences(reply, request.get("stop_sequences") or [])
    turn = assistant_turns(request)
    blocks = [_block_json(block, turn, index) for index, block in enumerate(reply.blocks)]
    blocks, output_tokens, cut = fit_max_tokens(blocks, request["max_tokens"], engine)
    if reply.output_tokens is not None and not cut:
        output_tokens = reply.output_tokens
    stop_reason = "max_tokens" if cut else _stop_reason(reply)
    message: Json = {
        "id": new_message_id(),
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": _stop_sequence(reply, request) if stop_reason == "stop_sequence" else None,
        "usage": usage_json(cache, output_tokens),
    }
    if edited.applied_edits is not None:
        message["context_management"] = {"applied_edits": edited.applied_edits}
    return message


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


def _block_json(block: Block, turn: int, index: int) -> Json:
    if isinstance(block, TextOut):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingOut):
        signature = stable_id("EmuSig", block.thinking)
        return {"type": "thinking", "thinking": block.thinking, "signature": signature}
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


def _stop_reason(reply: Reply) -> str:
    if reply.stop_reason is not None:
        return reply.stop_reason
    return "tool_use" if any(b.type == "tool_use" for b in reply.blocks) else "end_turn"


def _stop_sequence(reply: Reply, request: Json) -> str:
    if reply.stop_sequence:
        return reply.stop_sequence
    sequences = request.get("stop_sequences") or ["\n\nHuman:"]
    return str(sequences[0])
