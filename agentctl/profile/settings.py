"""Every profile key, defined once: typed, validated settings as frozen dataclasses, no I/O.

The TOML layout mirrors these classes one to one: top-level keys are `Profile` fields, each
table (`[thinking]`, `[context_editing.tool_uses]`, ...) is the dataclass of the same name.
Each field is made by `schema.setting` / `schema.table`: its default (the built-in profile
used when no profile file is found), its meaning and API field, and what a task's front
matter may do with it. docs/profile.md's key table, `profile init`'s comments, `profile
show`'s API column, the range checks and the trust check are all read from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentctl.context.edits import BETA_COMPACT, BETA_CONTEXT_MANAGEMENT
from agentctl.context.prices import Price, Pricing
from agentctl.profile.schema import setting, table

CacheTtl = Literal["5m", "1h"]
TriggerKind = Literal["input_tokens", "tool_uses"]
# "threshold": the compact_20260112 edit, the server compacts at its trigger. "on-demand": the
# run asks for a compaction (top-level `compaction`) once a prompt reached the trigger.
CompactionMode = Literal["threshold", "on-demand"]
# "server": one edit from the profile, the server decides each turn what to clear.
# "batched": the client steers it turn by turn (`context.batching.batched_edit`).
Strategy = Literal["server", "batched"]

DEFAULT_MODEL = "claude-sonnet-5"

_CLEAR = "edits[] clear_tool_uses_20250919"
_THINK = "edits[] clear_thinking_20251015"
_WEB_REACH = "a task file may not change where the web tools may go"


@dataclass(frozen=True)
class ThinkingSettings:
    """Extended thinking."""

    enabled: bool = setting(False, "Turn extended thinking on.", api='thinking.type = "enabled"')
    budget_tokens: int = setting(
        4096,
        "Thinking budget; the API wants >= 1024 and < max_tokens (not sent when adaptive).",
        api="thinking.budget_tokens",
    )
    adaptive: bool = setting(
        False,
        "With enabled: adaptive thinking, the model decides how much to think (no budget).",
        api='thinking.type = "adaptive"',
    )

    def request_field(self) -> dict[str, object] | None:
        """The request's `thinking` field, or None when thinking is off."""
        if not self.enabled:
            return None
        if self.adaptive:
            return {"type": "adaptive"}
        return {"type": "enabled", "budget_tokens": self.budget_tokens}


@dataclass(frozen=True)
class ClearToolUses:
    """`clear_tool_uses_20250919`. The defaults are agentctl's, not the API's (trigger 100,000,
    keep 3, no clear_at_least, cleared anew on every request): batched clearing from 20,000
    input tokens, keep 4, at least 8,000 per batch, measured to cut the benchmark's input
    tokens by 85.9% at 0.40x the cost of no editing under the default server model and both
    its variants (docs/bench.md). configs/api-defaults.toml sends the API's own."""

    enabled: bool = setting(True, "Send the clear_tool_uses_20250919 edit.", api=_CLEAR)
    trigger_kind: TriggerKind = setting(
        "input_tokens",
        'What the trigger counts: "input_tokens" or "tool_uses".',
        api="trigger.type",
    )
    trigger: int = setting(
        20_000, "Clearing starts once the prompt exceeds this.", api="trigger.value"
    )
    keep: int = setting(4, "Most recent tool uses left intact when clearing.", api="keep.value")
    clear_at_least: int = setting(
        8_000,
        "Skip a clearing that would free fewer input tokens (0 = not sent).",
        api="clear_at_least.value",
        zero=True,
    )
    exclude_tools: tuple[str, ...] = setting(
        (), "Tools whose uses and results are never cleared.", api="exclude_tools"
    )
    clear_tool_inputs: bool | tuple[str, ...] = setting(
        False,
        "Also clear tool_use inputs: true, or a list of tool names.",
        api="clear_tool_inputs",
    )
    strategy: Strategy = setting(
        "batched",
        '"batched" (default): agentctl steers the server\'s edit so clearings come in batches'
        ' (trigger = high-water mark) and the cache holds between them; "server": the edit'
        " is sent as written and the server clears anew each turn.",
    )
    low_water: int = setting(
        0,
        "Batched: a clearing brings the prompt down to at most this many input tokens"
        " (0 = as far as keep allows).",
        zero=True,
    )

    @property
    def input_trigger(self) -> int | None:
        """The prompt size (input tokens) at which clearing starts, when the edit is on and
        counts input tokens: what the turn table's "to trig" column measures against."""
        return self.trigger if self.enabled and self.trigger_kind == "input_tokens" else None

    def edit(self) -> dict[str, Any]:
        """The edit as written (unset optional fields omitted): what strategy "server" sends,
        and what batched clearing sends before its first clearing."""
        edit: dict[str, Any] = {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": self.trigger_kind, "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
        }
        if self.clear_at_least > 0:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least}
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if isinstance(self.clear_tool_inputs, tuple):
            edit["clear_tool_inputs"] = list(self.clear_tool_inputs)
        elif self.clear_tool_inputs:
            edit["clear_tool_inputs"] = True
        return edit


@dataclass(frozen=True)
class ClearThinking:
    """`clear_thinking_20251015`: keep the last N thinking turns, or "all". Needs thinking on."""

    enabled: bool = setting(
        False, "Send the clear_thinking_20251015 edit (listed first).", api=_THINK
    )
    keep: int | Literal["all"] = setting(
        1, 'Thinking turns kept: a count, or "all".', api="keep (thinking_turns / all)"
    )

    def edit(self) -> dict[str, Any]:
        keep: Any = "all" if self.keep == "all" else {"type": "thinking_turns", "value": self.keep}
        return {"type": "clear_thinking_20251015", "keep": keep}


@dataclass(frozen=True)
class Compaction:
    """`compact_20260112` (mode "threshold"): the server summarises the conversation once the
    prompt reaches `trigger` and continues from the summary. Mode "on-demand": no edit; the
    run sends a compaction request of its own (agentctl.agent.loop) once a response's prompt
    reached `trigger`. On by default at 150,000 tokens, three quarters of the standard 200k
    window: clearing keeps a long run's prompt small, but the tool calls and placeholders it
    leaves still grow with every turn, and compaction is what lets such a run go on past the
    window (docs/context.md, "Compaction")."""

    enabled: bool = setting(
        True,
        "Turn compaction on (threshold: the compact_20260112 edit, listed last, and its beta).",
        api="edits[] compact_20260112",
    )
    mode: CompactionMode = setting(
        "threshold",
        '"threshold": the server compacts at the trigger; "on-demand": once a response\'s'
        " prompt reached the trigger, the run sends a compaction request of its own (no edit;"
        " beta compact-2026-09-04).",
        api='edits[] compact_20260112 / compaction {"type": "summarize"}',
    )
    trigger: int = setting(
        150_000,
        "Compact once the prompt reaches this many input tokens (threshold: the API's"
        " minimum is 50000).",
        api="trigger.value (threshold)",
    )
    instructions: str = setting(
        "",
        'Replaces the server\'s summarisation prompt ("" = not sent: the default prompt).',
        api="instructions",
    )
    pause_after_compaction: bool = setting(
        False,
        'Threshold: stop after the compaction block (stop_reason "compaction"); the run'
        " resends at once.",
        api="pause_after_compaction",
    )

    @property
    def threshold(self) -> bool:
        """The compact_20260112 edit is sent (the API refuses on-demand compaction with it)."""
        return self.enabled and self.mode == "threshold"

    @property
    def on_demand(self) -> bool:
        return self.enabled and self.mode == "on-demand"

    def edit(self) -> dict[str, Any]:
        """The compact_20260112 edit; defaults the API has are still sent, so the request says
        what the profile says."""
        edit: dict[str, Any] = {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": self.trigger},
            "pause_after_compaction": self.pause_after_compaction,
        }
        if self.instructions:
            edit["instructions"] = self.instructions
        return edit


# The built-in wording of the save-before-clear notice (docs/context.md, "Checkpoint").
CHECKPOINT_TEXT = (
    "Context note from agentctl: this conversation is about to reach the point where older"
    " tool results are cleared from your context (only the most recent ones are kept). If"
    " anything in them is still needed for the task, write it to memory now (the memory"
    " tool); after the clearing you can only read it back from there."
)


@dataclass(frozen=True)
class Checkpoint:
    """Save-before-clear: once per run, the tool results the run sends before the first
    clearing of clear_tool_uses can happen carry a text block that tells the model to save
    to memory what it still needs (agentctl.agent.checkpoint)."""

    enabled: bool = setting(
        True,
        "Tell the model once, before the first clearing can happen, to save to memory what"
        " it still needs (needs the memory tool and an input_tokens trigger).",
        api="messages[] text block after the tool_result blocks",
    )
    text: str = setting(
        "",
        'The notice\'s wording ("" = the built-in one, docs/context.md).',
        api="messages[] text",
    )
    repeat: bool = setting(
        False,
        'Strategy "batched": tell it again before each later batch of clearing, not only the'
        " first (the server strategy clears on every request past the trigger: no effect).",
    )

    @property
    def wording(self) -> str:
        """The text sent: the profile's, else the built-in one."""
        return self.text.strip() or CHECKPOINT_TEXT


@dataclass(frozen=True)
class ContextEditing:
    """The server-side strategies; the API receives clear_thinking first when both are on."""

    tool_uses: ClearToolUses = table(
        ClearToolUses, "Clear old tool results once the prompt grows past a trigger.", api=_CLEAR
    )
    thinking: ClearThinking = table(
        ClearThinking, "Clear old thinking blocks (needs thinking.enabled).", api=_THINK
    )
    compaction: Compaction = table(
        Compaction,
        "Server-side compaction: summarise the conversation once the prompt reaches a trigger.",
        api="edits[] compact_20260112 + beta compact-2026-01-12",
    )
    checkpoint: Checkpoint = table(
        Checkpoint,
        "Save-before-clear: tell the model once to write to memory what it still needs"
        " before older tool results are cleared.",
    )
    # Read once per run into a `context.server_model.ServerModel` (context.calibration).
    server_model: str = setting(
        "",
        "The server rules the offline emulator and simulate/tune play (trigger basis, which"
        " results count toward keep, placeholder, thinking keep): default, unedited-basis or"
        ' placeholder-line with overrides, e.g. "default,trigger_basis=unedited" (the old'
        " names unedited, edited, unedited-large, edited-large still work);"
        ' "" = the calibration from `agentctl probe`, else default. Never sent.',
    )

    def betas(self) -> list[str]:
        """The beta flags these settings need (context management always: the memory tool
        rides on it)."""
        return [BETA_CONTEXT_MANAGEMENT, *([BETA_COMPACT] if self.compaction.threshold else [])]


@dataclass(frozen=True)
class CacheSettings:
    """Prompt caching: breakpoints on the stable prefix (tools, system, recent turns)."""

    enabled: bool = setting(
        True, "Mark the stable prefix with cache breakpoints.", api="cache_control"
    )
    ttl: CacheTtl = setting(
        "5m", '"5m" (writes cost 1.25x input) or "1h" (2x).', api="cache_control.ttl"
    )


@dataclass(frozen=True)
class MemorySettings:
    """The directory that the model sees as `/memories`, and the store's limits (0 = none:
    agentctl/memory/limits.py)."""

    root: Path = setting(
        Path("memory"),
        "Directory the model sees as /memories; if left out, ./memory in the current directory.",
    )
    max_file_bytes: int = setting(
        1_000_000, "Largest single memory file, bytes (0 = no limit).", task="lower", zero=True
    )
    max_total_bytes: int = setting(
        50_000_000,
        "Largest total size of the memory directory, bytes (0 = no limit).",
        task="lower",
        zero=True,
    )
    max_files: int = setting(
        10_000, "Most files the memory directory may hold (0 = no limit).", task="lower", zero=True
    )
    max_view_chars: int = setting(16_000, "Longest `view` result returned to the model.")
    history_max_bytes: int = setting(
        100_000_000,
        "Size past which the memory history (journal and kept contents) is pruned, oldest"
        " first, bytes (0 = no bound).",
        task="lower",
        zero=True,
    )
    review: Literal["off", "queue"] = setting(
        "off",
        '"queue": a run\'s memory writes wait in a pending layer (the run reads them back)'
        ' until `agentctl memory review --apply`; "off": written at once.',
        task="tighten",
        refusal="a task file may not turn off the review of memory writes",
    )


@dataclass(frozen=True)
class ToolSettings:
    """Which tools the model is offered; the workspace tools are read-only and confined."""

    memory: bool = setting(True, "Offer the memory tool.", api='tools[] memory_20250818 "memory"')
    workspace: bool = setting(True, "Offer the read-only workspace tools.", api="tools[] (custom)")
    workspace_root: Path = setting(
        Path("."), "Directory the workspace tools may read (relative: to this file)."
    )
    max_result_chars: int = setting(20_000, "Longest client tool result sent back to the model.")


@dataclass(frozen=True)
class UserLocation:
    """Where the user is, roughly, for more relevant web search results (empty: not sent)."""

    city: str = setting("", "City name.", api="user_location.city")
    region: str = setting("", "Region name.", api="user_location.region")
    country: str = setting(
        "", 'Two-letter ISO country code, e.g. "US".', api="user_location.country"
    )
    timezone: str = setting(
        "", 'IANA time zone, e.g. "America/New_York".', api="user_location.timezone"
    )


def _reach(meaning: str, api: str) -> Any:
    """A domain list of a web tool: where it may go, which a task may not change."""
    return setting((), meaning, api=api, task="refuse", refusal=_WEB_REACH)


@dataclass(frozen=True)
class WebSearchSettings:
    """The server-side web search tool; `max_uses = 0` leaves the API's default (no limit)."""

    enabled: bool = setting(
        False, "Offer the web search tool.", api="tools[] web_search_*", task="off"
    )
    max_uses: int = setting(
        0, "Most searches per request (0 = not sent).", api="max_uses", task="lower", zero=True
    )
    allowed_domains: tuple[str, ...] = _reach(
        "Search only these domains (not with blocked_domains).", "allowed_domains"
    )
    blocked_domains: tuple[str, ...] = _reach("Never search these domains.", "blocked_domains")
    user_location: UserLocation = table(
        UserLocation,
        "Rough user location for more relevant results (empty: not sent).",
        api="user_location",
        task="refuse",
        refusal=_WEB_REACH,
    )


@dataclass(frozen=True)
class WebFetchSettings:
    """The server-side web fetch tool; 0 for a count leaves the API's default."""

    enabled: bool = setting(
        False, "Offer the web fetch tool.", api="tools[] web_fetch_*", task="off"
    )
    max_uses: int = setting(
        0, "Most fetches per request (0 = not sent).", api="max_uses", task="lower", zero=True
    )
    allowed_domains: tuple[str, ...] = _reach(
        "Fetch only from these domains (not with blocked_domains).", "allowed_domains"
    )
    blocked_domains: tuple[str, ...] = _reach("Never fetch from these domains.", "blocked_domains")
    citations: bool = setting(
        False, "Let the model cite fetched documents.", api="citations.enabled"
    )
    max_content_tokens: int = setting(
        0,
        "Cut fetched documents at about this many tokens (0 = not sent).",
        api="max_content_tokens",
        zero=True,
    )


@dataclass(frozen=True)
class CodeExecutionSettings:
    """The server-side code execution tool (Anthropic's sandbox, billed by container time)."""

    enabled: bool = setting(
        False, "Offer the code execution tool.", api="tools[] code_execution_*", task="off"
    )


@dataclass(frozen=True)
class ServerToolSettings:
    """Tools the API runs itself; their versions are the newest the installed SDK knows."""

    web_search: WebSearchSettings = table(
        WebSearchSettings, "Web search, billed per search.", api="tools[] web_search_*"
    )
    web_fetch: WebFetchSettings = table(
        WebFetchSettings,
        "Web fetch: no charge beyond the tokens it adds.",
        api="tools[] web_fetch_*",
    )
    code_execution: CodeExecutionSettings = table(
        CodeExecutionSettings,
        "Code execution in Anthropic's sandbox, billed by container time.",
        api="tools[] code_execution_*",
    )


ApprovalDefault = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class ApprovalSettings:
    """Which tool calls run, which need the user's yes, which are refused (tools/approval.py).

    Patterns are shell-style globs over tool names (`read_file`, `mcp__git__*`); `memory`
    matches every memory command, `memory:delete` one. deny wins over ask, ask over allow,
    allow over `default`."""

    allow: tuple[str, ...] = setting(
        (), "Tool name patterns that run without asking.", task="stricter"
    )
    ask: tuple[str, ...] = setting(
        (),
        "Tool name patterns that need the user's yes (no terminal, no callback: denied).",
        task="stricter",
    )
    deny: tuple[str, ...] = setting(
        (), "Tool name patterns whose calls are refused (the model gets an error).", task="stricter"
    )
    default: ApprovalDefault = setting(
        "allow", 'What a call no pattern matches gets: "allow", "ask" or "deny".', task="stricter"
    )


@dataclass(frozen=True)
class LimitSettings:
    """Budgets that stop a run with exit code 3; 0 means no limit."""

    max_input_tokens: int = setting(
        0,
        "Stop once a run's prompt tokens (input + cache, all turns) reach this (0 = no limit).",
        task="lower",
        zero=True,
    )
    max_usd: float = setting(
        0.0, "Estimated-cost budget of a run in USD (0 = no limit).", task="lower"
    )


@dataclass(frozen=True)
class OutputSettings:
    """What form the final answer takes."""

    schema: Path | None = setting(
        None,
        "JSON Schema file the final answer must match (structured output; relative: to this"
        " file); the answer is parsed and checked against it. Left out: free text.",
        api="output_config.format",
    )


@dataclass(frozen=True)
class ApiSettings:
    """How to reach the Messages API."""

    base_url: str = setting("", "API URL; empty means $ANTHROPIC_BASE_URL or the SDK default.")
    timeout_s: float = setting(
        600.0,
        "Longest wait in seconds for the server to connect or send anything (per read).",
        zero=False,
    )
    deadline_s: float = setting(
        600.0,
        "Longest time in seconds one request may take in total, streamed response included.",
        zero=False,
    )
    max_retries: int = setting(
        4, "Retries on 429, 5xx and connection errors (0 = none).", zero=True
    )
    threads: bool = setting(
        False,
        "Hold the conversation on the server (message threads): each turn sends only its "
        "new messages; off, or where the server refuses them, the whole history.",
        api="thread (beta message-threads-2026-08-12)",
    )


@dataclass(frozen=True)
class McpServer:
    """One `[mcp.servers.NAME]`: a stdio server (`command`) or a streamable HTTP one (`url`),
    its tool filter and call timeout."""

    command: tuple[str, ...] = setting(
        (), 'Program and arguments of a stdio server, e.g. ["python", "server.py"].'
    )
    env: dict[str, str] = setting(
        meaning="Environment variables added for the server process.", factory=dict
    )
    cwd: Path = setting(
        Path("."),
        "Working directory of the server (relative: to this file; default: its folder).",
    )
    url: str = setting("", "URL of a streamable HTTP server (instead of command).")
    headers: dict[str, str] = setting(
        meaning="HTTP headers sent to a url server, e.g. Authorization.", factory=dict
    )
    allow: tuple[str, ...] = setting((), "Offer only these tools of the server (empty: all).")
    deny: tuple[str, ...] = setting((), "Never offer these tools of the server.")
    timeout_s: float = setting(
        60.0, "Longest wait in seconds for one tool call (for the start: at least 30)."
    )
    max_media_bytes: int = setting(
        3_750_000,
        "Largest image or PDF of a tool result sent to the model, bytes decoded (larger: a"
        " text note; 3.75 MB is 5 MB as base64, the API's limit).",
    )


@dataclass(frozen=True)
class McpSettings:
    """MCP servers whose tools are offered as `mcp__NAME__TOOL`."""

    servers: dict[str, McpServer] = setting(
        meaning="One [mcp.servers.NAME] table per server (NAME: letters, digits, _ -).",
        factory=dict,
    )


@dataclass(frozen=True)
class PriceOverride(Price):
    """A `[prices."MODEL"]` table: the same five USD-per-million figures as the built-in
    table, all required."""

    input: float = setting(meaning="Uncached input tokens.")
    output: float = setting(meaning="Output tokens (thinking included).")
    cache_write_5m: float = setting(meaning="Cache writes with the 5-minute TTL.")
    cache_write_1h: float = setting(meaning="Cache writes with the 1-hour TTL.")
    cache_read: float = setting(meaning="Cache reads.")


@dataclass(frozen=True)
class Profile:
    """Everything a run needs to know, resolved (paths absolute, defaults filled in)."""

    model: str = setting(DEFAULT_MODEL, "Model id sent with every request.", api="model")
    max_tokens: int = setting(
        8192, "Output cap per response; must exceed thinking.budget_tokens.", api="max_tokens"
    )
    max_turns: int = setting(50, "Stop the run (exit 3) after this many model turns.", task="lower")
    system: str = setting("", "System prompt text (empty: no system prompt is sent).", api="system")
    betas: tuple[str, ...] = setting(
        (),
        'Beta flags agentctl does not know yet, e.g. ["context-1m-2025-08-07"]: sent after'
        " agentctl's own in every request, duplicates dropped.",
        api="anthropic-beta header",
        task="refuse",
        refusal="a task file may not add API betas (they change what requests do and cost)",
    )
    thinking: ThinkingSettings = table(ThinkingSettings, "Extended thinking.")
    context_editing: ContextEditing = table(
        ContextEditing, "Server-side context editing (beta context-management-2025-06-27)."
    )
    cache: CacheSettings = table(CacheSettings, "Prompt caching.")
    memory: MemorySettings = table(MemorySettings, "The memory store behind the memory tool.")
    tools: ToolSettings = table(ToolSettings, "Which tools the model is offered.")
    server_tools: ServerToolSettings = table(
        ServerToolSettings,
        "Tools the API runs itself (web search, web fetch, code execution); the tool versions"
        " are the newest the installed anthropic SDK knows.",
    )
    limits: LimitSettings = table(LimitSettings, "Budgets that stop a run with exit code 3.")
    output: OutputSettings = table(OutputSettings, "The form of the final answer.")
    approval: ApprovalSettings = table(
        ApprovalSettings, "Which tool calls run, need the user's yes, or are refused."
    )
    api: ApiSettings = table(
        ApiSettings,
        "How to reach the Messages API.",
        task="refuse",
        refusal="a task file may not change where requests and the API key go, or how long"
        " they run",
    )
    mcp: McpSettings = table(
        McpSettings,
        "MCP servers whose tools the model is offered as mcp__NAME__TOOL.",
        task="refuse",
        refusal="a task file may not add or change MCP servers (they start programs)",
    )
    prices: dict[str, PriceOverride] = setting(
        meaning='Price overrides: one [prices."MODEL"] table per model, USD per Mtok.',
        factory=dict,
        task="refuse",
        refusal="a task file may not change the prices that limits.max_usd relies on",
    )
    # Where the profile came from ("<built-in>" for the defaults); used in messages.
    source: str = "<built-in>"

    def pricing(self, model: str | None = None) -> Pricing:
        """What tokens of `model` (default: this profile's) cost under this profile's price
        overrides and cache TTL: the one way agentctl prices usage."""
        return Pricing.of(model or self.model, self.prices, self.cache.ttl)
