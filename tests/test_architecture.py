"""The one-way arrows between packages (docs/architecture.md), and what `import agentctl` costs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_probe import loaded_after

PACKAGE = Path(__file__).resolve().parents[1] / "agentctl"

# Bottom to top; a unit may import units of lower layers only (and itself). A unit is a
# subpackage or a top-level module of agentctl.
LAYERS: list[set[str]] = [
    {"errors"},
    {"types", "clock", "home", "redact"},
    {"context"},
    {"profile"},
    {"memory"},
    {"tools", "emulator"},
    {"agent"},
    {"testing"},
    {"sessions"},
    {"render"},
    {"runner"},
    {"batch", "probe"},
    {"cli"},
    {"__main__"},
]
# The client side reaches the emulator over HTTP only, never by import.
NEVER = {("agent", "emulator"), ("tools", "emulator")}
# `sessions` returns values; all drawing (Rich) lives in `render`, above it.
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported agentctl module or `agentctl.NAME` for `from agentctl import NAME`)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("agentctl.")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "agentctl":
                found += [(node.lineno, f"agentctl.{a.name}") for a in node.names]
            elif node.module.startswith("agentctl."):
                found.append((node.lineno, node.module))
    return found


def violations(package: Path = PACKAGE) -> list[str]:
    bad: list[str] = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(("agentctl", *path.relative_to(package).with_suffix("").parts))
        source = unit_of(module)
        if source == "__init__":
            continue  # the Python API: lazy re-exports of every layer
        for line, target in imports_of(path):
            dest = unit_of(target)
            if dest in (source, "__version__"):
                continue
            if dest not in RANK or RANK[dest] >= RANK[source] or (source, dest) in NEVER:
                bad.append(f"{path.relative_to(package)}:{line}: {source} -> {dest}")
    return bad


def test_every_unit_has_a_layer() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert modules | packages == set(RANK)


def test_imports_point_down_only() -> None:
    assert violations() == []


def rich_imports(package: Path) -> list[str]:
    """Where modules under `package` import Rich."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            if any(n == "rich" or n.startswith("rich.") for n in names):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    return found


def test_sessions_never_draws() -> None:
    assert rich_imports(PACKAGE / "sessions") == []
    assert rich_imports(PACKAGE / "render") != []  # the check sees Rich where it is


def test_the_check_sees_upward_and_forbidden_imports(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "x.py").write_text(
        "from agentctl import clock, __version__\n"
        "from agentctl.runner import run\n"
        "def f():\n    import agentctl.emulator.server\n"
    )
    assert violations(tmp_path) == [
        "agent/x.py:2: agent -> runner",
        "agent/x.py:4: agent -> emulator",
    ]


@pytest.mark.slow
def test_import_agentctl_stays_light() -> None:
    code = (
        "import agentctl\n"
        "names = [agentctl.run, agentctl.load_profile, agentctl.Profile, agentctl.TurnEvent,\n"
        "         agentctl.ConfigError, agentctl.ScriptedClient]\n"
    )
    _, loaded = loaded_after(code, ["anthropic", "rich", "typer", "httpx"])
    assert loaded == []


def test_public_names() -> None:
    import agentctl

    for name in agentctl.__all__:
        assert getattr(agentctl, name) is not None, name
    assert issubclass(agentctl.ConfigError, agentctl.AgentctlError)
    assert (PACKAGE / "py.typed").is_file()
