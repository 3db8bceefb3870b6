"""The probe's requests keep their thresholds well away from the sizes that decide them."""

from __future__ import annotations

from dataclasses import replace

from agentctl.context.cache import strip_cache_control
from agentctl.context.engine import apply_context_edits
from agentctl.context.server_model import DEFAULT_SERVER_MODEL, PRESETS
from agentctl.context.tokens import estimate_request_tokens
from agentctl.probe.identify import predict
from agentctl.probe.steps import BASIS_TRIGGER, probe_steps, scaled

MARGIN = 0.12  # the server's tokenizer may stray this far from the factor the probe measures


def _body(request: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in request.items() if k != "betas"}


def test_basis_steps_tell_the_two_bases_apart_at_any_line() -> None:
    steps = [s for s in probe_steps() if s.name.startswith("basis-")]
    assert [s.name for s in steps] == ["basis-1", "basis-2", "basis-2b", "basis-3", "basis-4"]
    for line in (0, 12, 20, 100, "placeholder"):
        predicted = {
            basis: [
                predict(
                    s, replace(DEFAULT_SERVER_MODEL, trigger_basis=basis, min_result_tokens=line)
                )
                for s in steps
            ]
            for basis in ("unedited", "edited")
        }
        assert predicted["edited"] == [2, 2, 2, 4, 4], line
        small_counts = line in (0, 12, "placeholder")  # basis-2b's one-line result
        assert predicted["unedited"] == [2, 3, 4 if small_counts else 3, 4, 5], line


def test_a_later_step_starts_with_the_earlier_one_so_the_cache_can_serve_it() -> None:
    steps = {s.name: strip_cache_control(s.request)["messages"] for s in probe_steps()}
    assert steps["basis-2b"][: len(steps["basis-2"])] == steps["basis-2"]


def test_every_size_that_decides_a_basis_step_is_clear_of_the_trigger() -> None:
    for step in (s for s in probe_steps() if s.name.startswith("basis-")):
        body = _body(step.request)
        edits = body["context_management"]["edits"]  # type: ignore[index]
        unedited = estimate_request_tokens(body)
        edited = apply_context_edits(body, edits, server=PRESETS["edited"]).input_tokens
        for size in (unedited, edited):
            assert abs(size - BASIS_TRIGGER) / BASIS_TRIGGER > MARGIN, (step.name, size)


def test_scaling_moves_token_triggers_only() -> None:
    steps = {s.name: s for s in probe_steps()}
    basis = scaled(steps["basis-1"].request, 1.3)
    assert basis["context_management"]["edits"][0]["trigger"]["value"] == round(BASIS_TRIGGER * 1.3)
    keep = scaled(steps["ladder"].request, 1.3)
    assert keep["context_management"]["edits"][0]["trigger"] == {"type": "tool_uses", "value": 1}
    assert steps["basis-1"].request["context_management"]["edits"][0]["trigger"]["value"] == 7300


def test_each_rung_of_the_ladder_is_the_size_it_stands_for() -> None:
    from agentctl.context.pairs import result_tokens, tool_pairs
    from agentctl.probe.steps import LADDER, history, rung_result

    sizes = [result_tokens(p) for p in tool_pairs(history([rung_result(n) for n in LADDER]))]
    assert sizes == list(LADDER) and sorted(set(LADDER)) == list(LADDER)


def test_the_prompt_a_clearing_leaves_is_long_enough_to_be_cached() -> None:
    from agentctl.context.prices import min_cacheable_tokens

    step = next(s for s in probe_steps() if s.name == "ladder")
    body = _body(step.request)
    edits = body["context_management"]["edits"]  # type: ignore[index]
    edited = apply_context_edits(body, edits, server=PRESETS["unedited"]).input_tokens
    assert edited > 1.5 * min_cacheable_tokens("claude-haiku-5-5")
