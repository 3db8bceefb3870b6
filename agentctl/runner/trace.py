"""OpenTelemetry spans of runs and batches, following the GenAI semantic conventions
(docs/tracing.md): `invoke_agent agentctl` per run, `chat MODEL` per request, `execute_tool
NAME` per tool call; `batch` and `task ID` around a batch's runs.

Spans go to the global tracer provider, so a Python caller's own provider receives them; the
CLI sets one up from the standard `OTEL_*` variables (`traces_from_env`). Nothing of
OpenTelemetry is imported here at module level: a run looks for a provider only when
`opentelemetry.trace` is already loaded (a provider cannot be set without it), so without
one a run costs a dictionary lookup and each step a `nullcontext`.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from agentctl.agent.model import ModelResponse
from agentctl.agent.trace_hooks import NullTrace, OnResponse, OnToolCall, Trace
from agentctl.errors import UsageError
from agentctl.types import MEMORY_TOOL, ResultEvent, ToolCall, Usage

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

    from agentctl.runner.plan import Plan

SCOPE = "agentctl"
PROVIDER = "anthropic"  # gen_ai.provider.name (and the older gen_ai.system)
AGENT = "agentctl"  # gen_ai.agent.name
MEMORY_WRITES = frozenset({"create", "str_replace", "insert", "delete", "rename"})
EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
DISABLED_ENV = "OTEL_SDK_DISABLED"


def tracer() -> Tracer | None:
    """agentctl's tracer when runs should emit spans: someone set a global tracer provider
    (a Python caller, or `traces_from_env`). None otherwise, importing nothing."""
    api = sys.modules.get("opentelemetry.trace")
    if api is None:  # never imported: no provider can have been set
        return None
    from opentelemetry import trace  # already loaded (above): costs a lookup

    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    from agentctl import __version__

    return provider.get_tracer(SCOPE, __version__)


def tracing() -> bool:
    """Whether runs emit spans now (see `tracer`). While they do, the SDK clients agentctl
    builds leave the `anthropic` SDK's own request spans off: the `chat` span carries the
    same usage, and a backend summing `gen_ai.usage.*` would count each request twice."""
    return tracer() is not None


class RunTrace:
    """The `invoke_agent` span of one run and the steps under it (the loop's `Trace`)."""

    def __init__(self, tracer: Tracer, span: Span, cost: Callable[[Usage], float]) -> None:
        from opentelemetry import trace

        self._tracer = tracer
        self._span = span
        self._parent = trace.set_span_in_context(span)
        self._cost = cost

    @property
    def steps(self) -> Trace:
        """The loop's trace of the run's requests and tool calls: spans under the run's."""
        return self

    def request(self, turn: int, request: Mapping[str, Any]) -> AbstractContextManager[OnResponse]:
        from opentelemetry.trace import SpanKind

        model = str(request.get("model", ""))
        attributes: dict[str, AttributeValue] = {
            **_genai("chat"),
            "gen_ai.request.model": model,
            "agentctl.turn": turn,
        }
        if isinstance(request.get("max_tokens"), int):
            attributes["gen_ai.request.max_tokens"] = int(request["max_tokens"])
        span = self._tracer.start_span(
            f"chat {model}", self._parent, kind=SpanKind.CLIENT, attributes=attributes
        )
        return _step(span, lambda response: _answered(span, response, self._cost))

    def tool(
        self, turn: int, name: str, tool_input: Mapping[str, Any]
    ) -> AbstractContextManager[OnToolCall]:
        attributes: dict[str, AttributeValue] = {
            **_genai("execute_tool"),
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": _tool_type(name),
            "agentctl.turn": turn,
        }
        if name == MEMORY_TOOL:
            command = str(tool_input.get("command", ""))
            path = tool_input.get("path", tool_input.get("old_path", ""))
            attributes["agentctl.memory.command"] = command
            attributes["agentctl.memory.path"] = str(path)
            attributes["agentctl.memory.write"] = command in MEMORY_WRITES
        span = self._tracer.start_span(f"execute_tool {name}", self._parent, attributes=attributes)
        return _step(span, lambda call: _called(span, call))

    def ended(self, result: ResultEvent) -> None:
        """The run's outcome and totals on its span (`agentctl.*`, never `gen_ai.usage.*`:
        the `chat` spans carry those, and a backend sums them)."""
        totals = result.totals
        attributes: dict[str, AttributeValue] = {
            "agentctl.turns": result.turns,
            "agentctl.stop_reason": result.stop_reason,
            "agentctl.cleared_input_tokens": totals.cleared_input_tokens,
            "agentctl.cleared_tool_uses": totals.cleared_tool_uses,
            "agentctl.tool_failures": totals.tool_failures,
            **_usage("agentctl.usage.", totals.usage),
        }
        if math.isfinite(totals.cost_usd):
            attributes["agentctl.cost_usd"] = round(totals.cost_usd, 6)
        self._span.set_attributes(attributes)


class _NoRun:
    """What `traced_run` yields when nothing traces: the loop's `NullTrace`, no span."""

    steps: Trace = NullTrace()

    def ended(self, result: ResultEvent) -> None:
        del result


@contextmanager
def traced_run(plan: Plan) -> Iterator[RunTrace | _NoRun]:
    """The run's `invoke_agent` span (current while the run goes: it nests under a caller's
    span, or a batch's `task` span), ended with the run's error status if it raised."""
    found = tracer()
    if found is None:
        yield _NoRun()
        return
    with found.start_as_current_span(
        f"invoke_agent {AGENT}",
        attributes=_run_attributes(plan),
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        run = RunTrace(found, span, plan.pricing().cost)
        try:
            yield run
        except BaseException as exc:
            _fail(span, exc)
            raise


def _run_attributes(plan: Plan) -> dict[str, AttributeValue]:
    return {
        **_genai("invoke_agent"),
        "gen_ai.agent.name": AGENT,
        "gen_ai.conversation.id": plan.session,
        "gen_ai.request.model": plan.profile.model,
        "agentctl.session": plan.session,
        "agentctl.task": plan.task_source,
        "agentctl.profile": plan.profile.source,
        "agentctl.offline": plan.offline,
        "agentctl.first_turn": plan.first_turn,
    }


def _genai(operation: str) -> dict[str, AttributeValue]:
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.system": PROVIDER,
    }


def _tool_type(name: str) -> str:
    """gen_ai.tool.type: the memory tool is a datastore, an MCP server's tool an extension."""
    if name == MEMORY_TOOL:
        return "datastore"
    return "extension" if name.startswith("mcp__") else "function"


@contextmanager
def _step(span: Span, on_end: Callable[[Any], None]) -> Iterator[Callable[[Any], None]]:
    """`span` for one step: `on_end` sets what it ended with; an exception, its error status."""
    try:
        yield on_end
    except BaseException as exc:
        _fail(span, exc)
        raise
    finally:
        span.end()


def _fail(span: Span, exc: BaseException) -> None:
    """The error status of a span whose step raised (not when its generator was closed)."""
    from opentelemetry.trace import Status, StatusCode

    if isinstance(exc, GeneratorExit):
        return
    if isinstance(exc, KeyboardInterrupt):
        kind = "interrupted"
    else:
        kind = str(getattr(exc, "kind", "")) or type(exc).__qualname__
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, str(exc) or kind))


def _usage(prefix: str, usage: Usage) -> dict[str, AttributeValue]:
    """The usage figures under `prefix`, with the semantic conventions' names: input tokens
    are everything the model read (uncached, cache writes and cache reads)."""
    return {
        f"{prefix}input_tokens": usage.prompt_tokens,
        f"{prefix}output_tokens": usage.output_tokens,
        f"{prefix}cache_read.input_tokens": usage.cache_read_input_tokens,
        f"{prefix}cache_creation.input_tokens": usage.cache_creation_input_tokens,
    }


def _answered(span: Span, response: ModelResponse, cost: Callable[[Usage], float]) -> None:
    """The `chat` span's response attributes, and one `context_edit` event per applied edit."""
    attributes: dict[str, AttributeValue] = {
        **_usage("gen_ai.usage.", response.usage),
        "gen_ai.response.finish_reasons": [response.stop_reason],
        "agentctl.applied_edits": len(response.applied_edits),
        "agentctl.cleared_input_tokens": sum(
            e.cleared_input_tokens for e in response.applied_edits
        ),
        "agentctl.cleared_tool_uses": sum(e.cleared_tool_uses for e in response.applied_edits),
        "agentctl.compactions": response.usage.compactions,
    }
    for key, field in (("gen_ai.response.id", "id"), ("gen_ai.response.model", "model")):
        if isinstance(response.raw.get(field), str):
            attributes[key] = response.raw[field]
    if response.request_id:
        attributes["agentctl.request_id"] = response.request_id
    price = cost(response.usage)
    if math.isfinite(price):
        attributes["agentctl.cost_usd"] = round(price, 6)
    span.set_attributes(attributes)
    for edit in response.applied_edits:
        span.add_event(
            "context_edit",
            {
                "agentctl.edit.type": edit.type,
                "agentctl.edit.cleared_input_tokens": edit.cleared_input_tokens,
                "agentctl.edit.cleared_tool_uses": edit.cleared_tool_uses,
                "agentctl.edit.cleared_thinking_turns": edit.cleared_thinking_turns,
            },
        )


def _called(span: Span, call: ToolCall) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attributes(
        {
            "gen_ai.tool.call.id": call.id,
            "agentctl.tool.is_error": call.is_error,
            "agentctl.tool.denied": call.denied,
            "agentctl.tool.result_chars": call.result_chars,
        }
    )
    if call.denied:
        span.set_attribute("error.type", "denied")
        span.set_status(Status(StatusCode.ERROR, "denied by the [approval] rules"))
    elif call.is_error:
        span.set_attribute("error.type", "tool_error")
        span.set_status(Status(StatusCode.ERROR, "the tool's result is an error (is_error)"))


# Batches: a `batch` span, one `task ID` span per task (on its worker thread, current there,
# so the task's run nests under it when it runs in this process).

OnLine = Callable[[Mapping[str, Any]], None]


class BatchTrace:
    """Opens the `task` spans of one batch under its `batch` span."""

    def __init__(self, tracer: Tracer | None, parent: Context | None) -> None:
        self._tracer = tracer
        self._parent = parent

    def task(self, task_id: str) -> AbstractContextManager[OnLine]:
        """The task's span, current on the calling (worker) thread while the task runs;
        called with the task's results.jsonl line when it ends."""
        if self._tracer is None:
            return nullcontext(_ignore_line)
        return self._task(self._tracer, task_id)

    @contextmanager
    def _task(self, tracer: Tracer, task_id: str) -> Iterator[OnLine]:
        with tracer.start_as_current_span(
            f"task {task_id}",
            self._parent,
            attributes={"agentctl.batch.task": task_id},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield lambda line: _task_line(span, line)
            except BaseException as exc:
                _fail(span, exc)
                raise


def _ignore_line(line: Mapping[str, Any]) -> None:
    del line


def _task_line(span: Span, line: Mapping[str, Any]) -> None:
    from opentelemetry.trace import Status, StatusCode

    attributes: dict[str, AttributeValue] = {}
    for key in ("status", "exit_code", "cost_usd", "session", "turns"):
        value = line.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            attributes[f"agentctl.batch.{key}"] = value
    span.set_attributes(attributes)
    if line.get("status") == "failed":
        span.set_attribute("error.type", "task_failed")
        span.set_status(Status(StatusCode.ERROR, str(line.get("error", ""))))


@contextmanager
def traced_batch(tasks: int, executor: str, via: str) -> Iterator[BatchTrace]:
    """The `batch` span (current in the calling thread) for `tasks` tasks run on `executor`."""
    found = tracer()
    if found is None:
        yield BatchTrace(None, None)
        return
    from opentelemetry import trace

    attributes: dict[str, AttributeValue] = {
        "agentctl.batch.tasks": tasks,
        "agentctl.batch.executor": executor,
        "agentctl.batch.via": via,
    }
    with found.start_as_current_span(
        "batch", attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield BatchTrace(found, trace.set_span_in_context(span))
        except BaseException as exc:
            _fail(span, exc)
            raise


# The CLI's provider, from the standard environment variables.


def wanted_exporters(environ: Mapping[str, str]) -> list[str]:
    """The span exporters `OTEL_TRACES_EXPORTER` names (none when unset, `none`, or
    `OTEL_SDK_DISABLED=true`)."""
    if environ.get(DISABLED_ENV, "").strip().lower() == "true":
        return []
    names = [n.strip().lower() for n in environ.get(EXPORTER_ENV, "").split(",")]
    return [n for n in names if n and n != "none"]


_from_env: list[TracerProvider] = []  # the provider traces_from_env set in this process


@contextmanager
def traces_from_env(environ: Mapping[str, str] | None = None) -> Iterator[None]:
    """While the block runs, a global tracer provider exporting to what `OTEL_TRACES_EXPORTER`
    names (`console`: to stderr; others: the exporters installed under that name, `otlp` with
    `opentelemetry-exporter-otlp`), flushed after. Nothing when it names none. The provider is
    set once per process (a global provider cannot be replaced): a later block, such as the
    next line of a conversation on stdin, uses it again; the SDK shuts it down at exit.
    UsageError (exit 2) when the SDK or a named exporter is missing."""
    env = os.environ if environ is None else environ
    names = wanted_exporters(env)
    if not names:
        yield
        return
    if not _from_env:
        from opentelemetry import trace

        provider = _provider(names, env)
        trace.set_tracer_provider(provider)
        _from_env.append(provider)
    try:
        yield
    finally:
        _from_env[0].force_flush()


def exporter_problem(names: list[str], env: Mapping[str, str]) -> str | None:
    """Why spans cannot go to the exporters `names` (the SDK, or one of them, is not
    installed), or None; imports neither."""
    from importlib.metadata import entry_points

    if importlib.util.find_spec("opentelemetry.sdk") is None:
        return (
            f"${EXPORTER_ENV}={env.get(EXPORTER_ENV, '')} asks for traces, but the OpenTelemetry"
            f" SDK is not installed: pip install 'agentctl[otel]' (or unset {EXPORTER_ENV})"
        )
    installed = {e.name for e in entry_points(group="opentelemetry_traces_exporter")}
    for name in names:
        if name != "console" and name not in installed:
            hint = " (pip install opentelemetry-exporter-otlp)" if name.startswith("otlp") else ""
            return f"${EXPORTER_ENV}: no span exporter named {name!r} is installed{hint}"
    return None


def _provider(names: list[str], env: Mapping[str, str]) -> TracerProvider:
    problem = exporter_problem(names, env)
    if problem is not None:
        raise UsageError(problem)
    # The SDK is an optional extra (agentctl[otel]): only when traces are asked for.
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": AGENT}))
    provider = TracerProvider(resource=resource)
    for name in names:
        provider.add_span_processor(_processor(name))
    return provider


def _processor(name: str) -> Any:
    """A span processor for the exporter `name`: console spans go to stderr at once (stdout
    carries the answer); the others are batched and flushed when the provider shuts down."""
    from importlib.metadata import entry_points

    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    if name == "console":
        return SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr))
    (found,) = [e for e in entry_points(group="opentelemetry_traces_exporter") if e.name == name]
    return BatchSpanProcessor(found.load()())
