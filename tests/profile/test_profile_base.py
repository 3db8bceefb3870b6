"""A Profile given to a run (the Python API, a batch) is the typed base its overrides are set
on, and the trust check reads the typed Profile below a task's front matter: no round trip
through a dict."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentctl.agent.task import parse_task
from agentctl.errors import ConfigError
from agentctl.profile.loader import Overrides
from agentctl.profile.settings import LimitSettings, MemorySettings, PriceOverride, Profile
from agentctl.profile.trust import lookup, plain_at
from agentctl.runner import plan_new, resolve

PRICE = PriceOverride(1.0, 5.0, 1.25, 2.0, 0.1)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_overrides_set_only_their_keys_on_the_base() -> None:
    base = dataclasses.replace(Profile(max_turns=7), source="mine")
    profile, _ = resolve(
        base, Overrides(values={"cache.ttl": "1h"}, sets=["thinking.enabled=true"])
    )
    assert (profile.max_turns, profile.cache.ttl, profile.thinking.enabled) == (7, "1h", True)
    assert profile.context_editing == base.context_editing and profile.source == "mine"


def test_a_table_of_tables_merges_entry_by_entry() -> None:
    base = Profile(prices={"m-one": PRICE, "m-two": PRICE})
    profile, _ = resolve(base, Overrides(sets=["prices.m-one.input=9"]))
    assert profile.prices["m-one"].input == 9.0 and profile.prices["m-one"].output == 5.0
    assert profile.prices["m-two"] == PRICE


def test_relative_paths_of_the_base_mean_the_current_folder(tmp_path: Path) -> None:
    profile, _ = resolve(Profile(memory=MemorySettings(root=Path("mem"))), Overrides())
    assert profile.memory.root == (tmp_path / "mem").resolve()


def test_a_bad_override_names_its_key_and_the_base_source() -> None:
    base = dataclasses.replace(Profile(), source="<python>")
    with pytest.raises(ConfigError, match=r"^profile <python>, --set max_turns=x: max_turns: "):
        resolve(base, Overrides(sets=["max_turns=x"]))


def test_the_base_is_checked_like_a_file() -> None:
    with pytest.raises(ConfigError, match="max_turns"):
        resolve(Profile(max_turns=0), Overrides())


def test_a_task_may_not_lift_the_limit_of_a_profile_object(tmp_path: Path) -> None:
    task = parse_task("+++\n[limits]\nmax_usd = 5.0\n+++\nhi\n", str(tmp_path / "t.md"), tmp_path)
    base = Profile(limits=LimitSettings(max_usd=1.0))
    with pytest.raises(ConfigError, match=r"limits.max_usd: 5.0 would lift .* of 1.0"):
        plan_new(task, base)
    lower = parse_task("+++\n[limits]\nmax_usd = 0.5\n+++\nhi\n", str(tmp_path / "t.md"), tmp_path)
    assert plan_new(lower, base).profile.limits.max_usd == 0.5
    assert plan_new(task, base, trust_task=True).profile.limits.max_usd == 5.0


def test_lookup_reads_settings_and_toml_alike() -> None:
    profile = Profile(prices={"m": PRICE})
    assert lookup(profile, "context_editing.tool_uses.trigger") == 20_000
    assert lookup({"a": {"b": 1}}, "a.b") == 1
    assert lookup(profile, "prices.m.output") == 5.0
    assert lookup(profile, "no.such.key") is None
    assert plain_at(Profile(), "memory.root") == "memory"
    key = "context_editing.tool_uses.exclude_tools"
    assert (lookup(Profile(), key), plain_at(Profile(), key)) == ((), [])


def test_a_task_may_pick_a_model_the_profile_prices(tmp_path: Path) -> None:
    """The trust check reads the profile's own [prices] table as typed prices (on a raw dict
    it met a table where it expected a price)."""
    (tmp_path / "p.toml").write_text(
        '[limits]\nmax_usd = 2.0\n[prices."claude-x-9"]\n'
        "input = 1.0\noutput = 5.0\ncache_write_5m = 1.25\ncache_write_1h = 2.0\ncache_read = 0.1\n"
    )
    task = parse_task('+++\nmodel = "claude-x-9"\n+++\nhi\n', str(tmp_path / "t.md"), tmp_path)
    assert plan_new(task, tmp_path / "p.toml").profile.model == "claude-x-9"
    other = parse_task('+++\nmodel = "claude-y-9"\n+++\nhi\n', str(tmp_path / "t.md"), tmp_path)
    with pytest.raises(ConfigError, match="no price is known for 'claude-y-9'"):
        plan_new(other, tmp_path / "p.toml")


@pytest.mark.parametrize(
    ("text", "sets"),
    [
        ('max_turns = "x"\n', ["max_turns=5"]),
        ("cache = 5\n", ["cache.ttl=1h"]),
        ('[cache]\nttl = "2h"\n', ['cache={ttl = "1h"}']),
    ],
)
def test_what_you_type_wins_over_a_bad_file_value(
    tmp_path: Path, text: str, sets: list[str]
) -> None:
    """The files make a typed profile before the command line is set on it; a key the
    command line sets again is not held against the file."""
    (tmp_path / "agentctl.toml").write_text(text)
    profile, _ = resolve(None, Overrides(sets=sets))
    assert profile.source == "agentctl.toml" and profile.max_turns in (5, Profile().max_turns)
    with pytest.raises(ConfigError, match=r"^profile agentctl.toml: (max_turns|cache)"):
        resolve(None, Overrides(sets=["model=claude-sonnet-5"]))
