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


@pytest.mark.slow
def test_tune_recommends_settings_whose_live_run_matches_the_replay() -> None:
    """--tune: the built-in run, tune on its transcript, a live run of tune's pick: the same
    tokens and cost as the replay (which sends the save-before-clear notice where the run
    does, earlier under a lower trigger)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "token_economy.py"), "--files", "4", "--tune",
         "--json"],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    report = json.loads(done.stdout)
    built_in, tuned, plain = report["runs"]
    assert (built_in["role"], tuned["role"], plain["role"]) == ("default", "tuned", "no-editing")
    winner = report["tune"]["winner"]
    recorded = next(c for c in report["tune"]["ranked"] if c["recorded"])
    assert winner["cost_usd"] < recorded["cost_usd"]
    assert winner["settings"]["trigger"] < 20_000  # below the recorded (built-in) trigger
    assert tuned["facts_found"] == tuned["facts_total"] == 4
    assert tuned["total_input_tokens"] == winner["prompt_tokens"]
    assert tuned["cost_usd"] == pytest.approx(winner["cost_usd"], abs=2e-6)
    assert tuned["cost_usd"] < built_in["cost_usd"]
