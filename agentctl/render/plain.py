"""Non-TTY stderr: one stable, grep-friendly ASCII line per event, no cursor tricks, no colour."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from agentctl.errors import ClosedPipeError
from agentctl.render.base import write_or_stop
from agentctl.render.format import (
    checkpoint_text,
    denials_text,
    distinct_results_cleared,
    distinct_thinking_cleared,
    edited_turns,
    failures_text,
    fmt_cost,
    fmt_int,
    fmt_ratio,
    fmt_tools,
    most_spared,
    peak_prompt,
    ttl_split,
)
from agentctl.render.safe import visible
from agentctl.types import (
    ErrorEvent,
    Event,
    ResultEvent,
    StartEvent,
    Totals,
    TurnEvent,
)

RED = "\x1b[31m"
RESET = "\x1b[0m"


def format_start_line(event: StartEvent) -> str:
    return f"start  session={event.session} model={event.model} profile={event.profile}"


def format_turn_line(turn: TurnEvent) -> str:
    """`turn 3  end_turn  in=1,234 cache_read=5,000 ... out=210  cleared: ...  tools=...`."""
    usage = turn.usage
    tokens = (
        f"in={fmt_int(usage.input_tokens)} cache_read={fmt_int(usage.cache_read_input_tokens)} "
        f"cache_write={fmt_int(usage.cache_creation_input_tokens)} "
        f"out={fmt_int(usage.output_tokens)}"
    )
    cleared = (
        f"cleared: tool_uses={turn.cleared_tool_uses} thinking={turn.cleared_thinking_turns} "
        f"tokens={fmt_int(turn.cleared_input_tokens)}"
    )
    if usage.compactions:
        cleared += f" compactions={usage.compactions}"
    tools = fmt_tools(turn.every_tool_call, sep=",", times="*", denied="(denied)") or "-"
    mark = "  checkpoint=sent" if turn.checkpoint else ""
    return f"turn {turn.turn}  {turn.stop_reason}  {tokens}  {cleared}  tools={tools}{mark}"


def format_summary_lines(result: ResultEvent, turns: Sequence[TurnEvent]) -> list[str]:
    """The end-of-run block: same facts as the summary table, as key=value lines."""
    totals = result.totals
    usage = totals.usage
    peak, split = peak_prompt(turns), ttl_split(usage)
    peak_text = f" peak_prompt={fmt_int(peak.usage.prompt_tokens)}@turn{peak.turn}" if peak else ""
    lines = [
        f"summary  turns={result.turns} stop={result.stop_reason}",
        f"  tokens: in={fmt_int(usage.input_tokens)} "
        f"cache_read={fmt_int(usage.cache_read_input_tokens)} "
        f"cache_write={fmt_int(usage.cache_creation_input_tokens)} "
        + ("cache_write_5m={} cache_write_1h={} ".format(*split) if split else "")
        + f"out={fmt_int(usage.output_tokens)}",
        edits_line(totals, turns),
        f"  cache_hit_ratio={fmt_ratio(usage.cache_hit_ratio)}{peak_text} "
        f"cost={fmt_cost(totals.cost_usd)}"
        + (f" compactions={usage.compactions}" if usage.compactions else ""),
        f"  session={result.session}  see it again: agentctl sessions show {result.session}",
    ]
    if usage.web_search_requests or usage.web_fetch_requests:
        lines.insert(
            -1,
            f"  server_tools: web_search={usage.web_search_requests} (billed per search, in the"
            f" cost) web_fetch={usage.web_fetch_requests}",
        )
    checkpoint = checkpoint_text(turns)
    if checkpoint is not None:
        lines.insert(-1, f"  checkpoint: {checkpoint}")
    if totals.tool_failures:
        lines.append(
            f"  tool_failures={totals.tool_failures}: {failures_text(totals.tool_failures)}"
        )
    if totals.tool_denials:
        lines.append(f"  tool_denials={totals.tool_denials}: {denials_text(totals.tool_denials)}")
    return lines


def edits_line(totals: Totals, turns: Sequence[TurnEvent]) -> str:
    """Tokens spared summed over turns, and distinct blocks cleared (render.format)."""
    return (
        f"  edits: spared_tokens={fmt_int(totals.cleared_input_tokens)} "
        f"turns={edited_turns(turns)} max_per_turn={fmt_int(most_spared(turns))} "
        f"distinct_results_cleared={distinct_results_cleared(turns)} "
        f"distinct_thinking_cleared={distinct_thinking_cleared(turns)}"
    )


def format_error_line(event: ErrorEvent) -> str:
    return f"error ({event.kind}): {event.message}"


class PlainRenderer:
    """Writes plain lines to a stream; `quiet` keeps only error lines; `color` reddens them."""

    def __init__(self, stream: TextIO, *, quiet: bool = False, color: bool = False) -> None:
        self._stream = stream
        self._quiet = quiet
        self._color = color
        self._turns: list[TurnEvent] = []
        self._closed = False

    def handle(self, event: Event) -> None:
        if self._closed:
            return
        if isinstance(event, ErrorEvent):
            line = visible(format_error_line(event), keep="")
            self._write([f"{RED}{line}{RESET}" if self._color else line])
        elif isinstance(event, TurnEvent):
            self._turns.append(event)
            self._write_unless_quiet([format_turn_line(event)])
        elif isinstance(event, StartEvent):
            self._write_unless_quiet([format_start_line(event)])
        elif isinstance(event, ResultEvent):
            self._write_unless_quiet(format_summary_lines(event, self._turns))

    def close(self) -> None:
        self._closed = True

    def _write_unless_quiet(self, lines: list[str]) -> None:
        if not self._quiet:
            # The lines quote the model (tool names) and the server (stop reasons): a log
            # file shown later with `cat` must not carry their escape sequences either.
            self._write([visible(line, keep="") for line in lines])

    def _write(self, lines: list[str]) -> None:
        try:
            write_or_stop(self._stream, "".join(f"{line}\n" for line in lines), "stderr")
        except ClosedPipeError:
            self._closed = True
            raise
