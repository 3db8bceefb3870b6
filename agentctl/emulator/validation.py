"""The one validator of request shapes, with the API's status codes and message style
(`messages.3.content.0`): Messages bodies (with the signatures on compaction blocks), count
requests, and the `requests` of a Message Batch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentctl.emulator.conversations import Held, conversation_key
from agentctl.emulator.protocol import (
    BETA_COMPACT,
    BETA_COMPACT_ON_DEMAND,
    BETA_CONTEXT_MANAGEMENT,
    ApiFailure,
    invalid,
    stable_id,
)
from agentctl.emulator.structured import check_output_config

Json = dict[str, Any]

NAMELESS_TOOL = re.compile(r"mcp_toolset|[a-z_]+_toolset_\d{8}")
THINKING_DOCS = (
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    "#max-tokens-and-context-window-size"
)
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Checked:
    """A conversation's last request that passed, kept in `Held` with its messages under its
    conversation: whether its signatures were checked too (a Messages request, not a count).
    A request extending it is checked from where they part; the checks of a message depend on
    it and its neighbouring turns only, so the answers are the same."""

    signed: bool


@dataclass(frozen=True)
class _Seen:
    """What the message checks of one request found: where it parts from the held request."""

    key: tuple[str, Any] | None
    shared: int
    before: Checked | None


def validate_request(body: object, betas: set[str], held: Held[Checked] | None = None) -> Json:
    """Check a /v1/messages body; return it typed as a dict or raise the API's ApiFailure.
    With `held`, the messages a conversation's earlier request passed are not checked again."""
    request, seen = _validate_count(body, betas, held)
    _check_max_tokens(request)
    _check_thinking(request)
    sequences = request.get("stop_sequences")
    if sequences is not None and not (
        isinstance(sequences, list) and all(isinstance(q, str) for q in sequences)
    ):
        raise invalid("stop_sequences: Input should be a valid list of strings")
    if "stream" in request and not isinstance(request["stream"], bool):
        raise invalid("stream: Input should be a valid boolean")
    _check_compaction_request(request, betas)
    signed = seen.before is not None and seen.before.signed
    check_signatures(request, seen.shared if signed else 0)
    if held is not None and seen.key is not None:
        held.keep(seen.key, request["messages"], Checked(signed=True))
    return request


def _check_compaction_request(request: Json, betas: set[str]) -> None:
    """On-demand compaction (top-level `compaction`, beta compact-2026-09-04): what the SDK
    documents it cannot be combined with; the texts are ours except the first."""
    compaction = request.get("compaction")
    if compaction is None:
        return
    if BETA_COMPACT_ON_DEMAND not in betas:
        raise invalid("compaction: Extra inputs are not permitted")
    if not isinstance(compaction, dict) or compaction.get("type") != "summarize":
        raise invalid("compaction.type: Input should be 'summarize'")
    extra = sorted(set(compaction) - {"type", "instructions"})
    if extra:
        raise invalid(f"compaction.{extra[0]}: Extra inputs are not permitted")
    instructions = compaction.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise invalid("compaction.instructions: Input should be a valid string")
    if "context_management" in request:
        raise invalid("`compaction` cannot be used together with `context_management`")
    choice = request.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    output = request.get("output_config")
    for present, what in (
        (bool(request.get("stop_sequences")), "`stop_sequences`"),
        (isinstance(output, dict) and output.get("format") is not None, "`output_config.format`"),
        (forced, "a forced `tool_choice`"),
        (_unanswered_tool_use(request["messages"]), "an unanswered `tool_use`"),
    ):
        if present:
            raise invalid(f"`compaction` cannot be used together with {what}")


def _unanswered_tool_use(messages: list[Json]) -> bool:
    found = _turn_before(messages, len(messages))
    last = found[1] if found else None
    return last is not None and last["role"] == "assistant" and bool(_blocks(last, "tool_use"))


def validate_count_request(
    body: object, betas: set[str], held: Held[Checked] | None = None
) -> Json:
    """Check the fields /v1/messages/count_tokens shares with /v1/messages."""
    request, seen = _validate_count(body, betas, held)
    if held is not None and seen.key is not None:
        held.keep(seen.key, request["messages"], Checked(signed=False))
    return request


def _validate_count(
    body: object, betas: set[str], held: Held[Checked] | None
) -> tuple[Json, _Seen]:
    if not isinstance(body, dict):
        raise invalid("Input should be a valid dictionary or object to extract fields from")
    _check_model(body)
    seen = _check_messages(body, held)
    _check_tools(body.get("tools"))
    _check_betas(body, betas)
    check_output_config(body)
    return body, seen


def turns_from(messages: list[Json], start: int) -> list[tuple[int, Json]]:
    """The user and assistant messages from `start` on with their indexes: `{"role":
    "system"}` messages (SDK 2.15 `BetaSystemMessageParam`) sit between them without
    breaking the turns."""
    return [
        (i, messages[i]) for i in range(start, len(messages)) if messages[i]["role"] != "system"
    ]


def _opens_with_summary(message: Json) -> bool:
    """An assistant message that opens with a compaction block may start the conversation:
    the API accepts a compacted history resent from its summary on (observed on the real API)."""
    content = message["content"]
    return (
        message["role"] == "assistant"
        and isinstance(content, list)
        and bool(content)
        and content[0]["type"] == "compaction"
    )


def _check_betas(body: Json, betas: set[str]) -> None:
    """`context_management` needs one of the two betas (the compaction beta alone is accepted
    by the real API); each edit its own (ours: stricter than the API may be)."""
    if "context_management" not in body:
        return
    if not betas & {BETA_CONTEXT_MANAGEMENT, BETA_COMPACT}:
        raise invalid("context_management: Extra inputs are not permitted")
    management = body["context_management"]
    edits = management.get("edits") if isinstance(management, dict) else None
    for index, edit in enumerate(edits if isinstance(edits, list) else []):
        kind = edit.get("type") if isinstance(edit, dict) else None
        needs = BETA_COMPACT if kind == "compact_20260112" else BETA_CONTEXT_MANAGEMENT
        if isinstance(kind, str) and needs not in betas:
            raise invalid(
                f"context_management.edits.{index}: `{kind}` requires the `anthropic-beta: "
                f"{needs}` header"
            )


def _check_model(body: Json) -> None:
    model = body.get("model")
    if model is None:
        raise invalid("model: Field required")
    if not isinstance(model, str):
        raise invalid("model: Input should be a valid string")
    # Any claude-* id is accepted so new model names work offline; others are unknown.
    if not model.startswith("claude-"):
        raise ApiFailure(404, f"model: {model}")


def _check_max_tokens(body: Json) -> None:
    value = body.get("max_tokens")
    if value is None:
        raise invalid("max_tokens: Field required")
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid("max_tokens: Input should be a valid integer")
    if value < 1:
        raise invalid("max_tokens: Input should be greater than or equal to 1")


def _check_messages(body: Json, held: Held[Checked] | None) -> _Seen:
    messages = body.get("messages")
    if messages is None:
        raise invalid("messages: Field required")
    if not isinstance(messages, list):
        raise invalid("messages: Input should be a valid list")
    if not messages:
        raise invalid("messages: at least one message is required")
    key = _key(body) if held is not None else None
    shared, before = held.recall(key, messages) if held is not None and key else (0, None)
    if before is None:
        shared = 0
    for index in range(shared, len(messages)):
        _check_message(index, messages[index])
    # the turns to check: the new ones, after the last kept one (its checks look at its
    # neighbours: as an assistant turn, at the next one, which is new)
    last = _turn_before(messages, shared)
    turns = turns_from(messages, shared)
    turns = [last, *turns] if last else turns
    if not turns:
        raise invalid("messages: at least one user or assistant message is required")
    first = _turn_before(messages, 0, after=True) if last else turns[0]
    if first is not None and first[1]["role"] != "user" and not _opens_with_summary(first[1]):
        raise invalid('messages: first message must use the "user" role')
    for position in range(1 if last and last[1]["role"] == "user" else 0, len(turns)):
        _check_tool_pairing(turns, position)
    return _Seen(key, shared, before)


def _turn_before(messages: list[Json], index: int, after: bool = False) -> tuple[int, Json] | None:
    """The last user or assistant message before `index` (`after`: the first from `index`
    on), with its index; system-role messages are passed over."""
    steps = range(index, len(messages)) if after else range(index - 1, -1, -1)
    return next(((i, messages[i]) for i in steps if messages[i]["role"] != "system"), None)


def _key(body: Json) -> tuple[str, Any] | None:
    """The request's conversation in `Held` (None when its opening is not plain JSON)."""
    try:
        return (conversation_key(body), None)
    except (TypeError, ValueError):
        return None


def _check_message(index: int, message: object) -> None:
    where = f"messages.{index}"
    if not isinstance(message, dict):
        raise invalid(f"{where}: Input should be a valid dictionary")
    if message.get("role") not in ("user", "assistant", "system"):
        raise invalid(f"{where}.role: Input should be 'user', 'assistant' or 'system'")
    content = message.get("content")
    if content is None:
        raise invalid(f"{where}.content: Field required")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise invalid(f"{where}.content: Input should be a valid list")
    for position, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise invalid(f"{where}.content.{position}.type: Field required")


def _blocks(message: Json, kind: str) -> list[tuple[int, Json]]:
    content = message["content"]
    if isinstance(content, str):
        return []
    return [(i, b) for i, b in enumerate(content) if b["type"] == kind]


def _check_tool_pairing(turns: list[tuple[int, Json]], position: int) -> None:
    """tool_result needs a tool_use in the previous turn; a tool_use needs a result next turn
    (system-role messages between them do not count)."""
    index, message = turns[position]
    if message["role"] == "user":
        previous = turns[position - 1][1] if position > 0 else None
        offered = {b.get("id") for _, b in _blocks(previous, "tool_use")} if previous else set()
        for position, block in _blocks(message, "tool_result"):
            if block.get("tool_use_id") not in offered:
                raise invalid(
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message."
                )
        return
    if position + 1 >= len(turns):
        return  # the last assistant turn may hold unanswered calls (prefill)
    answered = {b.get("tool_use_id") for _, b in _blocks(turns[position + 1][1], "tool_result")}
    calls = _blocks(message, "tool_use")
    missing = [str(b.get("id")) for _, b in calls if b.get("id") not in answered]
    if missing:
        raise invalid(
            f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )


def _check_tools(tools: object) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid("tools: Input should be a valid list")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise invalid(f"tools.{index}: Input should be a valid dictionary")
        kind = tool.get("type", "custom")
        if isinstance(kind, str) and NAMELESS_TOOL.fullmatch(kind):
            continue  # toolsets carry no name (SDK 2.15: mcp_toolset, *_toolset_20260801)
        if not isinstance(tool.get("name"), str):
            raise invalid(f"tools.{index}.name: Field required")
        if kind == "memory_20250818" and tool["name"] != "memory":
            raise invalid(f"tools.{index}.memory_20250818.name: Input should be 'memory'")
        if kind == "custom" and not isinstance(tool.get("input_schema"), dict):
            raise invalid(f"tools.{index}.custom.input_schema: Field required")
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            raise invalid(
                f"tools.{index}.{kind}: allowed_domains and blocked_domains cannot both be set"
            )


def _check_thinking(body: Json) -> None:
    thinking = body.get("thinking")
    if thinking is None:
        return
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind not in ("enabled", "disabled", "adaptive"):
        raise invalid(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'adaptive', 'disabled', 'enabled'"
        )
    if kind == "enabled":
        _check_budget(thinking.get("budget_tokens"), body["max_tokens"])


def _check_budget(budget: object, max_tokens: int) -> None:
    if budget is None:
        raise invalid("thinking.enabled.budget_tokens: Field required")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
    if budget < 1024:
        raise invalid(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    if budget >= max_tokens:
        raise invalid(
            f"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
            f"documentation at {THINKING_DOCS}"
        )


def thinking_enabled(request: Json) -> bool:
    """Whether the request turns extended thinking on (enabled or adaptive)."""
    thinking = request.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


SIGNATURE_PREFIX = "EmuCmp"  # the emulator's own signatures; others cannot be verified


def sign_summary(content: str) -> str:
    """The signature the emulator puts on an on-demand compaction block."""
    return stable_id(SIGNATURE_PREFIX, content)


def check_signatures(request: Json, start: int = 0) -> None:
    """A signed compaction block whose content was changed is refused (the real API's text and
    error code). Only the emulator's own signatures are checked; unsigned (threshold)
    blocks never are. The messages before `start` are known to pass."""
    messages = request["messages"]
    for i in range(start, len(messages)):
        content = messages[i]["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            signature = block.get("signature")
            if block["type"] != "compaction" or not isinstance(signature, str):
                continue
            if signature.startswith(SIGNATURE_PREFIX) and signature != sign_summary(
                str(block.get("content"))
            ):
                raise ApiFailure(
                    400,
                    f"messages.{i}.content.{j}: `compaction` block `content` does not match "
                    "its `signature`",
                    details={"error_code": "compaction_content_mismatch"},
                )


def validate_batch_requests(body: Any, limit: int) -> list[Json]:
    """The `requests` of a create body, checked: shape, custom_id pattern and uniqueness, count.
    Each `params` is only checked to be an object here; the Messages validation runs when the
    batch is processed, and a request it refuses comes back `errored`."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        raise invalid("requests: must be a non-empty list")
    if len(requests) > limit:
        raise invalid(f"requests: at most {limit} requests per batch ({len(requests)} given)")
    seen: set[str] = set()
    for n, request in enumerate(requests):
        where = f"requests.{n}"
        if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
            raise invalid(f"{where}: must be an object with custom_id and params (an object)")
        custom_id = request.get("custom_id")
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            raise invalid(f"{where}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$")
        if custom_id in seen:
            raise invalid(f"{where}.custom_id: {custom_id!r} is used more than once")
        if request["params"].get("stream"):
            raise invalid(f"{where}.params.stream: streaming is not supported in a batch")
        seen.add(custom_id)
    return [{"custom_id": r["custom_id"], "params": r["params"]} for r in requests]
