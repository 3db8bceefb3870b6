"""The one-way arrows between packages (docs/architecture.md), no import cycles between modules
(imports inside functions included), the emulator's one public entry, and what `import agentctl`
costs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from import_probe import loaded_after

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agentctl"

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


def module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join(("agentctl", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs (at module level or inside a function), not those under
    `if TYPE_CHECKING:` (annotations only: they never run, so they close no cycle)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for branch in node.orelse:
                yield from runtime_imports(branch)
        else:
            yield from runtime_imports(node)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the agentctl modules it imports when it runs (`from agentctl.x import y`
    counts as importing `agentctl.x.y` where that is a module)."""
    modules = {module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = graph.setdefault(name, set())
        for node in runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif node.module in modules and node.level == 0:
                for alias in node.names:
                    below = f"{node.module}.{alias.name}"
                    found.add(below if below in modules else node.module)
        found.discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan's
    strongly connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "__init__.py").write_text("")
    (tmp_path / "a" / "x.py").write_text("from agentctl.a import y\n")
    (tmp_path / "a" / "y.py").write_text("def f():\n    from agentctl.a.z import g\n")
    (tmp_path / "a" / "z.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentctl.a import y\n"
        "def g():\n    import agentctl.a.x\n"
    )
    (tmp_path / "a" / "w.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentctl.a import x\n"
    )
    graph = import_graph(tmp_path)
    assert graph["agentctl.a.w"] == set()  # annotations only: no edge
    assert cycles(graph) == [["agentctl.a.x", "agentctl.a.y", "agentctl.a.z"]]


# A fenced package is imported from outside through its public entry (its __init__) only: the
# emulator from anywhere (its own tests, tests/emulator/, may test the parts), the runner from
# the rest of the package.
FENCES = {"emulator": ("agentctl", "tests", "bench", "examples"), "runner": ("agentctl",)}


def reaches_past_entries(root: Path = ROOT) -> list[str]:
    """Imports of a fenced package's modules (`agentctl.emulator.server`) from outside it."""
    bad: list[str] = []
    for fenced, folders in FENCES.items():
        inside = [root / "agentctl" / fenced, root / "tests" / fenced]
        for folder in folders:
            for path in sorted((root / folder).rglob("*.py")):
                if not any(path.is_relative_to(home) for home in inside):
                    bad += _reaches(path, f"agentctl.{fenced}.", root)
    return sorted(bad)


def _reaches(path: Path, prefix: str, root: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found += [
            f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names if n.startswith(prefix)
        ]
    return found


def test_fenced_packages_are_reached_through_their_public_entry() -> None:
    assert reaches_past_entries() == []


def test_the_fence_check_sees_a_reach_past_the_entry(tmp_path: Path) -> None:
    for folder in ("agentctl/runner", "agentctl/emulator", "agentctl/batch", "tests/emulator"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "bench").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "agentctl" / "runner" / "a.py").write_text(
        "from agentctl.emulator import running\ndef f():\n    import agentctl.emulator.server\n"
    )
    inside = "from agentctl.emulator.sse import x\nfrom agentctl.runner.plan import y\n"
    (tmp_path / "agentctl" / "emulator" / "b.py").write_text(inside)
    (tmp_path / "tests" / "emulator" / "c.py").write_text(inside)
    (tmp_path / "bench" / "d.py").write_text("from agentctl.emulator.model import Script\n")
    (tmp_path / "agentctl" / "batch" / "e.py").write_text("from agentctl.runner import Plan\n")
    assert reaches_past_entries(tmp_path) == [
        "agentctl/emulator/b.py:2: agentctl.runner.plan",
        "agentctl/runner/a.py:3: agentctl.emulator.server",
        "bench/d.py:1: agentctl.emulator.model",
    ]


# Where an import inside a function must say why (startup time, or a dependency only one
# path needs): the packages whose imports this round reshaped (the rest keep theirs as found).
EXPLAINED = ("batch", "probe", "cli", "emulator", "agent", "tools", "profile", "context")
MODULE_NOTE = "# Lazy imports:"  # a module-wide reason, for modules that defer most imports


def unexplained_lazy_imports(package: Path = PACKAGE) -> list[str]:
    """Imports inside functions with no comment on their line or above their group (a run of
    import lines), in a module with no `# Lazy imports:` note."""
    bad: list[str] = []
    for unit in EXPLAINED:
        for path in sorted((package / unit).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            if path.name.startswith("mcp") or any(x.startswith(MODULE_NOTE) for x in lines):
                continue  # tools/mcp*.py: worked on elsewhere this round
            bad += [
                f"{path.relative_to(package)}:{n}"
                for n in _function_imports(ast.parse("\n".join(lines)))
                if not _explained(lines, n)
            ]
    return bad


def _function_imports(tree: ast.AST) -> list[int]:
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in node.body:
                found += [
                    n.lineno for n in ast.walk(inner) if isinstance(n, ast.Import | ast.ImportFrom)
                ]
    return sorted(set(found))


def _explained(lines: list[str], number: int) -> bool:
    """A comment on the import's line, or on the line above the run of imports it is in."""
    at = number - 1
    while at > 0 and lines[at - 1].strip().startswith(("import ", "from ", ")", "#")):
        if lines[at - 1].strip().startswith("#"):
            return True
        at -= 1
    return "#" in lines[number - 1]


def test_imports_inside_functions_say_why() -> None:
    assert unexplained_lazy_imports() == []


def test_the_why_check_sees_a_silent_import(tmp_path: Path) -> None:
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "a.py").write_text(
        "def f():\n    import json\n"
        "def g():\n    # the SDK: over a second to import\n    import anthropic\n    import json\n"
        "def h():\n    import regex  # only search needs it\n"
    )
    (tmp_path / "cli" / "b.py").write_text(
        f"{MODULE_NOTE} each command its own\ndef f():\n    import json\n"
    )
    assert unexplained_lazy_imports(tmp_path) == ["cli/a.py:2"]


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


# Two modules share a file name only where one concept is seen from two sides: cli/NAME.py is
# the `agentctl NAME` command, emulator/NAME.py the server side of agent/NAME.py.


def test_a_shared_module_name_is_one_concept_seen_from_two_sides() -> None:
    from agentctl.cli.main import COMMANDS

    homes: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            homes.setdefault(path.name, set()).add(path.parent.relative_to(PACKAGE).as_posix())
    shared = {name: dirs for name, dirs in homes.items() if len(dirs) > 1}
    command = {f"{name}.py" for name in COMMANDS}
    unexplained = {
        name: dirs
        for name, dirs in shared.items()
        if not (dirs == {"agent", "emulator"} or ("cli" in dirs and name in command))
    }
    assert unexplained == {}
    assert len(shared) == 6  # mcp, memory (cli); model, server_tools, structured, sse
