"""What the render package costs to import: tables alone stay light; nothing loads anthropic."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
import agentctl.render.table
light = sorted(m for m in ("rich.markdown", "rich.live", "anthropic", "httpx") if m in sys.modules)
from agentctl.render import make_renderer, render_answer
full = sorted(m for m in ("rich.live", "anthropic", "httpx") if m in sys.modules)
print(json.dumps([light, full]))
"""


@pytest.mark.slow
def test_table_import_is_light_and_nothing_imports_anthropic() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    light, full = json.loads(out)
    assert light == []
    assert full == ["rich.live"]
