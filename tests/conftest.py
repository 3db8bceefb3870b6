"""Fixtures every test gets: an isolated AGENTCTL_HOME and no way to reach a real API.

Also the suite's rules of determinism: the hypothesis profiles ("ci": derandomized, no example
database; "dev": random, the default; pick one with HYPOTHESIS_PROFILE) and a check that every
test starting a process (subprocess, fork, exec) carries `@pytest.mark.slow`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Port 9 (discard) on loopback: nothing listens there, so a request that escapes the
# emulator fails at once instead of reaching api.anthropic.com.
CLOSED_BASE_URL = "http://127.0.0.1:9"

# No deadline and no "too slow" health check in either profile: both depend on the machine.
_SPEED_FREE: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_SPEED_FREE)
settings.register_profile("dev", **_SPEED_FREE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Audit events (sys.addaudithook) raised when a process is started.
SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.system"}
)
_spawned: list[str] = []


def _audit(event: str, _args: tuple[Any, ...]) -> None:
    if event in SPAWN_EVENTS:
        _spawned.append(event)


sys.addaudithook(_audit)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    _spawned.clear()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    result = yield
    if _spawned and item.get_closest_marker("slow") is None:
        raise pytest.fail.Exception(
            f"{item.nodeid} starts a process ({_spawned[0]}): mark it @pytest.mark.slow",
            pytrace=False,
        )
    return result


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("agentctl-home")
    monkeypatch.setenv("AGENTCTL_HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", CLOSED_BASE_URL)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("AGENTCTL_PROFILE", raising=False)
    monkeypatch.delenv("AGENTCTL_CRASH_AT", raising=False)  # the journal's crash seam
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    return home
