"""The one clock: pinning, AGENTCTL_TODAY across a process tree, and no other reader of the date."""

from __future__ import annotations

import ast
import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctl import clock
from agentctl.errors import UsageError

PACKAGE = Path(clock.__file__).parent
MOMENT = dt.datetime(2027, 3, 4, 5, 6, 7, tzinfo=dt.UTC)


def test_frozen_pins_now_today_and_timestamp_and_nests() -> None:
    with clock.frozen(MOMENT):
        assert clock.now() == MOMENT
        assert clock.today() == dt.date(2027, 3, 4)
        assert clock.timestamp() == MOMENT.timestamp()
        with clock.frozen(dt.date(2030, 1, 1)):  # a date: its midnight UTC
            assert clock.now() == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
        assert clock.now() == MOMENT  # the outer pin is back


def test_frozen_takes_a_naive_datetime_as_utc() -> None:
    with clock.frozen(dt.datetime(2027, 3, 4, 5, 6, 7)):
        assert clock.now() == MOMENT and clock.now().tzinfo is dt.UTC


@pytest.mark.dates
def test_the_env_var_moves_the_date_and_keeps_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clock.TODAY_ENV, " 2030-01-01 ")
    assert clock.moved_date() == dt.date(2030, 1, 1)
    assert clock.today() == dt.date(2030, 1, 1)
    assert clock.now().tzinfo is dt.UTC
    assert clock.now().date() == dt.date(2030, 1, 1)
    with clock.frozen(MOMENT):  # a pin wins over the variable
        assert clock.today() == dt.date(2027, 3, 4)


@pytest.mark.parametrize("value", ["", "   "])
@pytest.mark.dates
def test_an_unset_or_blank_env_var_moves_nothing(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(clock.TODAY_ENV, value)
    assert clock.moved_date() is None
    monkeypatch.delenv(clock.TODAY_ENV)
    assert clock.moved_date() is None


@pytest.mark.parametrize("value", ["tomorrow", "2027-13-01", "01/06/2027", "2027-06-01T10:00"])
@pytest.mark.dates
def test_a_malformed_env_var_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(clock.TODAY_ENV, value)
    with pytest.raises(UsageError) as info:
        clock.today()
    assert str(info.value) == f"AGENTCTL_TODAY={value!r}: not a date (use YYYY-MM-DD)"
    assert info.value.exit_code == 2


def check_profile(today: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`agentctl profile check` in a subprocess, of a profile naming claude-sonnet-4-5."""
    (cwd / "p.toml").write_text('model = "claude-sonnet-4-5"\n')
    env = {**os.environ, clock.TODAY_ENV: today}
    command = [sys.executable, "-m", "agentctl", "profile", "check", "p.toml"]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, check=False)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("today", "wording"),
    [
        ("2026-11-01", "is deprecated and reaches end of life on November 30th, 2026"),
        ("2026-11-30", "reaches end of life today, November 30th, 2026"),
        ("2026-12-01", "reached end of life on November 30th, 2026 and is retired"),
        ("2030-01-01", "reached end of life on November 30th, 2026 and is retired"),
    ],
)
def test_agentctl_today_reaches_a_subprocess_profile_check(
    tmp_path: Path, today: str, wording: str
) -> None:
    proc = check_profile(today, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("(1 warning)\n")
    assert proc.stderr == (
        f"warning: model: 'claude-sonnet-4-5' {wording}"
        " (switch to a current model such as 'claude-sonnet-5')\n"
    )


@pytest.mark.slow
def test_a_malformed_agentctl_today_stops_a_subprocess_with_one_line(tmp_path: Path) -> None:
    proc = check_profile("2027-02-30", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "agentctl: AGENTCTL_TODAY='2027-02-30': not a date (use YYYY-MM-DD)\n"


@pytest.mark.slow
def test_session_ids_in_a_subprocess_carry_the_moved_date() -> None:
    code = "from agentctl.sessions.transcript import new_session_id; print(new_session_id())"
    env = {**os.environ, clock.TODAY_ENV: "2031-02-03"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("20310203-")


# -- nothing else in the package reads the date or the wall time ----------------------------

# attribute called -> what it is called on; "now" etc. on datetime/date, the rest on `time`.
_DATE_READS = {"now", "today", "utcnow"}
_TIME_READS = {"time", "time_ns"}
_TIME_READS_WITHOUT_ARGS = {"gmtime", "localtime", "ctime", "asctime"}


def _reads_the_clock(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    if func.attr in _DATE_READS:
        return name in ("datetime", "date")
    if name != "time":
        return False
    if func.attr == "strftime":
        return len(call.args) < 2
    return func.attr in _TIME_READS or (func.attr in _TIME_READS_WITHOUT_ARGS and not call.args)


def clock_readers(source: str) -> list[int]:
    """Line numbers of calls that read the date or the wall time."""
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _reads_the_clock(n)]
    imports = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom)
        and n.module == "time"
        and {a.name for a in n.names} & (_TIME_READS | _TIME_READS_WITHOUT_ARGS | {"strftime"})
    ]
    return sorted(n.lineno for n in [*calls, *imports])


def test_the_finder_sees_each_way_of_reading_the_clock() -> None:
    source = (
        "import datetime, time\n"
        "datetime.datetime.now()\n"
        "datetime.date.today()\n"
        "time.time()\n"
        "time.gmtime()\n"
        "time.strftime('%Y')\n"
        "from time import localtime\n"
        "time.gmtime(0); time.strftime('%Y', time.gmtime(0)); time.monotonic(); clock.now()\n"
    )
    assert clock_readers(source) == [2, 3, 4, 5, 6, 7]


def test_only_the_clock_module_reads_the_date_or_the_wall_time() -> None:
    found = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "clock.py" or path.parent != PACKAGE
        if (lines := clock_readers(path.read_text()))
    }
    assert found == {}, "use agentctl.clock (now/today/timestamp) instead"
