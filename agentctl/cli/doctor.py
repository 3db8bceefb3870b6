"""`agentctl doctor`: where everything is, what a run would use and why, what it can reach."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer

from agentctl.errors import EXIT_RUNTIME, AgentctlError
from agentctl.home import home_dir, sessions_dir

if TYPE_CHECKING:
    from agentctl.profile.settings import Profile

# Lazy imports: each check imports what it examines (the profile loader, MCP, the emulator,
# the SDK's metadata), so `doctor --help` loads none of them and each check only its own.

DEFAULT_API_URL = "https://api.anthropic.com"
CONNECT_TIMEOUT_S = 3.0  # a reachable API answers a TCP connect in well under a second
# What the emulator's server is made of (`emulator_check` finds them without importing them).
EMULATOR_MODULES = ("agentctl.emulator.server", "http.server", "socketserver")

HELP = """\
Print where everything is and what a run would use: the profile and why it was chosen, the
memory root, whether each MCP server starts (and its tools), the sessions folder, the SDK
version, whether an API key is set (never the key itself), and whether the API answers a
connection (with --offline: whether the emulator starts). Exit 0 when every check passes,
1 when one fails.

\b
Examples:
  agentctl doctor
  agentctl doctor --offline             check the emulator instead of the API
  agentctl doctor --profile configs/balanced.toml --json
"""


@dataclass(frozen=True)
class Check:
    """One line of the report: `ok` None is information, False a problem."""

    name: str
    value: str
    ok: bool | None = None


def register(root: typer.Typer) -> None:
    """Attach the `doctor` command to the root app."""
    root.command(name="doctor", help=HELP)(doctor)


def doctor(
    profile: Annotated[
        str | None, typer.Option(metavar="FILE", help="Check this profile instead of the lookup.")
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Check that the emulator starts, not the API.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    try:
        from agentctl.profile.loader import resolve_profile

        loaded: tuple[Profile, list[str]] | AgentctlError = resolve_profile(profile)
    except AgentctlError as err:  # a problem of the profile check; no MCP servers then
        loaded = err
    checks = [*profile_checks(profile, loaded), *mcp_checks(loaded), *place_checks()]
    checks += [sdk_check(), *trace_checks(), key_check(offline)]
    checks.append(emulator_check() if offline else api_check(checks))
    if as_json:
        data = [{"check": c.name, "value": c.value, "ok": c.ok} for c in checks]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        sys.stdout.write(format_checks(checks, width))
    if any(check.ok is False for check in checks):
        raise typer.Exit(EXIT_RUNTIME)


def format_checks(checks: list[Check], columns: int | None = None) -> str:
    """`name   value` lines, a problem marked `!` and an ok check `✓`, then a verdict.

    With `columns` (a terminal's width) a long value wraps under itself, not under the names."""
    width = max(len(check.name) for check in checks)
    marks = {None: " ", True: "✓", False: "!"}
    indent = " " * (width + 4)
    lines = []
    for c in checks:
        line = f"{marks[c.ok]} {c.name.ljust(width)}  {c.value}"
        if columns and len(line) > columns > len(indent) + 20:
            line = textwrap.fill(line, columns, subsequent_indent=indent, break_on_hyphens=False)
        lines.append(line)
    problems = sum(1 for check in checks if check.ok is False)
    lines.append(f"{problems} problem(s): see the lines marked !" if problems else "all good")
    return "\n".join(lines) + "\n"


def profile_checks(
    explicit: str | None, loaded: tuple[Profile, list[str]] | AgentctlError
) -> list[Check]:
    """The profile a run would use and why (`loaded`: what `resolve_profile(explicit)` gave);
    the memory root and API URL it sets."""
    from agentctl.profile.loader import ambient_path

    try:
        ambient = ambient_path()
    except AgentctlError as err:
        return [Check("profile", str(err), False)]
    if isinstance(loaded, AgentctlError):
        return [Check("profile", str(loaded), False)]
    resolved, warnings = loaded
    reason = profile_reason(None, ambient)
    if explicit:  # the layers: --profile over the ambient profile (unless it is that file)
        same = ambient is not None and ambient.resolve() == Path(resolved.source).resolve()
        reason = "from --profile"
        if ambient is not None and not same:
            reason += f", over {ambient} ({profile_reason(None, ambient)})"
    checks = [Check("profile", f"{resolved.source} ({reason})")]
    checks += [Check("profile warning", warning, False) for warning in warnings]
    root = resolved.memory.root
    state = f"{folder_state(root)}; a task's front matter may set its own"
    checks.append(Check("memory root", f"{root} ({state})", folder_ok(root)))
    checks.append(Check("api url", resolved.api.base_url or api_url_default()))
    return checks


def mcp_checks(loaded: tuple[Profile, list[str]] | AgentctlError) -> list[Check]:
    """Each MCP server of the profile: whether it starts, and the tools it offers."""
    if isinstance(loaded, AgentctlError):
        return []  # profile_checks reports it
    resolved = loaded[0]
    if not resolved.mcp.servers:
        return []
    from agentctl.cli.mcp import summary
    from agentctl.tools.mcp import probe

    return [Check(f"mcp {s.name}", summary(s), s.ok) for s in probe(resolved.mcp.servers)]


def profile_reason(explicit: str | None, path: Path | None) -> str:
    """Why `path` is the profile: which step of the lookup order found it."""
    from agentctl.home import user_profile_path
    from agentctl.profile.loader import ENV_PROFILE, LOCAL_PROFILE

    if explicit:
        return "from --profile"
    if os.environ.get(ENV_PROFILE):
        return f"from ${ENV_PROFILE}"
    if path is not None and path == Path(LOCAL_PROFILE):
        return f"./{LOCAL_PROFILE} in the current folder"
    if path is not None:
        return "the user profile"
    return (
        f"built-in defaults: no --profile, no ${ENV_PROFILE}, no ./{LOCAL_PROFILE}, "
        f"no {user_profile_path()}"
    )


def place_checks() -> list[Check]:
    home, sessions = home_dir(), sessions_dir()
    return [
        Check("data folder", f"{home} ({folder_state(home)})", folder_ok(home)),
        Check("sessions", f"{sessions} ({folder_state(sessions)})", folder_ok(sessions)),
    ]


def folder_state(path: Path) -> str:
    """`writable`, `not writable`, `not a folder`, or `will be created` (a parent is writable)."""
    if path.is_dir():
        return "writable" if os.access(path, os.W_OK | os.X_OK) else "not writable"
    if path.exists():
        return "not a folder"
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
        return "will be created"
    return "cannot be created"


def folder_ok(path: Path) -> bool:
    return folder_state(path) in ("writable", "will be created")


def sdk_check() -> Check:
    """The installed anthropic version, read from its `_version.py` (importing it takes a
    second, importlib.metadata a tenth of the command), else from its metadata."""
    from importlib.util import find_spec

    spec = find_spec("anthropic")
    if spec is None:
        return Check("anthropic SDK", "not installed (pip install anthropic)", False)
    found = _version_in(Path(spec.origin or "").parent / "_version.py")
    if found:
        return Check("anthropic SDK", found, True)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return Check("anthropic SDK", version("anthropic"), True)
    except PackageNotFoundError:
        return Check("anthropic SDK", "not installed (pip install anthropic)", False)


def trace_checks() -> list[Check]:
    """Where runs send their spans, when $OTEL_TRACES_EXPORTER names an exporter."""
    if not os.environ.get("OTEL_TRACES_EXPORTER"):
        return []
    # The runner (its tracing part), only when the environment asks for traces; no SDK.
    from agentctl.runner import exporter_problem, wanted_exporters

    names = wanted_exporters(os.environ)
    if not names:
        return [Check("traces", "off ($OTEL_TRACES_EXPORTER, $OTEL_SDK_DISABLED)")]
    problem = exporter_problem(names, os.environ)
    if problem is not None:
        return [Check("traces", problem, False)]
    return [Check("traces", f"{', '.join(names)} ($OTEL_TRACES_EXPORTER)", True)]


def _version_in(path: Path) -> str:
    """`__version__ = "X"` of a package's version file ("" when there is none)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name.strip() == "__version__":
            return value.split("#")[0].strip().strip("\"'")
    return ""


def key_check(offline: bool) -> Check:
    """Which credential variable is set; never its value."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        if os.environ.get(name):
            return Check("api key", f"set (${name})", True)
    if offline:
        return Check("api key", "not set (not needed with --offline)")
    return Check("api key", "not set: export ANTHROPIC_API_KEY, or run with --offline", False)


def api_url_default() -> str:
    return os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_API_URL


def api_check(checks: list[Check]) -> Check:
    """A TCP connection to the API's host (no request, no key sent)."""
    url = next((c.value for c in checks if c.name == "api url"), api_url_default())
    problem = connect_problem(url)
    return Check("api reachable", f"no: {problem}" if problem else "yes", problem is None)


def connect_problem(url: str) -> str | None:
    """None when `url`'s host:port accepts a TCP connection, else what went wrong."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except OSError as err:
        return f"{host}:{port}: {err.strerror or err}"


def local_connect_problem(address: tuple[str, int]) -> str | None:
    """`connect_problem` for a numeric address (no name lookup, so no `idna` codec to load)."""
    with socket.socket() as client:
        client.settimeout(CONNECT_TIMEOUT_S)
        try:
            client.connect(address)
        except OSError as err:
            return f"{address[0]}:{address[1]}: {err.strerror or err}"
    return None


def emulator_check() -> Check:
    """Whether the emulator of `run --offline` can start and answer: its server code is
    installed, and a TCP server bound as the emulator binds (127.0.0.1, a free port) accepts
    a connection. The emulator's HTTP code is not loaded (`http.server` with `email` and `ssl`
    would be a third of the command's time); `run --offline` and `emulator check` use it."""
    from importlib.util import find_spec

    missing = [name for name in EMULATOR_MODULES if find_spec(name) is None]
    if missing:
        return Check("emulator", f"does not start: {', '.join(missing)} not installed", False)
    try:
        with socket.create_server(("127.0.0.1", 0)) as server:
            problem = local_connect_problem(server.getsockname())
    except OSError as err:
        problem = str(err.strerror or err)
    if problem:
        return Check("emulator", f"does not start: {problem}", False)
    return Check("emulator", "installed; 127.0.0.1 accepts connections", True)
