"""The caller's Python functions offered as tools (`agentctl.run(..., tools=[fn, ...])`).

Each function becomes a tool through the SDK's own `beta_tool` / `beta_async_tool`: named
after the function, its input schema from the type hints, its description and the
parameters' descriptions from the docstring, the model's input checked by pydantic before
the call. A sync function runs in the run's thread; an async one runs to its end in an event
loop of its own for each call (in a helper thread when the calling thread runs a loop
already). What a function raises goes back to the model as an `is_error` result, as the
SDK's tool runner does (an SDK `ToolError` with its own content); the run goes on.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentctl.errors import ToolError, UsageError
from agentctl.tools.registry import ToolContent

if TYPE_CHECKING:
    from anthropic.lib.tools import BetaAsyncFunctionTool, BetaFunctionTool

    SdkTool = BetaFunctionTool[Any] | BetaAsyncFunctionTool[Any]

# The API's rule for a custom tool's name.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


class FunctionTool:
    """One Python function as a client-side tool (the ToolBox's `Tool` protocol)."""

    self_limited = False

    def __init__(self, tool: SdkTool, *, is_async: bool) -> None:
        self._tool = tool
        self._async = is_async

    @property
    def name(self) -> str:
        return str(self._tool.name)

    def definition(self) -> dict[str, Any]:
        return dict(self._tool.to_dict())

    def call(self, tool_input: Mapping[str, Any]) -> ToolContent:
        # The SDK's tool helpers: loaded with the first function a run offers.
        from anthropic.lib.tools import ToolError as SdkToolError

        try:
            if self._async:
                result = run_coroutine(self._tool.call(dict(tool_input)))  # type: ignore[arg-type]
            else:
                result = self._tool.call(dict(tool_input))
        except SdkToolError as err:  # the function's own error content
            raise ToolError(_as_text(err.content)) from None
        except ValueError as err:
            if err.__cause__ is None or "Invalid arguments" not in str(err):
                raise
            # pydantic's account of what is wrong, for the model to fix its input
            raise ToolError(f"Error: {err}: {err.__cause__}") from None
        return result_content(result)


def function_tools(functions: Iterable[Any], taken: Iterable[str] = ()) -> tuple[FunctionTool, ...]:
    """`functions` (plain functions, coroutine functions, or tools the SDK's `beta_tool` /
    `beta_async_tool` made) as tools; UsageError for one that cannot be a tool or whose name
    is used twice or by another tool of the run (`taken`)."""
    # The SDK's tool helpers take over a second to import (with the SDK): only when asked.
    from anthropic.lib.tools import (
        BetaAsyncFunctionTool,
        BetaFunctionTool,
        beta_async_tool,
        beta_tool,
    )

    seen = set(taken)
    tools: list[FunctionTool] = []
    for item in functions:
        if isinstance(item, BetaFunctionTool | BetaAsyncFunctionTool):
            tool = FunctionTool(item, is_async=isinstance(item, BetaAsyncFunctionTool))
        elif inspect.iscoroutinefunction(item):
            tool = FunctionTool(beta_async_tool(_named(item)), is_async=True)
        elif callable(item):
            tool = FunctionTool(beta_tool(_named(item)), is_async=False)
        else:
            raise UsageError(f"tools: {item!r} is not a function")
        if tool.name in seen:
            raise UsageError(f"tools: a tool named {tool.name!r} is offered already")
        seen.add(tool.name)
        tools.append(tool)
    return tuple(tools)


def _named(function: Callable[..., Any]) -> Callable[..., Any]:
    name = getattr(function, "__name__", "")
    if not TOOL_NAME.fullmatch(name):
        raise UsageError(
            f"tools: {name or repr(function)!r} is not a valid tool name (letters, digits, _ "
            "and -; wrap it with anthropic.lib.tools.beta_tool(fn, name=...))"
        )
    return function


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run `coroutine` to its end in a new event loop: here, or in a helper thread when this
    thread runs a loop already (a synchronous `agentctl.run` called from async code)."""
    # asyncio takes tens of milliseconds to import: only for a run with an async function.
    import asyncio
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as err:  # re-raised in the calling thread
            outcome["error"] = err

    helper = threading.Thread(target=target, name="agentctl-async-tool", daemon=True)
    helper.start()
    helper.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def result_content(result: Any) -> ToolContent:
    """A function's return value as a tool result: text as is, a list of content blocks (text,
    image, document) as they are, None as "", anything else as JSON."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    if isinstance(result, list) and result and all(_is_block(b) for b in result):
        return [dict(b) for b in result]
    return json.dumps(result, default=str, ensure_ascii=False)


def _is_block(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") in ("text", "image", "document")


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", f"[{b.get('type')}]")) for b in content)
