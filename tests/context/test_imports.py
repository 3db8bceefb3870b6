"""The context engine is pure: importing it loads neither the SDK nor httpx."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_engine_imports_no_sdk() -> None:
    code = (
        "import sys, agentctl.context.engine, agentctl.context.cache, agentctl.context.prices;"
        "print(sorted(m for m in ('anthropic', 'httpx', 'rich', 'typer') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
