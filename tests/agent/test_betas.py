"""The `betas` profile key: extra beta flags after agentctl's own, once each, validated, sent
over real HTTP (the emulator records the header it received), and kept from task files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctl.agent.request import betas, build_request
from agentctl.emulator import running
from agentctl.errors import ConfigError
from agentctl.profile.settings import CodeExecutionSettings, Profile, ServerToolSettings
from agentctl.runner import load_profile, plan_new, task_of

from .test_client import SCRIPT, final, make_client

CONTEXT = "context-management-2025-06-27"
COMPACT = "compact-2026-01-12"  # the built-in default compacts (threshold mode)
ONE_MILLION = "context-1m-2025-08-07"
FUTURE = "new-feature-2027-01-31"


def test_profile_betas_follow_agentctls_own_once_each() -> None:
    profile = Profile(betas=(ONE_MILLION, CONTEXT, FUTURE, ONE_MILLION))
    assert betas(profile) == [CONTEXT, COMPACT, ONE_MILLION, FUTURE]
    assert betas(Profile()) == [CONTEXT, COMPACT]
    # A server tool's beta stays before them.
    with_tool = Profile(
        betas=(FUTURE,),
        server_tools=ServerToolSettings(code_execution=CodeExecutionSettings(enabled=True)),
    )
    assert with_tool.betas == (FUTURE,) and betas(with_tool)[-1] == FUTURE
    assert betas(with_tool)[0] == CONTEXT


def test_the_emulator_receives_the_profiles_betas_in_the_header() -> None:
    profile = Profile(betas=(ONE_MILLION, FUTURE, CONTEXT))
    request = build_request(profile, [{"role": "user", "content": "hi"}], [])
    with running(script=SCRIPT) as emu:
        response = final(list(make_client(emu.base_url, []).stream(request)))
        received = emu.requests[0]
    assert response.stop_reason == "tool_use"
    sent = [b.strip() for b in received.headers["anthropic-beta"].split(",")]
    assert sent == [CONTEXT, COMPACT, ONE_MILLION, FUTURE]
    assert "betas" not in received.body


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ('["Context-1M-2025-08-07"]', "betas[0]"),
        (f'["{CONTEXT}", "context-1m"]', "betas[1]"),
        ('["a-2025-01-01,b-2025-01-01"]', "betas[0]"),
        ('[""]', "betas[0]"),
        (f'"{ONE_MILLION}"', "betas"),
        ("[1]", "betas[0]"),
    ],
)
def test_a_bad_beta_names_the_key(tmp_path: Path, value: str, key: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(f"betas = {value}\n")
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert f"{path}: {key}:" in str(err.value)


@pytest.mark.dates
def test_a_profile_file_sets_betas(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(f'betas = ["{FUTURE}"]\n')
    assert load_profile(path).betas == (FUTURE,)
    assert load_profile(path, {"betas": [ONE_MILLION]}).betas == (ONE_MILLION,)


@pytest.mark.dates
def test_a_task_file_may_not_add_betas(tmp_path: Path) -> None:
    task = tmp_path / "task.md"
    task.write_text(f'+++\nbetas = ["{ONE_MILLION}"]\n+++\nDo it.\n')
    with pytest.raises(ConfigError, match=r"front matter: betas: a task file may not add"):
        plan_new(task_of(task), Profile())
    trusted = plan_new(task_of(task), Profile(), trust_task=True)
    assert trusted.profile.betas == (ONE_MILLION,)
