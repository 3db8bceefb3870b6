"""Which server rules the probe's responses fit: each candidate's prediction against what came back.

The predictions come from the shared engine (`apply_context_edits`) on the same requests, in
estimator units; only the counts (`cleared_tool_uses`, `cleared_thinking_turns`) are compared
(token figures differ with the server's tokenizer). Each rule is settled by its own steps:
- the small-result line (`min_result_tokens`) by "ladder": the candidates are "placeholder"
  and the ladder's sizes (0: every result counts); the first whose prediction matches names
  the smallest size that counts;
- the trigger basis by the "basis-*" steps, between the two bases at that line;
- the placeholder is the model's quote in "quote";
- clear_thinking's default keep by "think-*" ("by-model" when the docs' value for the probed
  model fits, else 1, 2, 3 or "all");
- whether a cleared prompt is read back from the cache by "ladder-again" (reported; no setting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    PRESETS,
    TRIGGER_BASES,
    ResultLine,
    ServerModel,
    ThinkingKeep,
    TriggerBasis,
)
from agentctl.probe.steps import LADDER, Step

THINKING_KEEPS: tuple[ThinkingKeep, ...] = ("by-model", 1, 2, 3, "all")
# A request right after a clearing reads back at least this share of the cleared prompt.
CACHE_SHARE = 0.9


@dataclass(frozen=True)
class Observed:
    """One probe response: what was cleared and what the cache did."""

    step: str
    cleared_tool_uses: int | None  # None: no applied_edits entry for clear_tool_uses
    cleared_input_tokens: int
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    text: str
    cost_usd: float
    cleared_thinking_turns: int | None = None  # None: no clear_thinking entry

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Finding:
    """One rule as the probe found it: settled or not, by which requests, in words."""

    rule: str
    settled: bool
    steps: tuple[str, ...]
    text: str

    def line(self) -> str:
        state = "settled" if self.settled else "not settled"
        return f"{self.rule}: {self.text} ({state}; {', '.join(self.steps)})"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "settled": self.settled, "steps": list(self.steps),
                "text": self.text}  # fmt: skip


@dataclass(frozen=True)
class Identification:
    """Each rule as settled by the probe (None: the responses fit no single candidate)."""

    trigger_basis: TriggerBasis | None
    min_result_tokens: ResultLine | None
    placeholder: str | None
    expected: dict[str, dict[str, int | None]]  # candidate -> step -> predicted clears
    thinking_keep: ThinkingKeep | None = "by-model"
    cache_after_clearing: bool | None = None  # a cleared prompt read back from the cache
    findings: tuple[Finding, ...] = ()

    @property
    def model(self) -> ServerModel | None:
        """The identified model (a preset's name when it matches one in full), or None."""
        if (
            self.trigger_basis is None
            or self.min_result_tokens is None
            or not self.placeholder
            or self.thinking_keep is None
        ):
            return None
        found = replace(
            DEFAULT_SERVER_MODEL,
            name="probed",
            trigger_basis=self.trigger_basis,
            min_result_tokens=self.min_result_tokens,
            placeholder=self.placeholder,
            thinking_keep=self.thinking_keep,
        )
        for preset in PRESETS.values():
            if replace(preset, name="probed") == found:
                return preset
        return found

    def to_json(self) -> dict[str, Any]:
        model = self.model
        return {
            "trigger_basis": self.trigger_basis,
            "min_result_tokens": self.min_result_tokens,
            "placeholder": self.placeholder,
            "thinking_keep": self.thinking_keep,
            "cache_after_clearing": self.cache_after_clearing,
            "server_model": None if model is None else model.to_json(),
            "findings": [f.to_json() for f in self.findings],
            "expected": self.expected,
        }


K = TypeVar("K")


def _cleared(applied: Sequence[Mapping[str, Any]], key: str) -> int | None:
    counts = [int(e[key]) for e in applied if key in e]
    return counts[0] if counts else None


def predict(step: Step, server: ServerModel, key: str = "cleared_tool_uses") -> int | None:
    """The count (`key` of applied_edits) the server model predicts for this step (None:
    nothing cleared)."""
    body = {k: v for k, v in step.request.items() if k != "betas"}
    edits = (body.get("context_management") or {}).get("edits") or []
    return _cleared(apply_context_edits(body, edits, server=server).applied_edits, key)


def _named(steps: Sequence[Step], prefix: str) -> list[Step]:
    return [s for s in steps if s.name == prefix or s.name.startswith(prefix + "-")]


def identify(steps: Sequence[Step], observed: Mapping[str, Observed]) -> Identification:
    """Settle each rule from the observed responses of `steps` (as sent, in estimator units)."""
    ladder = [s for s in steps if s.name == "ladder"]
    basis_steps = _named(steps, "basis")
    think_steps = _named(steps, "think")
    # The placeholder first: whether a small result would shrink when cleared depends on it.
    quote = observed.get("quote")
    cleared = quote is not None and (quote.cleared_tool_uses or 0) > 0
    placeholder = (quote.text.strip() or None) if quote is not None and cleared else None
    base = replace(
        DEFAULT_SERVER_MODEL, placeholder=placeholder or DEFAULT_SERVER_MODEL.placeholder
    )
    # Sizes next to each other on the ladder can fit alike: the first that fits stands for
    # them. "placeholder" comes first: a result no larger than the placeholder would not
    # shrink, so it never counts whatever the line, and lines below its size play alike.
    lines: dict[ResultLine, ServerModel] = {
        "placeholder": replace(base, min_result_tokens="placeholder"),
        0: replace(base, min_result_tokens=0),
        **{n: replace(base, min_result_tokens=n) for n in LADDER[1:]},
    }
    line = _fit(lines, ladder, observed, lowest=True)
    at_line = {
        b: replace(base, trigger_basis=b, min_result_tokens=line or 0) for b in TRIGGER_BASES
    }
    basis = _fit(at_line, basis_steps, observed) if line is not None else None
    model = str(steps[0].request.get("model", "")) if steps else ""
    keeps = {k: replace(base, thinking_keep=k) for k in THINKING_KEEPS}
    think = _fit(keeps, think_steps, observed, "cleared_thinking_turns", prefer="by-model")
    if think == "by-model":  # settled only if what else fits keeps as many turns on this model
        fits = _fits(keeps, think_steps, observed, "cleared_thinking_turns")
        if len({keeps[k].default_thinking_keep(model) for k in fits}) > 1:
            think = None
    cache = _cache_after_clearing(observed)
    expected: dict[str, dict[str, int | None]] = {
        b: {s.name: predict(s, m) for s in [*ladder, *basis_steps]} for b, m in at_line.items()
    }
    findings = (
        _line_finding(line, observed),
        Finding(
            "trigger basis",
            basis is not None,
            tuple(s.name for s in basis_steps),
            f"vs the {basis} prompt" if basis else "fits neither basis",
        ),
        Finding(
            "placeholder",
            placeholder is not None,
            ("quote",),
            repr(placeholder) if placeholder else "no quote of a cleared result",
        ),
        _thinking_finding(think, keeps, model, think_steps, observed),
        _cache_finding(cache, observed),
    )
    return Identification(basis, line, placeholder, expected, think, cache, findings)


def _line_finding(line: ResultLine | None, observed: Mapping[str, Observed]) -> Finding:
    seen = observed.get("ladder")
    counted = (seen.cleared_tool_uses or 0) if seen else 0
    if line is None:
        text = f"{counted} cleared fits no size of the ladder"
    elif line == "placeholder":
        text = (
            f"{counted} of the ladder's {len(LADDER)} results counted toward keep and cleared:"
            " those larger than the placeholder (the line at the placeholder's size)"
        )
    elif counted >= len(LADDER):
        text = f"every result counts toward keep and clears (down to {LADDER[0]} tokens)"
    else:
        smallest, below = LADDER[len(LADDER) - counted], LADDER[len(LADDER) - counted - 1]
        text = (
            f"{counted} of the ladder's {len(LADDER)} results counted toward keep and cleared:"
            f" {smallest}+ estimated tokens do, {below} do not"
        )
    return Finding("small-result line", line is not None, ("ladder",), text)


def _thinking_finding(
    keep: ThinkingKeep | None,
    keeps: Mapping[ThinkingKeep, ServerModel],
    model: str,
    steps: Sequence[Step],
    observed: Mapping[str, Observed],
) -> Finding:
    names = tuple(s.name for s in steps)
    seen = [observed[s.name].cleared_thinking_turns for s in steps if s.name in observed]
    if keep is None:
        return Finding("clear_thinking default keep", False, names,
                       f"cleared {seen} on 0..{len(steps) - 1} earlier thinking turns fits no "
                       "single keep")  # fmt: skip
    value = keeps[keep].default_thinking_keep(model)
    text = (
        f"keeps all thinking turns ({len(steps) - 1} earlier ones here)"
        if value is None
        else f"keeps {value} thinking turn(s)"
    )
    if keep == "by-model":
        text += f" (the docs' default for {model}: by-model)"
    return Finding("clear_thinking default keep", True, names, text)


def _cache_after_clearing(observed: Mapping[str, Observed]) -> bool | None:
    first, again = observed.get("ladder"), observed.get("ladder-again")
    if first is None or again is None or not first.cleared_tool_uses:
        return None
    cached = first.cache_creation_input_tokens + first.cache_read_input_tokens
    if cached == 0:  # the cleared prompt was not cached at all (below the minimum length)
        return None
    return again.cache_read_input_tokens >= CACHE_SHARE * cached


def _cache_finding(cache: bool | None, observed: Mapping[str, Observed]) -> Finding:
    steps = ("ladder", "ladder-again")
    first, again = observed.get("ladder"), observed.get("ladder-again")
    if cache is None or first is None or again is None:
        return Finding("cache after a clearing", False, steps, "the cleared prompt was not cached")
    cached = first.cache_creation_input_tokens + first.cache_read_input_tokens
    verdict = "read back" if cache else "not read back"
    return Finding("cache after a clearing", True, steps,
                   f"{verdict}: the same request right after read {again.cache_read_input_tokens:,}"
                   f" of the {cached:,} tokens cached with its clearing")  # fmt: skip


def _fit(
    candidates: Mapping[K, ServerModel],
    steps: Sequence[Step],
    observed: Mapping[str, Observed],
    key: str = "cleared_tool_uses",
    prefer: K | None = None,
    lowest: bool = False,
) -> K | None:
    """The one candidate whose predictions match every observed step (`prefer` when it is
    among several that do; with `lowest`, the first that does), else None."""
    fits = _fits(candidates, steps, observed, key)
    if prefer is not None and prefer in fits:
        return prefer
    return fits[0] if len(fits) == 1 or (lowest and fits) else None


def _fits(
    candidates: Mapping[K, ServerModel],
    steps: Sequence[Step],
    observed: Mapping[str, Observed],
    key: str,
) -> list[K]:
    """The candidates whose predictions match every observed step."""
    # No entry and an entry that clears nothing say the same.
    seen = [getattr(observed[s.name], key) or 0 for s in steps if s.name in observed]
    if not steps or len(seen) != len(steps):
        return []
    return [
        k
        for k, server in candidates.items()
        if [predict(s, server, key) or 0 for s in steps] == seen
    ]
