"""The one exception tree of agentctl; each class carries the exit code the CLI maps it to.

Exit codes (also in `agentctl --help` and the README):
  0 finished, 1 API or runtime error, 2 usage or configuration error,
  3 stopped by a limit (turns, budget, max_tokens), 130 interrupted,
  141 the reader of stdout went away (128 + SIGPIPE, as the shell reports for `git log | head`).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_LIMIT = 3
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141


class AgentctlError(Exception):
    """Base of every error agentctl shows to the user as one line plus an exit code."""

    exit_code: int = EXIT_RUNTIME
    kind: str = "runtime"


class UsageError(AgentctlError):
    """Bad command-line input: flags, arguments, task files."""

    exit_code = EXIT_USAGE
    kind = "usage"


class ConfigError(AgentctlError):
    """A profile (or task front matter) that cannot be used; the message names file and key."""

    exit_code = EXIT_USAGE
    kind = "config"


class ApiError(AgentctlError):
    """The Messages API (or the emulator) answered with an error, or could not be reached."""

    exit_code = EXIT_RUNTIME
    kind = "api"

    def __init__(
        self, message: str, *, status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id


class OutputError(AgentctlError):
    """The final answer is not the structured output asked for (`--output-schema`): it does not
    parse as JSON or does not match the schema; the message says why and where."""

    exit_code = EXIT_RUNTIME
    kind = "output"


class LimitError(AgentctlError):
    """A run stopped by one of its limits: max_turns, a budget, max_tokens mid-tool-call."""

    exit_code = EXIT_LIMIT
    kind = "limit"


# What to do when a request outgrows the API's size limit (a resume would send it again).
REQUEST_SIZE_REMEDY = (
    "send less per request: api.threads = true sends only each turn's new messages, "
    "context_editing.compaction summarises the history, a lower tools.max_result_chars "
    "shortens tool results; --resume would send the same request again"
)


class RequestTooLargeError(LimitError):
    """A request over the API's size limit: never sent (or refused with 413); not resumable
    as it stands, so its message names the remedy instead of `--resume`."""


class InterruptedRunError(AgentctlError):
    """The user interrupted a run (Ctrl-C); the transcript and memory are consistent."""

    exit_code = EXIT_INTERRUPTED
    kind = "interrupted"


class ClosedPipeError(InterruptedRunError):
    """Whoever read our output went away (`agentctl run --json | head -2`): stop spending at once.

    Recorded as an interruption (kind "interrupted", so `--resume` continues it); exit 141 like a
    process that SIGPIPE ended, which `set -o pipefail` scripts recognise.
    """

    exit_code = EXIT_CLOSED_PIPE


class ToolError(Exception):
    """A tool call failed in a way the model can fix; the message goes back as an is_error result.

    Not an AgentctlError: it never reaches the user as an exit code, the run goes on.
    """


class ToolFailure(ToolError):
    """A tool call that failed for a reason that is not the model's (a full disk, the OS, a
    hostile file where agentctl keeps its own). The model sees an error result as for any
    ToolError; the run also counts it and reports it, since the model cannot tell the user."""


def os_reason(err: OSError) -> str:
    """The operating system's reason for `err` as a transcript error quotes it ("permission
    denied"), or the error's text when it carries none."""
    return (err.strerror or str(err)).lower()
