"""`agentctl.simulate`, `agentctl.tune` and `agentctl.export_exchanges`: the `simulate`,
`tune` and `sessions export --exchanges` commands from Python.

`simulate` and `tune` return the value the command draws (`report.WhatIf`, `report.Tuning`);
its `to_json()` is what `--json` prints. `server_model="all"` adds the figures under every
preset.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentctl.errors import UsageError
from agentctl.sessions import report
from agentctl.sessions.exchanges import session_exchanges
from agentctl.sessions.transcript import load_session


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
    tokens_within: float | None = None,
) -> report.Tuning:
    """`agentctl tune SESSION [--grid G] [--server-model SPEC] [--tokens-within R] [--write
    FILE [--force]]`; `write` saves the winner (with `server_model="all"`, the robust
    choice)."""
    outcome = report.tuning(load_session(session), grid, server_model, tokens_within)
    if write is not None:
        report.write_winner(outcome, Path(write), force=force)
    return outcome


def export_exchanges(session: str, file: str | Path | None = None) -> list[dict[str, Any]]:
    """`agentctl sessions export SESSION --exchanges FILE`: the session's API exchanges (the
    recordings `agentctl emulator check` replays); `file` also writes them as a JSON array."""
    exchanges = session_exchanges(load_session(session))
    if file is not None:
        text = json.dumps(exchanges, indent=2, ensure_ascii=False) + "\n"
        try:
            Path(file).write_text(text, "utf-8")
        except OSError as err:
            raise UsageError(f"{file}: cannot write: {err.strerror or err}") from None
    return exchanges
