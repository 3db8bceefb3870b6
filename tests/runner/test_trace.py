"""OpenTelemetry spans of runs and batches (runner/trace.py, docs/tracing.md), read back from the
SDK's in-memory exporter; every run goes through the real `anthropic` SDK to the emulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once
from typer.testing import CliRunner

import agentctl
from agentctl.cli.main import app
from agentctl.emulator import running
from agentctl.errors import UsageError
from agentctl.runner.trace import traces_from_env, tracing, wanted_exporters
from tests.import_probe import loaded_after

EXPORTER = "OTEL_TRACES_EXPORTER"
SWEEP = "# Sweep\n\nRead every file and collect every FINDING line. Answer with the list.\n"
CLEARING = """
model = "claude-sonnet-5"
max_turns = 40
[context_editing.tool_uses]
trigger = 5000
keep = 1
clear_at_least = 0
[tools]
memory = true
workspace = true
"""


def _reset_global_provider() -> None:
    # The global provider can be set once per process; OpenTelemetry's own test utilities
    # (opentelemetry-test-utils, reset_trace_globals) put it back this way.
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """A global tracer provider recording into memory for this test only."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _reset_global_provider()
    trace.set_tracer_provider(provider)
    yield exporter
    provider.shutdown()
    _reset_global_provider()


def sweep_workspace(folder: Path) -> Path:
    folder.mkdir()
    for i in range(6):
        lines = [f"entry {n}: shard replica queue {i}" for n in range(150)]
        (folder / f"log-{i}.txt").write_text("\n".join(lines) + f"\nFINDING {i}\n")
    return folder


def named(found: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in found if s.name.startswith(prefix)]


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


@pytest.mark.dates
@pytest.mark.slow  # about 3 s: eleven turns through the emulator
def test_a_run_with_tool_calls_and_clearings_is_one_span_tree(
    tmp_path: Path, spans: InMemorySpanExporter
) -> None:
    profile = tmp_path / "clearing.toml"
    profile.write_text(CLEARING)
    result = agentctl.run(
        SWEEP, profile=profile, offline=True, workspace=sweep_workspace(tmp_path / "ws"),
        memory_root=tmp_path / "mem", record=False,
    )  # fmt: skip
    found = spans.get_finished_spans()
    (run,) = named(found, "invoke_agent")
    chats, tools = named(found, "chat "), named(found, "execute_tool ")
    assert run.parent is None and run.attributes is not None
    assert len(found) == 1 + len(chats) + len(tools)  # no span of the SDK's own
    assert {parent_id(s) for s in chats + tools} == {span_id(run)}
    assert run.attributes["gen_ai.conversation.id"] == result.session_id
    assert run.attributes["agentctl.turns"] == len(result.turns)
    assert run.attributes["agentctl.cleared_tool_uses"] == result.totals.cleared_tool_uses > 0
    assert run.attributes["agentctl.usage.input_tokens"] == result.totals.usage.prompt_tokens
    assert "gen_ai.usage.input_tokens" not in run.attributes  # counted on the chat spans only
    assert [c.attributes and c.attributes["agentctl.turn"] for c in chats] == [
        t.turn for t in result.turns
    ]
    for chat, turn in zip(chats, result.turns, strict=True):
        attributes = chat.attributes or {}
        assert chat.name == "chat claude-sonnet-5" and chat.kind == trace.SpanKind.CLIENT
        assert attributes["gen_ai.usage.input_tokens"] == turn.usage.prompt_tokens
        assert attributes["gen_ai.usage.output_tokens"] == turn.usage.output_tokens
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == (
            turn.usage.cache_read_input_tokens
        )
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == (
            turn.usage.cache_creation_input_tokens
        )
        assert attributes["gen_ai.response.finish_reasons"] == (turn.stop_reason,)
        assert str(attributes["gen_ai.response.id"]).startswith("msg_")
        assert attributes["agentctl.cleared_tool_uses"] == sum(
            e.cleared_tool_uses for e in turn.applied_edits
        )
        edits = [(e.name, dict(e.attributes or {})) for e in chat.events]
        assert edits == [
            ("context_edit", {
                "agentctl.edit.type": e.type,
                "agentctl.edit.cleared_input_tokens": e.cleared_input_tokens,
                "agentctl.edit.cleared_tool_uses": e.cleared_tool_uses,
                "agentctl.edit.cleared_thinking_turns": e.cleared_thinking_turns,
            })
            for e in turn.applied_edits
        ]  # fmt: skip
    assert sum(bool(c.events) for c in chats) >= 3  # several clearing turns
    calls = [c for t in result.turns for c in t.tool_calls]
    assert [s.name for s in tools] == [f"execute_tool {c.name}" for c in calls]
    memory = [s.attributes or {} for s in tools if s.name == "execute_tool memory"]
    assert memory and all(m["gen_ai.tool.type"] == "datastore" for m in memory)
    writes = [m for m in memory if m["agentctl.memory.write"]]
    assert {m["agentctl.memory.command"] for m in writes} <= {"create", "str_replace", "insert"}
    assert writes and all(str(m["agentctl.memory.path"]).startswith("/memories") for m in writes)
    assert all(s.status.status_code == StatusCode.UNSET for s in found)


TOOL_ERROR_SCRIPT = """
[[turn]]
text = "Checking my notes."
[[turn.tool_use]]
name = "memory"
input = {command = "view", path = "/memories/missing.md"}

[[turn]]
text = "done"
"""


@pytest.mark.dates
def test_a_tool_error_and_an_api_error_set_error_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spans: InMemorySpanExporter
) -> None:
    script = tmp_path / "script.toml"
    script.write_text(TOOL_ERROR_SCRIPT)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with running(script=script) as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        result = agentctl.run("Go.", memory_root=tmp_path / "mem", record=False)
    assert result.text == "done"
    (tool,) = named(spans.get_finished_spans(), "execute_tool")
    assert tool.status.status_code == StatusCode.ERROR
    assert tool.attributes and tool.attributes["agentctl.tool.is_error"] is True
    assert named(spans.get_finished_spans(), "invoke_agent")[0].status.status_code == (
        StatusCode.UNSET
    )
    spans.clear()
    with running(faults="echokey@1") as emulator:  # a 401: not retried, an API error
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        with pytest.raises(agentctl.ApiError):
            agentctl.run("Go.", memory_root=tmp_path / "mem", record=False)
    found = spans.get_finished_spans()
    assert [s.name for s in found] == [f"chat {agentctl.Profile().model}", "invoke_agent agentctl"]
    for span in found:
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes and span.attributes["error.type"] == "api"
    spans.clear()
    strict = tmp_path / "strict.toml"
    strict.write_text('[approval]\ndeny = ["memory"]\n')
    with running(script=script) as emulator:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
        agentctl.run("Go.", profile=strict, memory_root=tmp_path / "mem", record=False)
    (denied,) = named(spans.get_finished_spans(), "execute_tool")
    assert denied.status.status_code == StatusCode.ERROR and denied.attributes
    assert denied.attributes["error.type"] == "denied"
    assert denied.attributes["agentctl.tool.denied"] is True


@pytest.mark.dates
@pytest.mark.slow  # an offline run: about 2 s on a loaded machine
def test_a_run_nests_under_the_callers_span(tmp_path: Path, spans: InMemorySpanExporter) -> None:
    tracer = trace.get_tracer("users-app")
    with tracer.start_as_current_span("nightly job") as outer:
        agentctl.run("Say hello.", offline=True, memory_root=tmp_path / "mem", record=False)
    (run,) = named(spans.get_finished_spans(), "invoke_agent")
    assert parent_id(run) == outer.get_span_context().span_id


@pytest.mark.dates
@pytest.mark.slow  # two tasks, each with its own emulator
def test_a_batch_nests_each_task_and_its_run(tmp_path: Path, spans: InMemorySpanExporter) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("a", "b"):
        (tasks / f"{name}.md").write_text(f"# {name}\n\nSay hello.\n")
    report = agentctl.run_batch(tasks, offline=True, parallel=2, out=tmp_path / "out")
    assert [line["status"] for line in report.results] == ["ok", "ok"]
    found = spans.get_finished_spans()
    (batch,) = named(found, "batch")
    task_spans = named(found, "task ")
    runs = named(found, "invoke_agent")
    assert (
        batch.parent is None and batch.attributes and batch.attributes["agentctl.batch.tasks"] == 2
    )
    assert sorted(s.name for s in task_spans) == ["task a", "task b"]
    assert {parent_id(s) for s in task_spans} == {span_id(batch)}
    assert {parent_id(r) for r in runs} == {span_id(s) for s in task_spans}
    for span in task_spans:
        assert span.attributes and span.attributes["agentctl.batch.status"] == "ok"
    chats = named(found, "chat ")
    assert {parent_id(c) for c in chats} == {span_id(r) for r in runs}
    assert len({s.context.trace_id for s in found if s.context}) == 1


@pytest.mark.dates
@pytest.mark.slow  # an offline run: about 2 s on a loaded machine
def test_nothing_is_traced_without_a_provider(tmp_path: Path) -> None:
    _reset_global_provider()
    assert not tracing()
    result = agentctl.run("Say hello.", offline=True, memory_root=tmp_path / "mem", record=False)
    assert result.stop_reason == "end_turn"
    assert not tracing()


@pytest.mark.slow  # a fresh interpreter
def test_import_and_a_run_without_tracing_load_no_opentelemetry_sdk(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTCTL_HOME": str(tmp_path / "home")}
    env.pop("OTEL_TRACES_EXPORTER", None)
    _, loaded = loaded_after("import agentctl", ("opentelemetry",), env)
    assert loaded == []
    mem = str(tmp_path / "mem")
    code = f"import agentctl\nagentctl.run('Hi.', offline=True, memory_root={mem!r}, record=False)"
    _, loaded = loaded_after(code, ("opentelemetry.sdk", "agentctl.runner.trace"), env)
    assert loaded == ["agentctl.runner.trace"]  # the module, not the SDK


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({}, []),
        ({"OTEL_TRACES_EXPORTER": "none"}, []),
        ({"OTEL_TRACES_EXPORTER": " Console , otlp"}, ["console", "otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, []),
    ],
)
def test_the_exporters_the_environment_names(env: dict[str, str], names: list[str]) -> None:
    assert wanted_exporters(env) == names


def test_an_exporter_that_is_not_installed_is_a_usage_error() -> None:
    missing = "no span exporter named 'zipkin' is installed"
    with pytest.raises(UsageError, match=missing), traces_from_env({EXPORTER: "zipkin"}):
        pass
    otlp = "pip install opentelemetry-exporter-otlp"
    with pytest.raises(UsageError, match=otlp), traces_from_env({EXPORTER: "otlp"}):
        pass
    assert not tracing()  # nothing was set up


def _cli(
    args: list[str], cwd: Path, env: dict[str, str], prelude: str = ""
) -> subprocess.CompletedProcess[str]:
    code = f"import sys\n{prelude}from agentctl.cli.main import main\n"
    code += f"sys.argv = ['agentctl', *{args!r}]\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.dates
@pytest.mark.slow  # a fresh interpreter
def test_the_cli_console_exporter_writes_spans_to_stderr(tmp_path: Path) -> None:
    (tmp_path / "task.md").write_text("# T\n\nSay hello.\n")
    env = {
        **os.environ,
        "AGENTCTL_HOME": str(tmp_path / "home"),
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_SERVICE_NAME": "nightly-agents",
    }
    done = _cli(["run", "task.md", "--offline", "--json"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]  # stdout: NDJSON only
    result = events[-1]
    assert result["event"] == "result"
    found = console_spans(done.stderr)
    names = [s["name"] for s in found]
    assert names.count(f"chat {agentctl.Profile().model}") == result["turns"]
    assert names[-1] == "invoke_agent agentctl"
    assert found[-1]["attributes"]["agentctl.session"] == result["session"]
    assert {s["resource"]["attributes"]["service.name"] for s in found} == {"nightly-agents"}


@pytest.mark.slow  # a fresh interpreter
def test_the_cli_without_the_sdk_says_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "task.md").write_text("# T\n\nSay hello.\n")
    env = {**os.environ, "AGENTCTL_HOME": str(tmp_path / "home"), "OTEL_TRACES_EXPORTER": "otlp"}
    # The SDK made unimportable, as when the extra is not installed.
    hide = "sys.modules['opentelemetry.sdk'] = None\n"
    done = _cli(["run", "task.md", "--offline"], tmp_path, env, prelude=hide)
    assert done.returncode == 2
    assert "pip install 'agentctl[otel]'" in done.stderr
    assert "OTEL_TRACES_EXPORTER=otlp" in done.stderr
    assert done.stdout == ""


HOSTILE_SCRIPT = """
[[turn]]
text = "Checking."
[[turn.tool_use]]
name = "memory"
input = {command = "view", path = "/memories/\\u001b[2J\\u001b]0;owned\\u0007.md"}

[[turn]]
text = "done"
"""


@pytest.mark.dates
@pytest.mark.slow  # a fresh interpreter
def test_console_spans_carry_what_the_model_sent_without_control_characters(
    tmp_path: Path,
) -> None:
    (tmp_path / "task.md").write_text("# T\n\nGo.\n")
    script = tmp_path / "script.toml"
    script.write_text(HOSTILE_SCRIPT)
    with running(script=script) as emulator:
        env = {
            **os.environ,
            "AGENTCTL_HOME": str(tmp_path / "home"),
            "OTEL_TRACES_EXPORTER": "console",
            "ANTHROPIC_BASE_URL": emulator.base_url,
            "ANTHROPIC_API_KEY": "test-key",
        }
        done = _cli(["run", "task.md", "-q"], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "execute_tool memory" in done.stderr
    assert "\\u001b[2J" in done.stderr  # the path, escaped as JSON
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr


@pytest.mark.parametrize(
    ("env", "value", "ok"),
    [
        ({"OTEL_TRACES_EXPORTER": "console"}, "console ($OTEL_TRACES_EXPORTER)", True),
        (
            {"OTEL_TRACES_EXPORTER": "console,otlp"},
            "$OTEL_TRACES_EXPORTER: no span exporter named 'otlp' is installed"
            " (pip install opentelemetry-exporter-otlp)",
            False,
        ),
        (
            {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"},
            "off ($OTEL_TRACES_EXPORTER, $OTEL_SDK_DISABLED)",
            None,
        ),
    ],
)
def test_doctor_says_where_spans_would_go(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    value: str,
    ok: bool | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, setting in env.items():
        monkeypatch.setenv(name, setting)
    result = CliRunner().invoke(app, ["doctor", "--json"])
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    assert checks["traces"] == {"check": "traces", "value": value, "ok": ok}
    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    plain = CliRunner().invoke(app, ["doctor", "--json"])
    assert "traces" not in {c["check"] for c in json.loads(plain.stdout)}


def console_spans(stderr: str) -> list[dict[str, Any]]:
    """The spans the console exporter wrote, in the order they ended."""
    decoder, at, found = json.JSONDecoder(), 0, []
    while (at := stderr.find("{\n", at)) >= 0:
        span, at = decoder.raw_decode(stderr, at)
        found.append(span)
    return found


@pytest.mark.dates
@pytest.mark.slow  # a fresh interpreter
def test_a_conversation_on_stdin_is_one_conversation_id_across_its_runs(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "AGENTCTL_HOME": str(tmp_path / "home"),
        "OTEL_TRACES_EXPORTER": "console",
    }
    lines = '{"text": "Say hello."}\n{"text": "Say it again."}\n'
    code = "import sys\nfrom agentctl.cli.main import main\n"
    code += (
        "sys.argv = ['agentctl', 'run', '-', '--input-format', 'ndjson', '--offline', '--json']\n"
    )
    code += "main()\n"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, input=lines,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = [json.loads(x) for x in done.stdout.splitlines() if '"event": "result"' in x]
    runs = [s for s in console_spans(done.stderr) if s["name"] == "invoke_agent agentctl"]
    assert len(runs) == len(results) == 2  # the second line's spans were not lost
    ids = {s["attributes"]["gen_ai.conversation.id"] for s in runs}
    assert ids == {results[0]["session"]}
