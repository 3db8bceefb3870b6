"""`agentctl probe`: settle the server's open context-editing rules with a few requests. Thin."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from agentctl.cli.options import ServerModelOption

if TYPE_CHECKING:
    from agentctl.probe.measure import ProbePlan

HELP = """\
Send a small scripted conversation (14 requests) built so that the responses settle the
server's open context-editing rules: which result sizes count toward keep and get cleared (a
ladder of sizes), whether the clearing trigger is compared with the unedited or the
already-edited prompt, the text a cleared result becomes, clear_thinking's keep when the edit
names none, and whether a request right after a clearing reads it from the cache. Prints the
estimated cost first and asks (--yes skips the question); never spends more than --max-usd.
Sends to --base-url, else $ANTHROPIC_BASE_URL, else the Anthropic API. Writes what it
identified to the calibration file in the agentctl folder, which the emulator, simulate and
tune then use (docs/probe.md); a probe whose answers came from agentctl's emulator
(--offline, or an `emulator serve` URL) writes nothing.

\b
Examples:
  agentctl probe                                  the real API (ANTHROPIC_API_KEY)
  agentctl probe --offline --server-model edited  check the probe against the emulator
  agentctl probe --json --yes | jq .identified
"""


def register(root: typer.Typer) -> None:
    """Attach the command to the root app."""
    root.command(name="probe", help=HELP)(probe)


def probe(
    model: Annotated[str, typer.Option(metavar="MODEL", help="The model to probe with.")] = "",
    offline: Annotated[
        bool, typer.Option("--offline", help="Probe the built-in emulator (no key, no cost).")
    ] = False,
    base_url: Annotated[
        str | None, typer.Option("--base-url", metavar="URL", help="Another API endpoint.")
    ] = None,
    server_model: ServerModelOption = "",
    max_usd: Annotated[
        float, typer.Option("--max-usd", metavar="USD", help="Spend at most this much.")
    ] = 0.25,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before sending.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    # The probe (and the runner under it) only when it runs, not for --help.
    from agentctl.probe.measure import probe_server
    from agentctl.probe.steps import DEFAULT_PROBE_MODEL

    def ask(plan: ProbePlan, target: str) -> bool:
        print(
            f"agentctl probe: {len(plan.steps)} requests to {target} on {plan.model}, "
            f"estimated at most ${plan.estimate_usd:.3f} (cap ${plan.max_usd:g})",
            file=sys.stderr,
        )
        if yes or offline:
            return True
        try:
            return typer.confirm("Send them?", err=True)
        except typer.Abort:  # no answer (stdin closed): nothing is sent
            return False

    report = probe_server(
        model or DEFAULT_PROBE_MODEL,
        offline=offline,
        base_url=base_url,
        server_model=server_model,
        max_usd=max_usd,
        confirm=ask,
    )
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        # The report's wording only once there is a report.
        from agentctl.probe.report_text import probe_lines

        sys.stdout.write("".join(line + "\n" for line in probe_lines(report)))
    if report.identification.model is None:
        raise typer.Exit(1)
