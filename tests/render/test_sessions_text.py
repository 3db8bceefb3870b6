"""The piped `sessions list` table laid out without Rich is, character for character, what
Rich draws for the same rows (or it declines, and Rich draws it)."""

from __future__ import annotations

import dataclasses
import math
import random

from rich.console import Console

from agentctl.render.sessions_list import sessions_table, sessions_text
from agentctl.sessions.catalog import UNKNOWN_COST
from agentctl.sessions.index import SessionSummary
from agentctl.types import Totals, Usage

TASKS = ["Kestrel outage", "", "数据 汇总 报告", "tab\there", "esc \x1b[31m red", "x" * 90, "é" * 5]
MODELS = ["claude-sonnet-5", "claude-opus-4-1", "", "m\u202eodel", "ｗｉｄｅ"]
STATUSES = ["end_turn", "limit", "incomplete", "unreadable"]


def rows(seed: int, count: int) -> list[SessionSummary]:
    rng = random.Random(seed)
    return [
        SessionSummary(
            id=f"20261201-10{n:04d}-abcdef",
            started=rng.uniform(0, 2e9),
            task=rng.choice(TASKS),
            task_source="t.md",
            model=rng.choice(MODELS),
            turns=rng.randint(0, 5000),
            status=rng.choice(STATUSES),
            totals=Totals(
                Usage(input_tokens=rng.randint(0, 10**9)),
                cost_usd=rng.choice([math.nan, 0.0, rng.uniform(0, 900)]),
            ),
            forked_from=rng.choice([None, None, "20261130-080922-d774dd"]),
            forked_at=rng.randint(1, 40),
            follow_ups=rng.randint(0, 3),
        )
        for n in range(count)
    ]


def drawn(table_rows: list[SessionSummary], width: int) -> str:
    console = Console(width=width, highlight=False, soft_wrap=False, color_system=None)
    with console.capture() as captured:
        console.print(sessions_table(table_rows, width))
    return "".join(line.rstrip() + "\n" for line in captured.get().splitlines())


def test_plain_text_is_what_rich_draws() -> None:
    laid_out = 0
    for seed in range(30):
        for width in (1_000, 160, 99, 80, 60):
            some = rows(seed, 1 + seed % 7)
            text = sessions_text(some, width)
            if text is not None:
                laid_out += 1
                assert text == drawn(some, width), (seed, width)
    assert laid_out >= 40  # the layouts that need no cut (a 90-character task needs one)


def test_a_cut_is_left_to_rich() -> None:
    long_task = dataclasses.replace(rows(0, 1)[0], task="y" * 90)
    assert sessions_text([long_task], 80) is None
    assert sessions_text([long_task], 1_000) == drawn([long_task], 1_000)


def test_rows_json_is_what_json_dumps_writes() -> None:
    import json
    import math

    from agentctl.sessions.list_row import rows_json

    for seed in range(20):
        some = rows(seed, seed % 5)
        if seed == 3:
            some = [dataclasses.replace(r, started=math.inf, totals=UNKNOWN_COST) for r in some]
        expected = json.dumps([r.to_json() for r in some], indent=2, ensure_ascii=False)
        assert rows_json(some) == expected


def test_cell_len_is_richs_for_every_kind_of_text() -> None:
    """The listing's own `cell_len` (printable ASCII without Rich's tables) agrees with Rich's."""
    from rich.cells import cell_len as rich_cell_len

    from agentctl.render.sessions_list import cell_len

    texts = ["", "plain", "tab\there", "esc \x1b[31m", "\x7f", *TASKS, *MODELS, "👍🏽", "e\u0301"]
    texts += [chr(code) for code in range(0x300)]
    assert [cell_len(t) for t in texts] == [rich_cell_len(t) for t in texts]
