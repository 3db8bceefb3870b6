"""The live table on a real terminal at 40, 60, 80 and 100 columns: one layout per run, chosen
from the width; nothing cut; no duplicated or changing header; plain lines below 40."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pty_run import final_screen, plain_text, run_on_pty

REPO = Path(__file__).resolve().parents[2]
HEADER = re.compile(r"^ +(#|turn) +stop\b")
ROW = re.compile(r"^ *(\d+) (tool_use|end_turn|tool|end) ")


HEADER_ANYWHERE = re.compile(r"(?:#|turn) +stop\b[^\n]*?tools")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, list[str]]]:
    """columns -> (what the terminal received, the final screen), one real run per width, the
    five at once (each in its own copy of the example: they share no file)."""
    base = tmp_path_factory.mktemp("pty")

    def run(columns: int) -> tuple[str, list[str]]:
        folder = base / f"research-{columns}"
        ignore = shutil.ignore_patterns("memory")
        shutil.copytree(REPO / "examples" / "research", folder, ignore=ignore)
        code, received, stdout = run_on_pty(
            ["run", "task.md", "--offline"], columns=columns, cwd=folder
        )
        assert code == 0 and "Kestrel outage" in stdout  # the answer went to stdout
        return received, final_screen(received)

    widths = (30, 40, 60, 80, 100)
    with ThreadPoolExecutor(len(widths)) as pool:
        return dict(zip(widths, pool.map(run, widths), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("columns", [40, 60, 80, 100])
def test_table_fits_and_keeps_one_header(
    columns: int, runs: dict[int, tuple[str, list[str]]]
) -> None:
    received, screen = runs[columns]
    table = screen[: screen.index("summary")]
    assert all(len(line) <= columns for line in table), [s for s in table if len(s) > columns]
    rows = [line for line in plain_text(received).split("\n") if ROW.match(line)]
    assert rows and not [row for row in rows if "…" in row]  # no cell cut, live or final
    # Every frame drew the same header: the layout was chosen once, from the width.
    headers = {re.sub(" +", " ", h) for h in HEADER_ANYWHERE.findall(plain_text(received))}
    assert len(headers) == 1, headers
    # The final table: one header, every turn with its number and stop reason.
    assert sum(1 for line in table if HEADER.match(line)) == 1
    assert [int(m.group(1)) for line in table if (m := ROW.match(line))] == list(range(1, 24))


@pytest.mark.slow
def test_columns_give_way_in_a_fixed_order(runs: dict[int, tuple[str, list[str]]]) -> None:
    headers = {}
    for columns in (100, 80, 60, 40):
        screen = runs[columns][1]
        index = next(i for i, line in enumerate(screen) if HEADER.match(line))
        headers[columns] = " ".join(screen[index - 1 : index + 1]).split()
    assert "think" in headers[100] and "in" in headers[100] and "out" in headers[100]
    assert not {"think", "in", "out"} & set(headers[80])  # uncached input: near zero
    assert "uses" in headers[80] and "uses" not in headers[60]
    assert "trig" in headers[60] and "trig" not in headers[40]
    for kept in ("#", "stop", "read", "write", "freed", "tools"):
        assert all(kept in header for header in headers.values()), kept


@pytest.mark.slow
def test_below_the_narrowest_layout_plain_lines(runs: dict[int, tuple[str, list[str]]]) -> None:
    text = plain_text(runs[30][0])
    assert "turn 1  tool_use  in=0" in text and "turn 23  end_turn" in text
    assert not HEADER_ANYWHERE.search(text)


@pytest.mark.slow
def test_a_run_says_at_once_that_it_started(runs: dict[int, tuple[str, list[str]]]) -> None:
    assert plain_text(runs[80][0]).lstrip().startswith("agentctl: starting the run…")


@pytest.mark.slow
def test_summary_counts_distinct_results_apart_from_tokens_spared_per_turn(
    runs: dict[int, tuple[str, list[str]]],
) -> None:
    screen = "\n".join(runs[100][1])
    assert "15 distinct tool results" in screen  # 122 is the per-turn sum of clearings
    assert "881,417 prompt tokens, summed over 14 turns (at most 106,393 in one)" in screen
    assert "so every later turn counts it again" in screen  # the legend under the table


@pytest.mark.slow
def test_narrow_summary_puts_values_under_labels(runs: dict[int, tuple[str, list[str]]]) -> None:
    screen = runs[40][1]
    summary = screen[screen.index("summary") :]
    assert all(len(line) <= 40 for line in summary[: summary.index("see it again") + 3])
    # The session id is whole on its line, not folded in a narrow value column.
    assert any(re.fullmatch(r"  \d{8}-\d{6}-[0-9a-f]{6}", line) for line in summary), summary
