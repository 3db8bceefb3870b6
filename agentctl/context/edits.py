"""The profile's context-editing settings and the exact `context_management` JSON they become."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentctl.context.batching import Marks, boundary, has_compaction
from agentctl.context.engine import apply_context_edits
from agentctl.context.pairs import candidates, freed_tokens, tool_pairs
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, ServerModel, parse_server_model

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"  # the compact_20260112 edit

TriggerKind = Literal["input_tokens", "tool_uses"]
# "threshold": the compact_20260112 edit, the server compacts at its trigger. "on-demand": the
# run asks for a compaction (top-level `compaction`) once a prompt reached the trigger.
CompactionMode = Literal["threshold", "on-demand"]
# "server": one edit from the profile, the server decides each turn what to clear.
# "batched": the client steers it turn by turn (see `batched_edit`).
Strategy = Literal["server", "batched"]


@dataclass(frozen=True)
class ClearToolUses:
    """`clear_tool_uses_20250919`. `clear_at_least = 0` means "not set" (omitted from the JSON).

    The defaults are agentctl's, not the API's (trigger 100,000, keep 3, no clear_at_least,
    cleared anew on every request): batched clearing from 20,000 input tokens, keep 4, at
    least 8,000 per batch, measured to cut the benchmark's input tokens by 85.9% at 0.60x the
    cost of no editing under the default server model and both its variants (docs/bench.md).
    configs/api-defaults.toml sends the API's own.
    """

    enabled: bool = True
    trigger_kind: TriggerKind = "input_tokens"
    trigger: int = 20_000
    keep: int = 4
    clear_at_least: int = 8_000
    exclude_tools: tuple[str, ...] = ()
    # False / True, or the names of the tools whose tool_use inputs are cleared too.
    clear_tool_inputs: bool | tuple[str, ...] = False
    strategy: Strategy = "batched"
    # batched only: a clearing brings the prompt down to at most this many input tokens
    # (`trigger` is then the high-water mark that starts one); 0: as far as `keep` allows.
    low_water: int = 0


@dataclass(frozen=True)
class ClearThinking:
    """`clear_thinking_20251015`: keep the last N thinking turns, or "all". Needs thinking on."""

    enabled: bool = False
    keep: int | Literal["all"] = 1


@dataclass(frozen=True)
class Compaction:
    """`compact_20260112` (mode "threshold"): the server summarises the conversation once the
    prompt reaches `trigger` input tokens (the API's minimum is 50,000) and continues from the
    summary. Mode "on-demand": no edit; the run sends a compaction request of its own
    (agentctl.agent.loop) once a response's prompt reached `trigger`."""

    enabled: bool = False
    mode: CompactionMode = "threshold"
    trigger: int = 150_000
    # Replaces the server's default summarisation prompt ("" = not sent, the default prompt).
    instructions: str = ""
    # Stop after the compaction block (stop_reason "compaction"); the run resends at once.
    pause_after_compaction: bool = False

    @property
    def threshold(self) -> bool:
        """The compact_20260112 edit is sent (the API refuses on-demand compaction with it)."""
        return self.enabled and self.mode == "threshold"

    @property
    def on_demand(self) -> bool:
        return self.enabled and self.mode == "on-demand"


@dataclass(frozen=True)
class ContextEditing:
    """Both server-side strategies; the API receives clear_thinking first when both are on."""

    tool_uses: ClearToolUses = field(default_factory=ClearToolUses)
    thinking: ClearThinking = field(default_factory=ClearThinking)
    compaction: Compaction = field(default_factory=Compaction)
    # The server rules the recordings leave open (context.server_model: trigger basis, the
    # small-result line, placeholder, clear_thinking's default keep), as a spec: a model name
    # with optional overrides ("default,trigger_basis=unedited"). "" = the calibration file
    # that `agentctl probe` wrote, else the default. Never sent to the API: the offline
    # emulator and simulate/tune play the server this way (docs/context.md, "Server rules").
    server_model: str = ""

    @property
    def server(self) -> ServerModel:
        """The spec's model ("" = the default; the calibration is applied by callers
        that read files: `context.calibration.resolve_server_model`)."""
        return parse_server_model(self.server_model) if self.server_model else DEFAULT_SERVER_MODEL


def clear_tool_uses_edit(s: ClearToolUses) -> dict[str, Any]:
    """One `clear_tool_uses_20250919` edit; unset optional fields are omitted. For the batched
    strategy, the edit of a request before its first clearing (`batched_edit`)."""
    edit: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": s.trigger_kind, "value": s.trigger},
        "keep": {"type": "tool_uses", "value": s.keep},
    }
    if s.clear_at_least > 0:
        edit["clear_at_least"] = {"type": "input_tokens", "value": s.clear_at_least}
    if s.exclude_tools:
        edit["exclude_tools"] = list(s.exclude_tools)
    if isinstance(s.clear_tool_inputs, tuple):
        edit["clear_tool_inputs"] = list(s.clear_tool_inputs)
    elif s.clear_tool_inputs:
        edit["clear_tool_inputs"] = True
    return edit


def clear_thinking_edit(s: ClearThinking) -> dict[str, Any]:
    """One `clear_thinking_20251015` edit."""
    keep: Any = "all" if s.keep == "all" else {"type": "thinking_turns", "value": s.keep}
    return {"type": "clear_thinking_20251015", "keep": keep}


def compact_edit(s: Compaction) -> dict[str, Any]:
    """One `compact_20260112` edit; defaults the API has are still sent, so the request says
    what the profile says."""
    edit: dict[str, Any] = {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": s.trigger},
        "pause_after_compaction": s.pause_after_compaction,
    }
    if s.instructions:
        edit["instructions"] = s.instructions
    return edit


def betas_for(ce: ContextEditing) -> list[str]:
    """The beta flags the profile's context management needs (context management always:
    the memory tool rides on it)."""
    return [BETA_CONTEXT_MANAGEMENT, *([BETA_COMPACT] if ce.compaction.threshold else [])]


def batched_edit(
    s: ClearToolUses,
    request: Mapping[str, Any],
    server: ServerModel = DEFAULT_SERVER_MODEL,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
) -> dict[str, Any]:
    """The edit that makes the server clear exactly where batched clearing puts the boundary.

    The boundary (how many of the oldest clearable tool uses stand cleared) moves only when
    the prompt the model reads, as edited so far, exceeds `trigger`, in one step, far enough
    to bring it to `low_water` (never into the last `keep`); the walk over the history is
    `batching.boundary` (`measured`: the real prompt sizes of earlier responses, by message
    count, which it prefers to its estimate; `unedited`: figures before clearing, as
    `boundary` takes them). Before the first clearing the request carries
    the profile's edit (the server cannot fire before the client would). After it: trigger
    `tool_uses` > B and keep = clearable - B, so the server clears the same B oldest uses on
    every request until the next move, whichever way it measures a token trigger, and every
    request reads the earlier prompt from the cache.

    The server counts and clears on the whole history, compaction blocks or not, while the
    model reads only from the last block on: the walk measures the model's view, and once a
    history holds a compaction block a request before the first clearing carries a
    `tool_uses` trigger at the number of tool uses in it (never exceeded), since the whole
    history would pass a token trigger the model's view is far from.
    """
    edit = clear_tool_uses_edit(s)
    messages = list(request.get("messages") or [])
    clearable = candidates(tool_pairs(messages), edit, server)
    freed = [freed_tokens(p, edit, server.placeholder) for p in clearable]
    marks = Marks(s.trigger, s.low_water, s.keep, s.clear_at_least, view=True)
    cleared = boundary(request, clearable, freed, marks, measured, unedited)
    if cleared == 0:
        if any(has_compaction(m) for m in messages):
            edit.pop("clear_at_least", None)
            edit["trigger"] = {"type": "tool_uses", "value": _tool_uses_in(messages)}
        return edit
    edit.pop("clear_at_least", None)
    edit["trigger"] = {"type": "tool_uses", "value": cleared}
    edit["keep"] = {"type": "tool_uses", "value": len(clearable) - cleared}
    return edit


def _tool_uses_in(messages: list[Any]) -> int:
    return len(tool_pairs(messages))


def build_context_management(
    ce: ContextEditing,
    request: Mapping[str, Any] | None = None,
    measured: Mapping[int, int] | None = None,
    unedited: bool = False,
) -> dict[str, Any] | None:
    """The `context_management` field of `request` (of a first request when None), or None
    when no strategy is on. `measured`: for batched clearing, the prompt sizes the server
    reported for earlier requests of this history, by their number of messages (`usage`
    input + cache reads + cache writes), which steering prefers to its estimate
    (`unedited`: those sizes plus the tool-use tokens each response reports cleared).

    clear_thinking must come first when both are used (the API rejects the other order).
    """
    edits: list[dict[str, Any]] = []
    if ce.thinking.enabled:
        edits.append(clear_thinking_edit(ce.thinking))
    if ce.tool_uses.enabled:
        edits.append(_tool_uses_edit(ce, request, edits, measured, unedited))
    if ce.compaction.threshold:  # last: it measures the prompt the other edits leave (ours)
        edits.append(compact_edit(ce.compaction))
    return {"edits": edits} if edits else None


def _tool_uses_edit(
    ce: ContextEditing,
    request: Mapping[str, Any] | None,
    before: list[dict[str, Any]],
    measured: Mapping[int, int] | None,
    unedited: bool = False,
) -> dict[str, Any]:
    if ce.tool_uses.strategy == "server" or request is None:
        return clear_tool_uses_edit(ce.tool_uses)
    server = ce.server
    if before:  # measure the prompt as the thinking edit leaves it
        request = apply_context_edits(request, before, server=server).request
    return batched_edit(ce.tool_uses, request, server, measured, unedited)


def trigger_from(context_management: dict[str, Any] | None) -> int | None:
    """The clear_tool_uses input-token trigger of a request's context_management, if it has one."""
    edits = (context_management or {}).get("edits") or []
    for edit in edits:
        if not (isinstance(edit, dict) and str(edit.get("type")).startswith("clear_tool_uses")):
            continue
        trigger = edit.get("trigger")
        if trigger is None:
            return 100_000  # the API's documented default trigger
        if isinstance(trigger, dict) and trigger.get("type") == "input_tokens":
            value = trigger.get("value")
            return value if isinstance(value, int) else None
    return None
