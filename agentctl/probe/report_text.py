"""The probe's report as plain lines: per step what came back and what each model predicted.

Text from the server (the quoted placeholder) is shown with its control characters visible.
"""

from __future__ import annotations

from agentctl.probe.measure import ProbeReport
from agentctl.render.format import fmt_usd
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
        f"probe of {report.target} on {report.plan.model}: cost {fmt_usd(report.cost_usd)}, "
        f"server tokens per estimated token {report.factor:.3f}",
        f"{'step':<12} {'cleared':>7} {'thinking':>8} {'input':>7} {'cache read':>10}"
        f" {'cache write':>11}" + "".join(f" {name:>9}" for name in found.expected),
    ]
    for seen in report.observed:
        predicted = [_count(found.expected[n].get(seen.step)) for n in found.expected]
        lines.append(
            f"{seen.step:<12} {_count(seen.cleared_tool_uses):>7}"
            f" {_count(seen.cleared_thinking_turns):>8} {seen.input_tokens:>7}"
            f" {seen.cache_read_input_tokens:>10} {seen.cache_creation_input_tokens:>11}"
            + "".join(f" {p:>9}" for p in predicted)
        )
    lines += _rules(report)
    return lines


def _rules(report: ProbeReport) -> list[str]:
    found = report.identification
    lines = [visible(f.line()) for f in found.findings]
    model = found.model
    if model is None:
        lines.append("server model: not identified; no calibration written")
    else:
        lines.append(f"server model: {visible(model.describe())}")
        lines.append(
            EMULATOR_NOTE if report.emulator else f"calibration written to {report.calibration}"
        )
    return lines
