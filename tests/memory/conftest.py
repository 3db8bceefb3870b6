"""Fixtures for the memory store tests: twin roots for the differential suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_harness import Pair, make_pair


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    return make_pair(tmp_path)
