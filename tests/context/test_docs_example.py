"""The example in docs/context.md runs and prints exactly the output shown there."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "context.md"


def test_docs_example_output_is_real() -> None:
    text = DOC.read_text()
    match = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", text, re.DOTALL)
    assert match is not None
    code, shown = match.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {})
    assert out.getvalue() == shown
