"""bench/token_economy.py --json: the shape issue 12 fixes, on a small workspace (2 files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIELDS = {
    "profile": str,
    "role": str,
    "server_model": str,
    "total_input_tokens": int,
    "cost_usd": float,
    "cache_hit_ratio": float,
    "facts_found": int,
    "facts_total": int,
    "turns": int,
}


@pytest.mark.slow
def test_json_has_one_run_per_profile_and_server_model() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "token_economy.py"), "--files", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    report = json.loads(done.stdout)
    runs = report["runs"]
    for run in runs:
        for name, kind in FIELDS.items():
            assert isinstance(run[name], kind), (name, run)
        assert run["facts_total"] == 2
        assert run["facts_found"] == 2
        assert run["total_input_tokens"] > 0
        assert run["turns"] >= 5  # list, two files in two chunks each, answer
    pairs = {(r["role"], r["server_model"]) for r in runs}
    roles = {r["role"] for r in runs}
    assert {"default", "no-editing", "api-defaults"} <= roles
    models = ("default", "unedited-basis", "placeholder-line")  # the default and its variants
    assert pairs == {(role, model) for role in roles for model in models}
    assert len(runs) == len(pairs)
    default = next(r for r in runs if r["role"] == "default")
    assert default["profile"] == "built-in"
