"""Profile + history + tools -> the keyword arguments of `client.beta.messages.stream(...)`.

Prompt caching puts at most three breakpoints (the API allows four): the last tool definition
(caches all tools), the system prompt, and the last cacheable block of the latest message, so
each turn reads the previous turn's prefix and writes only what is new.

On-demand compaction: a compaction request is the run's next request plus top-level
`compaction` (beta compact-2026-09-04), without what only shapes a reply; its answer is a
signed compaction block alone, and every later request sends the history from that block on
(it stands in place of the messages it summarises).

Batched clearing steers on the prompt sizes the server reported (`measured`: by the number of
messages of the history a response answered, `reported_size` of each response), so on a live
run an estimate only ever covers what was added since the latest response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentctl.agent.server_tools import betas as server_betas
from agentctl.agent.server_tools import definitions
from agentctl.agent.structured import output_config
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel
from agentctl.profile.settings import ClearToolUses, ContextEditing, Profile

if TYPE_CHECKING:
    from agentctl.context.batching import Steering
    from agentctl.types import AppliedEdit, Usage

BETA_COMPACT_ON_DEMAND = "compact-2026-09-04"
# Request fields the API refuses beside `compaction` (they shape a reply, and there is none).
_REPLY_ONLY = ("context_management", "stop_sequences", "output_format")
# Blocks the API refuses a cache_control on.
_UNCACHEABLE = frozenset({"thinking", "redacted_thinking"})


def server_tools(profile: Profile) -> list[dict[str, Any]]:
    """Server-side tools the profile turns on (`[server_tools]`), at the SDK's newest versions."""
    return definitions(profile.server_tools)


def betas(profile: Profile, *more: str) -> list[str]:
    """Beta flags: context management always (the memory tool and the edits ride on it), the
    compaction beta with the compact edit, any the chosen server tool versions need, `more`
    (what this request needs besides), then the profile's own `betas`; each once."""
    own = [*profile.context_editing.betas(), *server_betas(profile.server_tools), *more]
    return list(dict.fromkeys([*own, *profile.betas]))


def cache_control(profile: Profile) -> dict[str, Any] | None:
    """The breakpoint marker, or None when caching is off."""
    if not profile.cache.enabled:
        return None
    return {"type": "ephemeral", "ttl": profile.cache.ttl}


def build_request(
    profile: Profile,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    measured: Mapping[int, int] | None = None,
    server: ServerModel = DEFAULT_SERVER_MODEL,
    steering: Steering | None = None,
    start: int | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The full request; `messages` and `tools` are never modified (the request holds the
    same message objects, and copies of what it changes: the cache markers). A history that
    holds a signed compaction block is sent from the last one on. `measured`: the prompt sizes
    earlier responses reported, by the number of messages of `messages` they answered;
    `server`: the server model the run plays (batched clearing counts tool uses by it);
    `steering`: batched clearing's walk kept from this run's previous request; `start`:
    `read_from(messages, threshold=False)` (the last on-demand summary) when the caller keeps
    it; `output_schema`: the JSON Schema answers must match (`output_config.format`)."""
    start = read_from(messages, threshold=False) if start is None else start
    messages = messages[start:] if start else messages
    sent = (
        measured if not start else {n - start: v for n, v in (measured or {}).items() if n > start}
    )
    request: dict[str, Any] = {"model": profile.model, "max_tokens": profile.max_tokens}
    if profile.system:
        request["system"] = [{"type": "text", "text": profile.system}]
    thinking = profile.thinking.request_field()
    if thinking is not None:
        request["thinking"] = thinking
    if tools:
        request["tools"] = list(tools)  # the cache marker goes on a copy of the last one
    if output_schema is not None:
        request["output_config"] = output_config(output_schema)
    request["messages"] = list(messages)
    steering = steering or new_steering(profile.context_editing)
    cm = build_context_management(profile.context_editing, request, server, sent, steering=steering)
    if cm is not None:
        request["context_management"] = cm
    request = place_breakpoints(request, cache_control(profile), held(steering))
    signed = bool(messages) and is_summary(messages[0])
    request["betas"] = betas(profile, *([BETA_COMPACT_ON_DEMAND] if signed else []))
    return request


def build_context_management(
    ce: ContextEditing,
    request: Mapping[str, Any] | None = None,
    server: ServerModel = DEFAULT_SERVER_MODEL,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
    steering: Steering | None = None,
) -> dict[str, Any] | None:
    """The `context_management` field of `request` (of a first request when None), or None
    when no strategy is on. `measured`: for batched clearing, the prompt sizes the server
    reported for earlier requests of this history, by their number of messages (`usage`
    input + cache reads + cache writes), which steering prefers to its estimate
    (`unedited`: those sizes plus the tool-use tokens each response reports cleared);
    `steering`: the walk kept from the previous request of the same run.

    clear_thinking must come first when both are used (the API rejects the other order).
    """
    edits: list[dict[str, Any]] = []
    if ce.thinking.enabled:
        edits.append(ce.thinking.edit())
    if ce.tool_uses.enabled:
        edit = tool_uses_edit(ce.tool_uses, request, server, measured, unedited, edits, steering)
        edits.append(edit)
    if ce.compaction.threshold:  # last: it measures the prompt the other edits leave (ours)
        edits.append(ce.compaction.edit())
    return {"edits": edits} if edits else None


def tool_uses_edit(
    s: ClearToolUses,
    request: Mapping[str, Any] | None = None,
    server: ServerModel = DEFAULT_SERVER_MODEL,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
    before: Sequence[Mapping[str, Any]] = (),
    steering: Steering | None = None,
) -> dict[str, Any]:
    """The clear_tool_uses edit of `request`: as written for strategy "server" and for a first
    request (None), else steered by batched clearing (`context.batching.batched_edit`: above
    the trigger, clear down to low_water), measured on the prompt as the edits `before` it
    leave it."""
    if s.strategy == "server" or request is None:
        return s.edit()
    # Imported here: a first request (`profile show`) never steers, so it starts without them.
    from agentctl.context.batching import Marks, batched_edit
    from agentctl.context.engine import apply_context_edits

    if before:  # new message objects each time: nothing to keep between requests
        request = apply_context_edits(request, list(before), server=server).request
        steering = None
    marks = Marks(s.trigger, s.low_water, s.keep, s.clear_at_least, view=True)
    return batched_edit(s.edit(), marks, request, server, measured, unedited, steering)


def reported_size(
    usage: Usage,
    content: Sequence[Mapping[str, Any]],
    edits: Sequence[AppliedEdit] = (),
    *,
    compaction_request: bool = False,
    unedited: bool = False,
) -> int | None:
    """The prompt a response says the model read (input + cache writes + cache reads), or
    None where its usage is not one prompt's: the answer to a compaction request, or a reply
    that compacted (its figures add the summarising call's). `unedited`: plus the tool-use
    tokens its `applied_edits` cleared (the prompt before clearing, for replays under other
    settings)."""
    compacted = any(b.get("type") == "compaction" for b in content)
    if compaction_request or compacted or usage.compactions:
        return None
    cleared = sum(e.cleared_input_tokens for e in edits if e.type.startswith("clear_tool_uses"))
    return usage.prompt_tokens + (cleared if unedited else 0)


def build_compaction_request(
    profile: Profile,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    instructions: str = "",
) -> dict[str, Any]:
    """The on-demand compaction request for `messages` (whose last message must answer every
    tool_use: the caller's rule): the next request as `build_request` makes it, plus
    `compaction: {"type": "summarize", "instructions"?}` and its beta, minus what the API
    refuses beside it: `context_management` (clearing edits resume on the next request),
    `stop_sequences`, `output_config.format` and a forced `tool_choice`."""
    request = without_reply_fields(build_request(profile, messages, tools))
    config: dict[str, Any] = {"type": "summarize"}
    if instructions.strip():
        config["instructions"] = instructions
    request["compaction"] = config
    request["betas"] = betas(profile, BETA_COMPACT_ON_DEMAND)
    return request


def without_reply_fields(request: Mapping[str, Any]) -> dict[str, Any]:
    """`request` without the fields a compaction request may not carry (as the SDK's tool
    runner trims its compaction request)."""
    out = {k: v for k, v in request.items() if k not in _REPLY_ONLY}
    choice = out.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        del out["tool_choice"]
    config = out.get("output_config")
    if isinstance(config, Mapping) and "format" in config:
        out["output_config"] = {k: v for k, v in config.items() if k != "format"}
    return out


def is_summary(message: Mapping[str, Any]) -> bool:
    """An on-demand compaction's answer: an assistant message holding a signed compaction
    block alone (threshold blocks carry no signature and come with the reply)."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list) or len(content) != 1:
        return False
    block = content[0]
    return (
        isinstance(block, Mapping)
        and block.get("type") == "compaction"
        and bool(block.get("signature"))
    )


def opens_view(message: Mapping[str, Any], threshold: bool) -> bool:
    """Whether the server reads a history from `message` on: an on-demand summary, or, when
    the requests carry compact_20260112 (`threshold`), an assistant message holding a
    compaction block with a summary (`content: null`, a failed compaction, drops nothing).
    The API ignores every block before the last compaction block, "and the client may also
    drop them" (docs/context.md, "Compaction")."""
    if is_summary(message):
        return True
    content = message.get("content")
    if not threshold or message.get("role") != "assistant" or not isinstance(content, list):
        return False
    return any(
        isinstance(block, Mapping)
        and block.get("type") == "compaction"
        and bool(block.get("content") or block.get("encrypted_content"))
        for block in content
    )


def read_from(messages: Sequence[Mapping[str, Any]], threshold: bool) -> int:
    """The index of the first message the server reads (`opens_view`'s last), else 0."""
    for index in range(len(messages) - 1, -1, -1):
        if opens_view(messages[index], threshold):
            return index
    return 0


def new_steering(ce: ContextEditing) -> Steering | None:
    """A fresh walk for batched clearing (None for any other strategy), so that a request
    built without one from an earlier request still learns where its cleared part ends."""
    if not (ce.tool_uses.enabled and ce.tool_uses.strategy == "batched"):
        return None
    # Imported here, as in tool_uses_edit: a first request (`profile show`) never steers.
    from agentctl.context.batching import Steering

    return Steering()


def held(steering: Steering | None) -> list[tuple[int, str]]:
    """Where batched clearing's cleared part ends in the request just steered, and where it
    ended before its last move (`Steering.held`)."""
    return [] if steering is None else steering.held()


def place_breakpoints(
    body: Mapping[str, Any],
    marker: Mapping[str, Any] | None,
    holds: Sequence[tuple[int, str]] = (),
) -> dict[str, Any]:
    """A copy of `body` with the cache breakpoints where a run puts them: the last tool, the
    last system block, the last cacheable block of the last message (none without a marker)
    and, with batched clearing past its first batch, `holds`: the newest cleared tool result
    (message index, tool_use_id) now and before the boundary's last move. The prompt up to
    the boundary stays the same until the next batch, so that batch reads it from the cache
    and writes only what follows (without them, the nearest entry is the system prompt's and
    every batch rewrites all the messages). With two holds and a system prompt the tools
    lose their breakpoint (the API allows 4; the system's entry covers the tools).
    The one placement rule, for the run and for replays of recorded requests.
    Only what gets a marker is copied: `body` and its lists are never modified."""
    out = dict(body)
    if marker is None:
        return out
    keys = ["tools", "system"]
    if len(holds) > 1 and out.get("system") and out.get("tools"):
        keys.remove("tools")
    for key in keys:
        if isinstance(out.get(key), list) and out[key]:
            out[key] = [*out[key][:-1], _with_marker(dict(out[key][-1]), marker)]
    if holds and out.get("messages"):
        messages = list(out["messages"])
        for hold in holds:
            messages = _mark_result(messages, hold, marker)
        out["messages"] = messages
    if out.get("messages"):
        last = dict(out["messages"][-1])
        if isinstance(last.get("content"), list):
            last["content"] = list(last["content"])
        _mark_last_block(last, marker)
        out["messages"] = [*out["messages"][:-1], last]
    return out


def _mark_result(
    messages: list[Any], hold: tuple[int, str], marker: Mapping[str, Any]
) -> list[Any]:
    """`messages` with the marker on the tool result `hold` names (its message copied)."""
    index, use_id = hold
    if not 0 <= index < len(messages) or not isinstance(messages[index].get("content"), list):
        return messages
    content = list(messages[index]["content"])
    for at, block in enumerate(content):  # a client tool's result, or a server tool's
        if (
            str(block.get("type", "")).endswith("tool_result")
            and block.get("tool_use_id") == use_id
        ):
            content[at] = _with_marker(dict(block), marker)
            messages[index] = {**messages[index], "content": content}
            break
    return messages


def _with_marker(block: dict[str, Any], marker: Mapping[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": dict(marker)}


def _mark_last_block(message: dict[str, Any], marker: Mapping[str, Any]) -> None:
    """Put the cache marker on the last block that can carry one (in place)."""
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return
    if not isinstance(content, list):
        return
    for index in range(len(content) - 1, -1, -1):
        if content[index].get("type") not in _UNCACHEABLE:
            content[index] = _with_marker(content[index], marker)
            return
