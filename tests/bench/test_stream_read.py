"""bench/stream_read.py: the three ways of reading a response build the same message."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_each_way_reads_the_same_message_and_is_timed() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "stream_read.py"), "--rounds", "1", "--n", "3"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    rows = done.stdout.splitlines()
    assert [row.split(":")[0] for row in rows] == [
        "SDK stream (agentctl before)",
        "SDK non-streaming",
        "agentctl agent/sse.py",
    ]
    assert all(re.search(r": \d+ us a response \(\d+\.\d\dx agent/sse.py\)$", r) for r in rows)
    assert rows[-1].endswith("(1.00x agent/sse.py)")
