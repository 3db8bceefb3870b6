"""What a piece of agentctl imports: run it in a fresh interpreter and list the heavy modules.

The fast start is asserted on what is imported, never on time.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

HEAVY = ("anthropic", "httpx", "httpx2", "pydantic", "mcp", "typer", "rich")


def loaded_after(
    code: str, modules: Sequence[str] = HEAVY, env: Mapping[str, str] | None = None
) -> tuple[str, list[str]]:
    """(stdout of `code`, which of `modules` it left in sys.modules), in a new interpreter
    (with `env` as its environment, if given)."""
    probe = (
        f"{code}\nimport sys\n"
        f"print('\\nLOADED=' + ','.join(m for m in {tuple(modules)!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    out, _, loaded = done.stdout.rpartition("\nLOADED=")
    return out, [m for m in loaded.strip().split(",") if m]


def loaded_by_command(
    argv: Sequence[str], modules: Sequence[str] = HEAVY, env: Mapping[str, str] | None = None
) -> tuple[str, list[str]]:
    """`loaded_after` for `agentctl ARGV`: its output ends with `EXIT=<its exit code>`."""
    code = (
        "from agentctl.cli.main import main\n"
        f"sys.argv = ['agentctl', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit as exit_:\n    print('EXIT=%s' % exit_.code)\n"
    )
    return loaded_after("import sys\n" + code, modules, env)
