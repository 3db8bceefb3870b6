"""Run the probe: its cost estimate, its requests through a ModelClient under a cap, the result.

The caller (cli/probe.py) shows the estimate and asks before `run_probe` spends anything.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.agent.model import ModelClient, ModelResponse
from agentctl.agent.retry import RetryPolicy
from agentctl.context.calibration import resolve_server_model, save_calibration
from agentctl.context.prices import Pricing
from agentctl.context.server_model import ServerModel
from agentctl.context.tokens import estimate_request_tokens
from agentctl.errors import LimitError, UsageError
from agentctl.probe.identify import Identification, Observed, identify
from agentctl.probe.steps import DEFAULT_PROBE_MODEL, Step, probe_steps, resolve, scaled
from agentctl.render.format import fmt_usd
from agentctl.runner import credentials
from agentctl.types import usd_json

DEFAULT_MAX_USD = 0.25
# The estimate assumes the server counts this many times agentctl's estimate (the current
# tokenizer counts more, docs/context.md) and bills every input token as a cache write.
SAFETY = 1.5
# A probe of agentctl's own emulator says nothing about the real server: its answers (message
# ids `msg_emu...`) are reported but never written as the calibration.
EMULATOR_ID_PREFIX = "msg_emu"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
NO_KEY = (
    "probe: no API key: set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...), "
    "or probe the built-in emulator with --offline"
)


@dataclass(frozen=True)
class ProbePlan:
    """What the probe will send, and what it may cost at most."""

    model: str
    steps: tuple[Step, ...]
    pricing: Pricing
    estimate_usd: float
    max_usd: float


@dataclass(frozen=True)
class ProbeReport:
    """What came back, what it identifies, and where the calibration was written."""

    plan: ProbePlan
    target: str
    factor: float
    observed: tuple[Observed, ...]
    identification: Identification
    calibration: Path | None
    emulator: bool = False  # every answer came from agentctl's emulator: nothing written

    @property
    def cost_usd(self) -> float:
        return sum(o.cost_usd for o in self.observed)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.plan.model,
            "target": self.target,
            "estimate_usd": usd_json(self.plan.estimate_usd),
            "cost_usd": usd_json(self.cost_usd),
            "token_factor": round(self.factor, 6),
            "observed": [o.to_json() for o in self.observed],
            "identified": self.identification.to_json(),
            "emulator": self.emulator,
            "calibration_file": None if self.calibration is None else str(self.calibration),
        }


def plan_probe(model: str = DEFAULT_PROBE_MODEL, max_usd: float = DEFAULT_MAX_USD) -> ProbePlan:
    """The probe's requests and their cost at most; UsageError when that is over `max_usd`
    or the model has no known price."""
    pricing = Pricing.of(model)
    steps = tuple(probe_steps(model))
    estimate = estimate_usd(steps, pricing)
    if math.isnan(estimate):
        raise UsageError(f"--model {model}: no known price, so the probe cannot keep to a cap")
    if estimate > max_usd:
        raise UsageError(
            f"the probe on {model} may cost up to ${estimate:.2f}, over --max-usd {max_usd:g}"
            " (raise --max-usd, or pick a cheaper --model)"
        )
    return ProbePlan(model, steps, pricing, estimate, max_usd)


def estimate_usd(steps: tuple[Step, ...], pricing: Pricing) -> float:
    """An upper bound: every input token a 5-minute cache write, every output token spent."""
    price = pricing.price
    if price is None:
        return math.nan
    total = 0.0
    for step in steps:
        tokens = estimate_request_tokens(_body(step.request)) * SAFETY
        total += tokens * price.cache_write_5m + int(step.request["max_tokens"]) * price.output
    return total / 1_000_000


def run_probe(
    plan: ProbePlan,
    client: ModelClient,
    target: str,
    *,
    save: Callable[[ServerModel, dict[str, Any]], Path] = save_calibration,
) -> ProbeReport:
    """Send every step in order; the first one measures the token factor. LimitError as soon
    as the money spent passes the cap. Writes the calibration when every rule was settled."""
    factor, spent, observed, emulated = 1.0, 0.0, [], True
    replies: dict[str, list[dict[str, Any]]] = {}
    sent: list[Step] = []
    for planned in plan.steps:
        step = resolve(planned, replies)
        sent.append(step)
        response = _send(client, scaled(step.request, factor))
        replies[step.name] = [dict(b) for b in response.content]
        emulated = emulated and str(response.raw.get("id", "")).startswith(EMULATOR_ID_PREFIX)
        seen = _observe(step, response, plan.pricing)
        observed.append(seen)
        spent += seen.cost_usd
        if spent > plan.max_usd:
            raise LimitError(f"the probe spent {fmt_usd(spent)}, over --max-usd {plan.max_usd:g}")
        if step.name == "size":
            factor = response.usage.prompt_tokens / estimate_request_tokens(_body(step.request))
    found = identify(sent, {o.step: o for o in observed})
    report = ProbeReport(plan, target, factor, tuple(observed), found, None, emulated)
    model = found.model
    if model is None or emulated:
        return report
    return dataclasses.replace(report, calibration=save(model, report.to_json()))


def _body(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "betas"}


def _send(client: ModelClient, request: dict[str, Any]) -> ModelResponse:
    response = None
    for item in client.stream(request):
        if isinstance(item, ModelResponse):
            response = item
    if response is None:  # the ModelClient contract promises one
        raise RuntimeError("the client yielded no response")
    return response


def _observe(step: Step, response: ModelResponse, pricing: Pricing) -> Observed:
    clears = [e for e in response.applied_edits if e.type == "clear_tool_uses_20250919"]
    thinking = [e for e in response.applied_edits if e.type == "clear_thinking_20251015"]
    usage = response.usage
    return Observed(
        step=step.name,
        cleared_tool_uses=clears[0].cleared_tool_uses if clears else None,
        cleared_thinking_turns=thinking[0].cleared_thinking_turns if thinking else None,
        cleared_input_tokens=sum(e.cleared_input_tokens for e in response.applied_edits),
        input_tokens=usage.input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        text=response.text,
        cost_usd=pricing.cost(usage),
    )


def probe_server(
    model: str = DEFAULT_PROBE_MODEL,
    *,
    offline: bool = False,
    base_url: str | None = None,
    server_model: str = "",
    max_usd: float = DEFAULT_MAX_USD,
    confirm: Callable[[ProbePlan, str], bool] = lambda plan, target: True,
) -> ProbeReport:
    """Probe the API (or with `offline`, an emulator playing `server_model`): plan, ask
    `confirm(plan, target)` (False: UsageError, nothing sent), run, write the calibration."""
    if offline and base_url:
        raise UsageError("--offline and --base-url name two targets: give one of them")
    if server_model and not offline:
        raise UsageError("--server-model: only with --offline (it sets the emulator's rules)")
    plan = plan_probe(model, max_usd)
    try:
        key = credentials(offline)
    except UsageError:
        raise UsageError(NO_KEY) from None
    server = resolve_server_model(server_model, source="--server-model").model
    with probe_client(offline=offline, base_url=base_url, server=server, key=key) as pair:
        client, target = pair
        if not confirm(plan, target):
            raise UsageError("not confirmed: nothing was sent (--yes skips the question)")
        return run_probe(plan, client, target)


def api_target(base_url: str | None) -> tuple[str | None, str]:
    """The URL the probe sends to and its label: `--base-url`, else $ANTHROPIC_BASE_URL (as
    every other command), else the Anthropic API."""
    if base_url:
        return base_url, base_url
    ambient = os.environ.get(BASE_URL_ENV, "").strip()
    if ambient:
        return ambient, f"{ambient} ({BASE_URL_ENV})"
    return None, "the Anthropic API"


@contextmanager
def probe_client(
    *, offline: bool, base_url: str | None, server: ServerModel, key: dict[str, str]
) -> Iterator[tuple[ModelClient, str]]:
    """The SDK client and a label of where it points; offline, an emulator started here that
    plays `server`."""
    # The SDK (over a second to import): only once the probe is to send.
    from agentctl.agent.client import AnthropicClient

    def client(url: str | None) -> ModelClient:
        return AnthropicClient(
            api_key=key.get("api_key"),
            auth_token=key.get("auth_token"),
            base_url=url,
            timeout_s=120.0,
            retry=RetryPolicy(),
        )

    if not offline:
        url, label = api_target(base_url)
        yield client(url), label
        return
    # The emulator only for --offline.
    from agentctl.emulator import running

    with running(server_model=server) as emulator:
        yield client(emulator.base_url), f"the offline emulator ({server.name})"
