"""`agentctl doctor`: the profile and why, the folders, the SDK, the key (never shown), reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from import_probe import loaded_by_command
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.emulator import running

SENTINEL = "sk-ant-SENTINEL-doctor-0123456789"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def doctor(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["doctor", "--json", *args], env=env)
    checks = {row["check"]: row for row in json.loads(result.stdout)}
    return result.exit_code, checks


@pytest.mark.dates
def test_built_in_defaults_no_key_and_no_api_are_reported(_isolated_env: Path) -> None:
    code, checks = doctor()
    assert code == 1
    assert checks["profile"]["value"].startswith("<built-in> (built-in defaults: no --profile")
    assert checks["sessions"]["value"].startswith(str(_isolated_env / "sessions"))
    assert checks["memory root"]["value"].startswith(str(Path.cwd() / "memory"))
    assert checks["api key"]["ok"] is False
    assert checks["api reachable"]["value"].startswith("no: 127.0.0.1:9")


@pytest.mark.dates
def test_a_reachable_api_and_a_set_key_pass_and_the_key_is_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    with running() as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert SENTINEL not in result.output
    assert "set ($ANTHROPIC_API_KEY)" in result.output and "all good" in result.output


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("--profile", "from --profile"),
        ("env", "from $AGENTCTL_PROFILE"),
        ("local", "./agentctl.toml in the current folder"),
    ],
)
@pytest.mark.dates
def test_says_which_profile_and_why(
    how: str, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "agentctl.toml"
    profile.write_text('[memory]\nroot = "notes"\n')
    args = ["--profile", str(profile)] if how == "--profile" else []
    if how == "env":
        monkeypatch.setenv("AGENTCTL_PROFILE", str(profile))
    _, checks = doctor(*args, "--offline")
    assert checks["profile"]["value"].endswith(f"({reason})")
    assert checks["memory root"]["value"].startswith(str(tmp_path / "notes"))


def test_a_broken_profile_is_a_failed_check_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "agentctl.toml").write_text("max_turns = 'many'\n")
    code, checks = doctor("--offline")
    assert code == 1 and checks["profile"]["ok"] is False
    assert "max_turns" in checks["profile"]["value"]


@pytest.mark.slow
def test_offline_starts_the_emulator_without_importing_the_sdk() -> None:
    # Nor the emulator's services (built on the first request) nor a TOML parser (no file).
    services = ("service", "policy", "batches", "context_engine", "model", "script")
    mods = ["anthropic", *(f"agentctl.emulator.{m}" for m in services), "tomllib", "hashlib"]
    out, loaded = loaded_by_command(["doctor", "--offline"], mods)
    assert "emulator       installed; 127.0.0.1 accepts connections" in out
    assert "EXIT=None" in out or "EXIT=0" in out
    assert loaded == []


def test_long_values_wrap_under_themselves_on_a_terminal() -> None:
    from agentctl.cli.doctor import Check, format_checks

    long = "<built-in> (built-in defaults: no --profile, no $AGENTCTL_PROFILE, no ./agentctl.toml)"
    checks = [Check("profile", long, None), Check("anthropic SDK", "2.14.0", True)]
    wrapped = format_checks(checks, 60).splitlines()
    assert all(len(line) <= 60 for line in wrapped)
    assert wrapped[1].startswith(" " * 17) and wrapped[-2] == "✓ anthropic SDK  2.14.0"
    assert " ".join(part.strip() for part in wrapped[:-2]).endswith(long)
    piped = format_checks(checks).splitlines()  # not a terminal: one line per check
    assert piped[0] == f"  profile        {long}" and len(piped) == 3


@pytest.mark.dates
def test_a_profile_over_the_ambient_one_names_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentctl.toml").write_text("max_turns = 9\n")
    (tmp_path / "typed.toml").write_text("max_tokens = 900\n")
    _, checks = doctor("--profile", "typed.toml", "--offline")
    assert checks["profile"]["value"] == (
        "typed.toml (from --profile, over agentctl.toml (./agentctl.toml in the current folder))"
    )


def test_the_sdk_version_is_read_without_importlib_metadata() -> None:
    from importlib.metadata import version

    from agentctl.cli.doctor import Check, sdk_check

    assert sdk_check() == Check("anthropic SDK", version("anthropic"), True)


def test_the_emulator_check_connects_to_a_local_server_and_names_a_refusal() -> None:
    import socket

    from agentctl.cli.doctor import emulator_check, local_connect_problem

    with socket.create_server(("127.0.0.1", 0)) as server:
        assert local_connect_problem(server.getsockname()) is None
        address = server.getsockname()
    # Nothing listens there any more: refused, named as connect_problem names it.
    assert local_connect_problem(address) == f"127.0.0.1:{address[1]}: Connection refused"
    assert emulator_check().value == "installed; 127.0.0.1 accepts connections"
