"""Fixtures every test gets: an isolated AGENTCTL_HOME and no way to reach a real API."""

from __future__ import annotations

from pathlib import Path

import pytest

# Port 9 (discard) on loopback: nothing listens there, so a request that escapes the
# emulator fails at once instead of reaching api.anthropic.com.
CLOSED_BASE_URL = "http://127.0.0.1:9"


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
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    return home
