"""Which server model the probe's responses fit: each preset's prediction against what came back.

The predictions come from the shared engine (`apply_context_edits`) on the same requests, in
estimator units; only `cleared_tool_uses` is compared (token figures differ with the server's
tokenizer). Two rules are told apart by separate steps, so each is settled on its own:
the "basis-*" steps decide `trigger_basis`, the "keep" step decides `min_result_tokens`; the
placeholder is the model's quote in the "quote" step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    LARGE_RESULT_TOKENS,
    PRESETS,
    ServerModel,
    TriggerBasis,
)
from agentctl.probe.script import Step


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

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Identification:
    """Each rule as settled by the probe (None: the responses fit no candidate)."""

    trigger_basis: TriggerBasis | None
    min_result_tokens: int | None
    placeholder: str | None
    expected: dict[str, dict[str, int | None]]  # candidate -> step -> predicted clears

    @property
    def model(self) -> ServerModel | None:
        """The identified model (a preset's name when it matches one in full), or None."""
        if self.trigger_basis is None or self.min_result_tokens is None or not self.placeholder:
            return None
        found = replace(
            DEFAULT_SERVER_MODEL,
            name="probed",
            trigger_basis=self.trigger_basis,
            min_result_tokens=self.min_result_tokens,
            placeholder=self.placeholder,
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
            "server_model": None if model is None else model.to_json(),
            "expected": self.expected,
        }


K = TypeVar("K")
# The keep-counting rule is decided first (the "keep" step does not depend on the basis);
# the basis then between candidates that count results that way.
KEEP_CANDIDATES = {0: PRESETS["unedited"], LARGE_RESULT_TOKENS: PRESETS["unedited-large"]}
BASES: tuple[TriggerBasis, ...] = ("unedited", "edited")


def predict(step: Step, server: ServerModel) -> int | None:
    """cleared_tool_uses the server model predicts for this step (None: nothing cleared)."""
    body = {k: v for k, v in step.request.items() if k != "betas"}
    edits = (body.get("context_management") or {}).get("edits") or []
    applied = apply_context_edits(body, edits, server=server).applied_edits
    counts = [int(e["cleared_tool_uses"]) for e in applied if "cleared_tool_uses" in e]
    return counts[0] if counts else None


def identify(steps: Sequence[Step], observed: Mapping[str, Observed]) -> Identification:
    """Settle each rule from the observed responses of `steps`."""
    basis_steps = [s for s in steps if s.name.startswith("basis-")]
    keep_steps = [s for s in steps if s.name == "keep"]
    expected = {
        name: {s.name: predict(s, server) for s in [*keep_steps, *basis_steps]}
        for name, server in PRESETS.items()
    }
    keep = _fit(KEEP_CANDIDATES, keep_steps, observed)
    counting = {b: replace(PRESETS[b], min_result_tokens=keep or 0) for b in BASES}
    basis = _fit(counting, basis_steps, observed) if keep is not None else None
    quote = observed.get("quote")
    cleared = quote is not None and (quote.cleared_tool_uses or 0) > 0
    placeholder = quote.text.strip() if quote is not None and cleared else None
    return Identification(basis, keep, placeholder or None, expected)


def _fit(
    candidates: Mapping[K, ServerModel], steps: Sequence[Step], observed: Mapping[str, Observed]
) -> K | None:
    """The one candidate whose predictions match every observed step, else None."""
    seen = [observed[s.name].cleared_tool_uses for s in steps if s.name in observed]
    if len(seen) != len(steps):
        return None
    fits = [
        key for key, server in candidates.items() if [predict(s, server) for s in steps] == seen
    ]
    return fits[0] if len(fits) == 1 else None
