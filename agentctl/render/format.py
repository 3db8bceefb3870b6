"""Pure text helpers shared by the table, plain and live renderers: numbers, tools, ratios, cost."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TextIO

if TYPE_CHECKING:
    from agentctl.types import ProgressEvent, ToolCall, TurnEvent, Usage

DASH = "–"


def fmt_int(value: int) -> str:
    """Thousands separators: 12345 -> '12,345'."""
    return f"{value:,}"


def fmt_compact(value: int) -> str:
    """At most 5 characters (6 negative): 999, 1.2k, 18.0k, 180k, 2.5M, 1.0G."""
    size = abs(value)
    if size < 1000:
        return str(value)
    for scale, unit in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        if size < 99.95 * scale:
            return f"{value / scale:.1f}{unit}"
        if size < 999.5 * scale:
            return f"{value / scale:.0f}{unit}"
    return f"{value / 1e12:.1f}T"


def tool_label(call: ToolCall) -> str:
    """`memory:view` for memory commands (what the model did), the tool name otherwise."""
    if call.name == "memory":
        command = call.input.get("command")
        return f"memory:{command}" if isinstance(command, str) and command else "memory"
    return call.name


def tool_groups(calls: Iterable[ToolCall]) -> list[tuple[str, int, bool, bool]]:
    """(label, count, any_failed, any_denied) in first-seen order, so repeated calls collapse
    to one entry; a call the approval rules denied counts as denied, not as failed."""
    groups: dict[str, list[Any]] = {}
    for call in calls:
        entry = groups.setdefault(tool_label(call), [0, False, False])
        entry[0] += 1
        entry[1] = entry[1] or (call.is_error and not call.denied)
        entry[2] = entry[2] or call.denied
    return [
        (label, int(n), bool(failed), bool(denied)) for label, (n, failed, denied) in groups.items()
    ]


DENIED_MARK = "⊘"


def fmt_tools(
    calls: Sequence[ToolCall], *, sep: str = ", ", times: str = "×", denied: str = DENIED_MARK
) -> str:
    """`memory:view, read_file×2`; a `!` marks a group where at least one call failed, `⊘`
    (`denied`) one where the user's approval rules refused a call."""
    parts = []
    for label, count, failed, refused in tool_groups(calls):
        suffix = f"{times}{count}" if count > 1 else ""
        parts.append(f"{label}{suffix}{'!' if failed else ''}{denied if refused else ''}")
    return sep.join(parts)


# What context editing did over a run, each figure a function of the run's turns (the
# tokens spared, summed over turns, are `Totals.cleared_input_tokens`). The server clears
# from the full history on every request, so a result cleared at turn 14 is cleared again
# (and counted again in `applied_edits`) at turns 15, 16, ...: summing per-turn counts
# gives tool-use *clearings*, not tool results. Clearing is oldest-first and a cleared
# block stays cleared, so the largest per-turn count is the number of distinct blocks.


def edited_turns(turns: Sequence[TurnEvent]) -> int:
    """Turns where an edit spared prompt tokens."""
    return sum(1 for turn in turns if turn.cleared_input_tokens)


def most_spared(turns: Sequence[TurnEvent]) -> int:
    """The most prompt tokens spared in one turn."""
    return max((turn.cleared_input_tokens for turn in turns), default=0)


def distinct_results_cleared(turns: Sequence[TurnEvent]) -> int:
    """Distinct tool results ever cleared."""
    return max((turn.cleared_tool_uses for turn in turns), default=0)


def distinct_thinking_cleared(turns: Sequence[TurnEvent]) -> int:
    """Distinct thinking turns ever cleared."""
    return max((turn.cleared_thinking_turns for turn in turns), default=0)


def ttl_split(usage: Usage) -> tuple[str, str] | None:
    """The cache writes with the 5-minute and the 1-hour TTL (priced apart), formatted, when
    some had the 1-hour one: without, every write was a 5-minute one (the total says it)."""
    if not usage.ephemeral_1h_input_tokens:
        return None
    return fmt_int(usage.ephemeral_5m_input_tokens), fmt_int(usage.ephemeral_1h_input_tokens)


def fmt_ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.1%}"


def cost_known(cost: float | None) -> bool:
    """The loop reports an unknown price as None, NaN or a negative number; all mean 'n/a'."""
    return cost is not None and math.isfinite(cost) and cost >= 0


def fmt_cost(cost: float | None) -> str:
    """US dollars with enough digits for cheap runs: $0.0042, $1.23."""
    if cost is None or not cost_known(cost):
        return "n/a"
    return f"${cost:.4f}" if cost < 1 else f"${cost:,.2f}"


def fmt_usd(cost: float | None, *, signed: bool = False) -> str:
    """US dollars to 4 places at any size (costs in a column line up), `?` when unknown;
    `signed`: a `+` before a gain too."""
    if cost is None:
        return "?"
    sign = "+" if signed and cost >= 0 else "-" if cost < 0 else ""
    return f"{sign}${abs(cost):.4f}"


def fmt_progress(event: ProgressEvent) -> str:
    """The status line while a turn streams: `turn 7 · thinking… 1.2k chars`."""
    chars = f"{fmt_compact(event.chars)} chars"
    if event.kind == "thinking":
        what = f"thinking… {chars}"
    elif event.kind == "text":
        what = f"writing text… {chars}"
    elif event.kind == "tool_progress":
        what = f"{event.tool_name}: {event.message}"
    else:
        what = f"tool input: {event.tool_name or '?'} ({chars})"
    return f"turn {event.turn} · {what}"


def fmt_elapsed(seconds: float) -> str:
    """`7s`, `1m05s`: how long the current turn has been running."""
    whole = max(int(seconds), 0)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60:02d}s"


def color_system() -> Literal["auto"] | None:
    """The `color_system` of every terminal Console: None under NO_COLOR (any non-empty
    value), so no style code at all (bold, dim, colour) reaches the terminal; else "auto"."""
    return None if os.environ.get("NO_COLOR") else "auto"


def isatty(stream: TextIO) -> bool:
    """`stream.isatty()`, False for closed streams and file-likes without the method."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def fmt_waiting(turn: int) -> str:
    return f"turn {turn} · waiting for the model…"


def peak_prompt(turns: Sequence[TurnEvent]) -> TurnEvent | None:
    """The turn whose prompt (input + cache read + cache write) was largest."""
    return max(turns, key=lambda t: t.usage.prompt_tokens, default=None)


CHECKPOINT_MARK = "+ckpt"  # tools-cell marker of the turn whose results carried the notice
CHECKPOINT_LEGEND = (
    f"{CHECKPOINT_MARK}: that turn's tool results carried the save-before-clear notice (sent"
    " before a clearing could happen: docs/context.md)"
)


def checkpoint_turns(turns: Sequence[TurnEvent]) -> list[int]:
    """The turns whose tool results carried the save-before-clear notice."""
    return [t.turn for t in turns if t.checkpoint]


def checkpoint_text(turns: Sequence[TurnEvent]) -> str | None:
    """The summary's checkpoint line, None when no notice was sent."""
    sent = checkpoint_turns(turns)
    if not sent:
        return None
    if len(sent) == 1:
        return f"notice sent once, with turn {sent[0]}'s tool results (read in turn {sent[0] + 1})"
    listed = ", ".join(str(n) for n in sent)
    return f"notice sent {len(sent)} times, with the tool results of turns {listed}"


def denials_text(count: int) -> str:
    """What `tool_denials` means, for the summary."""
    calls = "call" if count == 1 else "calls"
    return f"{count} tool {calls} refused by the approval rules or at the prompt"


def failures_text(count: int) -> str:
    """What `tool_failures` means, for the summary: writes the model could not make."""
    calls = "call" if count == 1 else "calls"
    return (
        f"{count} tool {calls} failed for a reason that is not the model's "
        "(a full disk, an unwritable memory root): notes may be missing"
    )
