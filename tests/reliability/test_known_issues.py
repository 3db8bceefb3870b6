"""Known issues found by the reliability work and not fixed here (owners' modules): strict xfails.

Each test states the behaviour we want; `xfail(strict=True)` makes it fail loudly the day the
issue is fixed, so the mark gets removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import expected_facts, invoke, make_workspace, ndjson


@pytest.mark.xfail(
    strict=True,
    reason=(
        "tools/registry.py caps every tool result at tools.max_result_chars, memory views "
        "included, with a '[truncated: result cut at N of M characters]' line that gives no "
        "view_range to read on; when that cap is below memory.max_view_chars the notes view is "
        "cut and the emulator policy (or a model) answers from part of its notes"
    ),
)
def test_a_small_result_cap_does_not_cut_the_notes_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    task = make_workspace(tmp_path, 30)  # notes of ~1.8 KB
    result = invoke("run", str(task), "--offline", "--json", "--quiet",
                    "--set", "tools.max_result_chars=1200")  # fmt: skip
    assert result.exit_code == 0, result.output
    text = ndjson(result.stdout)[-1]["text"]
    assert [fact in text for fact in expected_facts(30)] == [True] * 30
