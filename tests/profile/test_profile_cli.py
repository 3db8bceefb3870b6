"""`agentctl profile init|show|check` end to end: CliRunner, plus subprocesses for exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentctl.cli.main import app
from agentctl.errors import ConfigError, UsageError
from agentctl.profile.loader import build_profile, resolve_profile

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def invoke(*args: str) -> object:
    return CliRunner().invoke(app, ["profile", *args])


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    code = "from agentctl.cli.main import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "profile", *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.dates
def test_init_writes_a_profile_equal_to_the_defaults(in_tmp: Path) -> None:
    result = CliRunner().invoke(app, ["profile", "init"])
    assert result.exit_code == 0
    assert result.stdout == "wrote agentctl.toml\n"
    from_file, _ = resolve_profile()  # found as ./agentctl.toml
    builtin, _ = build_profile({}, source=from_file.source, base_dir=in_tmp)
    assert from_file.source == "agentctl.toml"
    assert from_file == builtin


def test_init_refuses_to_overwrite_without_force(in_tmp: Path) -> None:
    target = in_tmp / "p.toml"
    target.write_text("# mine\n")
    result = CliRunner().invoke(app, ["profile", "init", str(target)])
    assert result.exit_code == UsageError.exit_code
    assert "use --force" in result.stderr
    assert target.read_text() == "# mine\n"
    forced = CliRunner().invoke(app, ["profile", "init", str(target), "--force"])
    assert forced.exit_code == 0
    assert target.read_text().startswith("# agentctl profile.")


def test_init_dash_prints_the_template(in_tmp: Path) -> None:
    result = CliRunner().invoke(app, ["profile", "init", "-"])
    assert result.exit_code == 0
    assert 'model = "claude-sonnet-5"' in result.stdout
    assert not (in_tmp / "agentctl.toml").exists()


@pytest.mark.dates
def test_show_json_has_profile_edits_and_betas(in_tmp: Path) -> None:
    result = CliRunner().invoke(
        app, ["profile", "show", str(CONFIGS / "aggressive.toml"), "--json"]
    )
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert sorted(data) == ["betas", "context_management", "profile", "source"]
    assert data["source"].endswith("aggressive.toml")
    assert data["profile"]["context_editing"]["tool_uses"]["trigger"] == 20000
    assert data["context_management"]["edits"][0]["trigger"] == {
        "type": "input_tokens",
        "value": 20000,
    }
    assert data["betas"] == ["context-management-2025-06-27", "compact-2026-01-12"]


@pytest.mark.dates
def test_show_built_in_default_prints_the_batched_edit_and_says_how_it_moves(in_tmp: Path) -> None:
    result = CliRunner().invoke(app, ["profile", "show", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["source"] == "<built-in>"
    assert data["context_management"] == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 20000},
                "keep": {"type": "tool_uses", "value": 4},
                "clear_at_least": {"type": "input_tokens", "value": 8000},
            },
            {
                "type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": 150000},
                "pause_after_compaction": False,
            },
        ]
    }
    assert "first passes 20000 input tokens" in result.stderr
    assert '{"type": "tool_uses", "value": B}' in result.stderr
    server = CliRunner().invoke(app, ["profile", "show", str(CONFIGS / "api-defaults.toml")])
    assert server.exit_code == 0
    assert "batched" not in server.stderr


@pytest.mark.dates
def test_show_puts_clear_thinking_first_and_applies_sets(in_tmp: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "profile",
            "show",
            "--json",
            "--set",
            "thinking.enabled=true",
            "--set",
            "context_editing.thinking.enabled=true",
        ],
    )
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["source"] == "<built-in>"
    types = [edit["type"] for edit in data["context_management"]["edits"]]
    assert types == ["clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"]


@pytest.mark.dates
def test_show_no_editing_sends_no_context_management(in_tmp: Path) -> None:
    from agentctl.agent.request import betas

    args = ["profile", "show", str(CONFIGS / "no-editing.toml"), "--json"]
    result = CliRunner().invoke(app, [*args, "--set", "tools.web_fetch=true"])
    data = json.loads(result.stdout)
    assert data["context_management"] is None
    # The same list the request builder sends (it owns the rule; show only reports it).
    profile, _ = resolve_profile(CONFIGS / "no-editing.toml", ["tools.web_fetch=true"])
    assert data["betas"] == betas(profile)
    assert profile.server_tools.web_fetch.enabled  # the old key still turns it on


@pytest.mark.dates
def test_show_plain_text_when_piped(in_tmp: Path) -> None:
    result = CliRunner().invoke(app, ["profile", "show", str(CONFIGS / "balanced.toml")])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f'source = "{CONFIGS / "balanced.toml"}"'
    assert "context_editing.tool_uses.trigger = 20000" in lines
    assert 'context_editing.tool_uses.strategy = "batched"' in lines
    assert "context_editing.tool_uses.exclude_tools = []" in lines
    assert f'memory.root = "{in_tmp / "memory"}"' in lines
    assert lines[-1] == 'betas = ["context-management-2025-06-27", "compact-2026-01-12"]'
    assert lines[-2].startswith(
        'context_management = {"edits": [{"type": "clear_tool_uses_20250919"'
    )


@pytest.mark.dates
def test_show_rich_table_renders(in_tmp: Path) -> None:
    from rich.console import Console

    from agentctl.cli.profile import render_rich
    from agentctl.profile.show import profile_origins, show_data

    console = Console(width=100, record=True, color_system=None)
    from agentctl.agent.request import build_context_management

    balanced = resolve_profile(CONFIGS / "balanced.toml")[0]
    first = build_context_management(balanced.context_editing)
    data = show_data(balanced, ["context-management-2025-06-27"], first)
    origins = profile_origins(CONFIGS / "balanced.toml", ["cache.ttl=1h"])
    render_rich(data, origins, console)
    text = console.export_text()
    assert "context_editing.tool_uses.keep" in text
    assert "keep.value" in text  # the API-field column
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.count("│") == 5}
    assert "│ file " in rows["context_editing.tool_uses.keep"]
    assert "│ --set " in rows["cache.ttl"]
    assert "│ default " in rows["api.timeout_s"]
    assert '"type": "clear_tool_uses_20250919"' in text
    assert "betas: context-management-2025-06-27" in text


@pytest.mark.dates
def test_warnings_go_to_stderr(in_tmp: Path) -> None:
    result = CliRunner().invoke(
        app, ["profile", "show", "--json", "--set", "model=claude-sonnet-4-5"]
    )
    assert result.exit_code == 0
    assert result.stderr.startswith("warning: model: 'claude-sonnet-4-5'")
    assert json.loads(result.stdout)["profile"]["model"] == "claude-sonnet-4-5"


@pytest.mark.dates
def test_check_ok_line_and_strict(in_tmp: Path) -> None:
    ok = CliRunner().invoke(app, ["profile", "check", str(CONFIGS / "balanced.toml")])
    assert ok.exit_code == 0
    assert ok.stdout == f"ok: {CONFIGS / 'balanced.toml'} (0 warnings)\n"
    warned = CliRunner().invoke(
        app,
        [
            "profile",
            "check",
            str(CONFIGS / "balanced.toml"),
            "--set",
            "model=claude-sonnet-4-5",
        ],
    )
    assert warned.exit_code == 0
    assert warned.stdout.endswith("(1 warning)\n")
    strict = CliRunner().invoke(
        app,
        [
            "profile",
            "check",
            str(CONFIGS / "balanced.toml"),
            "--strict",
            "--set",
            "model=claude-sonnet-4-5",
        ],
    )
    assert strict.exit_code == UsageError.exit_code


def test_check_bad_profile_is_one_config_error_line(in_tmp: Path) -> None:
    bad = in_tmp / "bad.toml"
    bad.write_text("[cache]\nttl = 5\n")
    result = CliRunner().invoke(app, ["profile", "check", str(bad)])
    assert result.exit_code == ConfigError.exit_code
    assert (
        result.stderr
        == f'agentctl: profile {bad}: cache.ttl: expected one of "5m", "1h", got integer 5\n'
    )


@pytest.mark.slow
@pytest.mark.dates
def test_real_exit_codes_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("model = \n")
    bad = run_cli("check", "bad.toml", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.startswith("agentctl: profile bad.toml: invalid TOML: ")
    assert "line 1" in bad.stderr
    assert "Traceback" not in bad.stderr
    missing = run_cli("show", "nope.toml", cwd=tmp_path)
    assert missing.returncode == 2
    assert "nope.toml: no such file" in missing.stderr
    (tmp_path / "agentctl.toml").write_text("")
    exists = run_cli("init", cwd=tmp_path)
    assert exists.returncode == 2
    assert "--force" in exists.stderr


@pytest.mark.slow
def test_profile_commands_do_not_import_the_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from agentctl.cli.main import app\n"
        "try:\n"
        "    app(['profile', 'show', '--json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        # pydantic is not checked: typer 0.29 imports it to coerce any command's arguments.
        "heavy = sorted(m for m in ('anthropic', 'httpx') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.endswith("HEAVY=\n")


def test_origins_skip_empty_tables_and_follow_sets(tmp_path: Path) -> None:
    from agentctl.profile.show import origin_of, profile_origins

    path = tmp_path / "p.toml"
    path.write_text("max_turns = 5\n[memory]\n# only a comment\n[cache]\nttl = '1h'\n")
    origins = profile_origins(path, ["context_editing.tool_uses={keep = 2}", "cache.ttl=5m"])
    assert origin_of("max_turns", origins) == "file"
    assert origin_of("memory.root", origins) == "default"
    assert origin_of("cache.ttl", origins) == "--set"
    assert origin_of("context_editing.tool_uses.keep", origins) == "--set"
    assert origin_of("context_editing.tool_uses.trigger", origins) == "default"


def test_check_reads_the_output_schema_a_run_would(in_tmp: Path) -> None:
    (in_tmp / "p.toml").write_text('[output]\nschema = "answer.json"\n')
    missing = CliRunner().invoke(app, ["profile", "check", "p.toml"])
    assert missing.exit_code == ConfigError.exit_code
    schema = in_tmp / "answer.json"
    assert missing.stderr == (
        f"agentctl: output schema {schema}: cannot read: No such file or directory\n"
    )
    (in_tmp / "answer.json").write_text('{"type": "object"}')
    ok = CliRunner().invoke(app, ["profile", "check", "p.toml"])
    assert ok.exit_code == 0, ok.output
