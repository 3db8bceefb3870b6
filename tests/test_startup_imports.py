"""The light commands load only what they use: each runs in a fresh interpreter (piped, as
bench/startup.py and bench/scale_store.py time them) and must not have imported the modules
listed for it. Every module listed was measured absent; what each one would cost is in
docs/bench.md ("Startup")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from import_probe import loaded_by_command

import agentctl
from agentctl.home import sessions_dir

SDK = ("anthropic", "httpx", "pydantic")
# The emulator's HTTP server and what http.server pulls in (about a third of `doctor`).
HTTP = ("http.server", "http.client", "email.utils", "ssl", "socketserver")

LIGHT: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "help": (
        ["--help"],
        (*SDK, "rich.console", "agentctl.types", "agentctl.profile.settings", "sqlite3"),
    ),
    "memory view": (
        ["memory", "view", "--root", "{tmp}/memory"],
        (*SDK, *HTTP, "rich.console", "agentctl.types", "agentctl.profile.loader", "sqlite3"),
    ),
    # A piped listing whose cells are printable ASCII is laid out without Rich at all.
    "sessions list": (
        ["sessions", "list"],
        (*SDK, *HTTP, "rich.console", "rich.table", "rich.cells", "agentctl.profile.settings"),
    ),
    "profile show": (
        ["profile", "show"],
        (*SDK, *HTTP, "rich.console", "agentctl.types", "agentctl.memory.store", "sqlite3"),
    ),
    # The emulator is checked without loading its HTTP server (cli/doctor.py emulator_check).
    "doctor --offline": (
        ["doctor", "--offline"],
        (*SDK, *HTTP, "agentctl.emulator.server", "rich.console", "agentctl.types", "sqlite3"),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LIGHT))
def test_a_light_command_does_not_import_what_it_does_not_use(name: str, tmp_path: Path) -> None:
    argv, absent = LIGHT[name]
    (tmp_path / "memory").mkdir()
    for prompt in ("Summarise the kestrel outage.", "Count the invoices."):
        result = agentctl.run(
            prompt, client=agentctl.ScriptedClient("Done."), memory_root=tmp_path / "mem"
        )
        assert (sessions_dir() / f"{result.session_id}.jsonl").is_file()
    env = {**os.environ}
    out, loaded = loaded_by_command([a.format(tmp=tmp_path) for a in argv], absent, env)
    assert out.rstrip().endswith(("EXIT=0", "EXIT=None")), out
    if name == "sessions list":
        assert "Summarise the kestrel outage." in out  # the table, not "no sessions yet"
    assert loaded == []
