"""The probe's report as plain lines: per step what came back and what each model predicted.

Text from the server (the quoted placeholder) is shown with its control characters visible.
"""

from __future__ import annotations

from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.probe.run import ProbeReport
from agentctl.render.safe import visible

EMULATOR_NOTE = (
    "calibration not written: these answers came from agentctl's emulator, not the real server"
)


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def probe_lines(report: ProbeReport) -> list[str]:
    """Header, one row per step, then each rule as settled, the model and the file."""
    found = report.identification
    lines = [
        f"probe of {report.target} on {report.plan.model}: cost ${report.cost_usd:.4f}, "
        f"server tokens per estimated token {report.factor:.3f}",
        f"{'step':<9} {'cleared':>7} {'input':>7} {'cache read':>10} {'cache write':>11}"
        + "".join(f" {name:>14}" for name in found.expected),
    ]
    for seen in report.observed:
        predicted = [_count(found.expected[n].get(seen.step)) for n in found.expected]
        lines.append(
            f"{seen.step:<9} {_count(seen.cleared_tool_uses):>7} {seen.input_tokens:>7} "
            f"{seen.cache_read_input_tokens:>10} {seen.cache_creation_input_tokens:>11}"
            + "".join(f" {p:>14}" for p in predicted)
        )
    lines += _rules(report)
    return lines


def _rules(report: ProbeReport) -> list[str]:
    found = report.identification
    undecided = "undetermined (fits no candidate)"
    keep = found.min_result_tokens
    placeholder = found.placeholder
    same = placeholder == DEFAULT_CLEARED_RESULT_PLACEHOLDER
    model = found.model
    lines = [
        f"trigger basis: {found.trigger_basis or undecided}",
        "small results count toward keep: "
        + (undecided if keep is None else "yes" if keep == 0 else f"no (below {keep} tokens)"),
        "placeholder: "
        + (undecided if placeholder is None else repr(visible(placeholder)))
        + (" (agentctl's default)" if same else ""),
        "clear_thinking default keep: not probed (by-model table, docs/context.md)",
    ]
    if model is None:
        lines.append("server model: not identified; no calibration written")
    else:
        lines.append(f"server model: {visible(model.describe())}")
        lines.append(
            EMULATOR_NOTE if report.emulator else f"calibration written to {report.calibration}"
        )
    return lines
