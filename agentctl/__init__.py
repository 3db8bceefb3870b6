"""agentctl: run long Claude agents with memory and context editing, from the CLI or Python.

    import agentctl
    result = agentctl.run("Summarise the notes in memory.", offline=True)
    batch = agentctl.run_batch("tasks/", offline=True, parallel=4)

The names below load on first use, so `import agentctl` stays light (no anthropic, rich or
typer until a run needs them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_HOMES = {
    "run": "agentctl.runner",
    "load_profile": "agentctl.runner",
    "RunResult": "agentctl.runner",
    "RunControl": "agentctl.runner",
    "Session": "agentctl.runner",
    "arun": "agentctl.runner",
    "run_batch": "agentctl.batch",
    "BatchResult": "agentctl.batch",
    "Profile": "agentctl.profile.settings",
    "ScriptedClient": "agentctl.testing",
    "probe_server": "agentctl.probe.measure",
    "ProbeReport": "agentctl.probe.measure",
    "ServerModel": "agentctl.context.server_model",
    "SERVER_MODELS": "agentctl.context.server_model",
    "parse_server_model": "agentctl.context.server_model",
    "simulate": "agentctl.sessions.api",
    "tune": "agentctl.sessions.api",
    "export_exchanges": "agentctl.sessions.api",
    "ApprovalRequest": "agentctl.tools.approval",
    **dict.fromkeys(
        (
            "AppliedEdit",
            "ErrorEvent",
            "Event",
            "ProgressEvent",
            "ResultEvent",
            "StartEvent",
            "ToolCall",
            "Totals",
            "Turn",
            "TurnEvent",
            "Usage",
        ),
        "agentctl.types",
    ),
    **dict.fromkeys(
        (
            "AgentctlError",
            "ApiError",
            "ConfigError",
            "InterruptedRunError",
            "LimitError",
            "OutputError",
            "ToolError",
            "UsageError",
        ),
        "agentctl.errors",
    ),
}

__all__ = ["__version__", *sorted(_HOMES)]

if TYPE_CHECKING:
    from agentctl.batch import BatchResult as BatchResult
    from agentctl.batch import run_batch as run_batch
    from agentctl.context.server_model import SERVER_MODELS as SERVER_MODELS
    from agentctl.context.server_model import ServerModel as ServerModel
    from agentctl.context.server_model import parse_server_model as parse_server_model
    from agentctl.errors import AgentctlError as AgentctlError
    from agentctl.errors import ApiError as ApiError
    from agentctl.errors import ConfigError as ConfigError
    from agentctl.errors import InterruptedRunError as InterruptedRunError
    from agentctl.errors import LimitError as LimitError
    from agentctl.errors import OutputError as OutputError
    from agentctl.errors import ToolError as ToolError
    from agentctl.errors import UsageError as UsageError
    from agentctl.probe.measure import ProbeReport as ProbeReport
    from agentctl.probe.measure import probe_server as probe_server
    from agentctl.profile.settings import Profile as Profile
    from agentctl.runner import RunControl as RunControl
    from agentctl.runner import RunResult as RunResult
    from agentctl.runner import Session as Session
    from agentctl.runner import arun as arun
    from agentctl.runner import load_profile as load_profile
    from agentctl.runner import run as run
    from agentctl.sessions.api import export_exchanges as export_exchanges
    from agentctl.sessions.api import simulate as simulate
    from agentctl.sessions.api import tune as tune
    from agentctl.testing import ScriptedClient as ScriptedClient
    from agentctl.tools.approval import ApprovalRequest as ApprovalRequest
    from agentctl.types import AppliedEdit as AppliedEdit
    from agentctl.types import ErrorEvent as ErrorEvent
    from agentctl.types import Event as Event
    from agentctl.types import ProgressEvent as ProgressEvent
    from agentctl.types import ResultEvent as ResultEvent
    from agentctl.types import StartEvent as StartEvent
    from agentctl.types import ToolCall as ToolCall
    from agentctl.types import Totals as Totals
    from agentctl.types import Turn as Turn
    from agentctl.types import TurnEvent as TurnEvent
    from agentctl.types import Usage as Usage


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentctl' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
