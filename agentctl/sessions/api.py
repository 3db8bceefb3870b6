"""`agentctl.simulate` and `agentctl.tune`: the `simulate` and `tune` commands from Python.

Each returns the value the command draws (`report.WhatIf`, `report.Tuning`); its `to_json()`
is what `--json` prints. `server_model="all"` adds the figures under every preset.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentctl.sessions import report
from agentctl.sessions.catalog import load_session


def simulate(
    session: str, profile: str | Path, *, sets: Sequence[str] = (), server_model: str = ""
) -> report.WhatIf:
    """`agentctl simulate SESSION --profile PROFILE [--set K=V ...] [--server-model SPEC]`."""
    return report.what_if(load_session(session), str(profile), tuple(sets), server_model)


def tune(
    session: str,
    *,
    grid: str | None = None,
    server_model: str = "",
    write: str | Path | None = None,
    force: bool = False,
) -> report.Tuning:
    """`agentctl tune SESSION [--grid G] [--server-model SPEC] [--write FILE [--force]]`;
    `write` saves the winner (with `server_model="all"`, the robust choice)."""
    outcome = report.tuning(load_session(session), grid, server_model)
    if write is not None:
        report.write_winner(outcome, Path(write), force=force)
    return outcome
