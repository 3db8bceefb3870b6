"""The root command: help, version, exit-code mapping, and what a light command imports."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from agentctl import __version__
from agentctl.cli.main import app


def test_help_lists_exit_codes() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "130 interrupted" in result.output


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"agentctl {__version__}"


def test_help_does_not_import_the_sdk() -> None:
    code = (
        "import sys\n"
        "from agentctl.cli.main import app\n"
        "try:\n"
        "    app(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in ('anthropic', 'httpx', 'pydantic') if m in sys.modules)\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY=\n" in out.stdout
