"""`agentctl probe` against the emulator playing each server model: real SDK, real HTTP."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentctl.agent.client import AnthropicClient
from agentctl.agent.retry import RetryPolicy
from agentctl.cli.main import app
from agentctl.context.calibration import load_calibration, resolve_server_model
from agentctl.context.server_model import SERVER_MODELS, ServerModel, parse_server_model
from agentctl.emulator import running
from agentctl.errors import LimitError
from agentctl.probe.measure import NO_KEY, plan_probe, probe_server, run_probe
from agentctl.probe.report_text import EMULATOR_NOTE
from tests.probe.relay import relay


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def probe_json(*args: str) -> dict[str, Any]:
    code, out, err = invoke("probe", "--json", *args)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


CUSTOM = parse_server_model("default,placeholder=[removed: ask again if needed]")


@pytest.mark.parametrize("server", [*SERVER_MODELS, CUSTOM], ids=lambda m: m.name)
def test_the_probe_identifies_each_emulator_model(server: ServerModel) -> None:
    spec = server.name if server is not CUSTOM else "default,placeholder=" + server.placeholder
    data = probe_json("--offline", "--server-model", spec)
    identified = data["identified"]["server_model"]
    assert identified == dataclasses.replace(server, name=identified["name"]).to_json()
    assert identified["name"] == (server.name if server is not CUSTOM else "probed")
    assert all(f["settled"] for f in data["identified"]["findings"])
    assert 0 < data["cost_usd"] <= data["estimate_usd"] <= 0.25
    # The emulator is not the real server: its answers are never written as the calibration.
    assert data["emulator"] is True and data["calibration_file"] is None
    assert load_calibration() is None


# Each open rule, every value the emulator can play (one rule varied at a time), and what the
# probe must report: the line as the first of "placeholder" and the ladder's sizes that plays
# the same (a result no larger than the placeholder, 8 tokens, never shrinks, so never counts;
# 10 is no size of the ladder, 11 is); the docs' by-model keep where the played keep is the
# same on the probed model.
RULE_SETTINGS = [
    ("default", {}),
    ("unedited-basis", {}),
    ("placeholder-line", {}),
    ("default,min_result_tokens=0", {"min_result_tokens": "placeholder"}),
    ("default,min_result_tokens=9", {"min_result_tokens": "placeholder"}),
    ("default,min_result_tokens=10", {"min_result_tokens": 11}),
    ("unedited-basis,min_result_tokens=20", {"min_result_tokens": 20}),
    ("default,min_result_tokens=37", {"min_result_tokens": 38}),
    ("unedited-basis,min_result_tokens=100", {"min_result_tokens": 117}),
    ("default,min_result_tokens=190", {"min_result_tokens": 190}),
    ("default,thinking_keep=1", {}),
    ("default,thinking_keep=2", {}),
    ("unedited-basis,thinking_keep=3", {}),
    ("default,thinking_keep=all", {"thinking_keep": "by-model"}),  # all, on haiku-5-5
    ("default,placeholder=[gone]", {}),
    ("default,min_result_tokens=16,placeholder=[gone]", {}),
]


@pytest.mark.parametrize(("spec", "found"), RULE_SETTINGS, ids=[s for s, _ in RULE_SETTINGS])
def test_the_probe_settles_each_rule_the_emulator_plays(spec: str, found: dict[str, Any]) -> None:
    played = parse_server_model(spec)
    report = probe_server(offline=True, server_model=spec)
    identified = report.identification.model
    assert identified is not None
    for field, value in {**played.to_json(), **found}.items():
        if field == "name":
            continue
        assert getattr(identified, field) == value, field
    assert all(f.settled for f in report.identification.findings)
    assert report.identification.cache_after_clearing is True  # the emulator caches it


def test_all_thinking_is_told_from_the_docs_default_on_an_older_model() -> None:
    # claude-sonnet-4-5 keeps one thinking turn by default (by-model): "all" is then its own.
    for spec, keep in (("unedited,thinking_keep=all", "all"), ("unedited", "by-model")):
        report = probe_server("claude-sonnet-4-5", offline=True, server_model=spec, max_usd=1)
        assert report.identification.thinking_keep == keep


def test_keeping_more_turns_than_the_probe_has_reads_as_all_and_says_how_many() -> None:
    report = probe_server(offline=True, server_model="unedited,thinking_keep=5")
    finding = next(f for f in report.identification.findings if f.rule.startswith("clear_think"))
    assert finding.settled and finding.text.startswith("keeps all thinking turns (4 earlier")
    assert finding.steps == ("think-1", "think-2", "think-3", "think-4", "think-5")


def test_the_text_report_names_the_rules_and_the_file() -> None:
    code, out, err = invoke("probe", "--offline", "--server-model", "default")
    assert code == 0
    assert "estimated at most $" in err and "(cap $0.25)" in err
    assert "trigger basis: vs the edited prompt (settled; basis-1, basis-2," in out
    assert "small-result line: 19 of the ladder's 29 results counted" in out
    assert "server model: default: trigger vs the edited prompt" in out
    assert EMULATOR_NOTE in out and "calibration written" not in out


def test_a_server_that_fits_no_model_is_reported_and_nothing_is_written() -> None:
    # Results of ~1,800 tokens never count: the ladder step clears nothing, which no size of
    # the ladder predicts.
    code, out, _ = invoke("probe", "--offline", "--server-model", "unedited,min_result_tokens=5000")
    assert code == 1
    assert "small-result line: 0 cleared fits no size of the ladder (not settled; ladder)" in out
    assert "no calibration written" in out
    assert load_calibration() is None


def test_without_a_key_it_refuses_and_sends_nothing() -> None:
    code, _, err = invoke("probe", "--yes")
    assert code == 2
    assert NO_KEY in err


def test_over_the_cap_it_refuses_before_sending() -> None:
    code, _, err = invoke("probe", "--offline", "--max-usd", "0.01")
    assert code == 2
    assert "over --max-usd 0.01" in err and "cheaper --model" in err
    code, _, err = invoke("probe", "--offline", "--model", "claude-unknown-9")
    assert code == 2 and "no known price" in err


def test_against_an_api_it_asks_first_and_no_means_nothing_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-probe")
    with running(server_model=parse_server_model("unedited-basis")) as emu:
        code, _, err = invoke("probe", "--base-url", emu.base_url, stdin="n\n")
        assert code == 2 and "not confirmed: nothing was sent" in err
        assert emu.requests == []
        code, out, err = invoke("probe", "--base-url", emu.base_url, stdin="y\n")
        assert code == 0, err
        assert "Send them?" in err and len(emu.requests) == len(plan_probe().steps)
    assert "server model: unedited-basis" in out


def test_the_money_spent_is_checked_after_every_request() -> None:
    # The first request (its history of three large results) costs about a cent.
    plan = dataclasses.replace(plan_probe(), max_usd=0.005)
    saved: list[Path] = []
    with running() as emu:
        client = AnthropicClient(
            api_key="k", base_url=emu.base_url, timeout_s=30.0, retry=RetryPolicy()
        )
        with pytest.raises(LimitError, match=r"spent \$0\.0\d{3}, over --max-usd 0\.005"):
            run_probe(plan, client, "emulator", save=lambda m, o: saved.append(Path()) or Path())
        assert len(emu.requests) == 1 and saved == []


def test_server_model_is_only_for_the_emulator() -> None:
    code, _, err = invoke("probe", "--server-model", "edited", "--yes")
    assert code == 2 and "only with --offline" in err


def test_python_callers_probe_with_the_same_function() -> None:
    import agentctl

    asked: list[str] = []
    report = agentctl.probe_server(
        offline=True,
        server_model="unedited-basis",
        confirm=lambda plan, target: asked.append(target) is None,
    )
    assert asked == ["the offline emulator (unedited-basis)"]
    assert report.identification.model == agentctl.parse_server_model("unedited-basis")
    with pytest.raises(agentctl.UsageError, match="not confirmed"):
        agentctl.probe_server(offline=True, confirm=lambda plan, target: False)


def test_with_no_answer_on_stdin_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-probe")
    with running() as emu:
        code, _, err = invoke("probe", "--base-url", emu.base_url, stdin="")
        assert code == 2 and "not confirmed: nothing was sent" in err
        assert emu.requests == []


def test_another_server_is_probed_and_its_rules_written_where_the_others_read_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-probe")
    server = parse_server_model("unedited-basis")
    with running(server_model=server) as emu, relay(emu.base_url) as url:
        data = probe_json("--base-url", url, "--yes")
    assert data["emulator"] is False and data["calibration_file"]
    assert load_calibration() == server  # written where the others read it
    assert resolve_server_model("").model == server


def test_the_probe_goes_where_anthropic_base_url_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-probe")
    with running() as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        code, out, err = invoke("probe", "--yes", "--json")
        assert code == 0, err
        assert len(emu.requests) == len(plan_probe().steps)
    assert f"to {emu.base_url} (ANTHROPIC_BASE_URL) on" in err
    assert json.loads(out)["target"] == f"{emu.base_url} (ANTHROPIC_BASE_URL)"
    assert load_calibration() is None  # the emulator answered: nothing written


def test_offline_and_a_base_url_are_two_targets() -> None:
    code, out, err = invoke("probe", "--offline", "--base-url", "http://127.0.0.1:9")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "agentctl: --offline and --base-url name two targets: give one of them"
    ]
