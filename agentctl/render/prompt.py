"""The terminal's approval prompt: a tool call shown safely, answered y / n / a.

The call's input comes from the model: it is shown as JSON with every control character made
visible (render/safe.py) and cut to `MAX_INPUT_CHARS`, so it cannot move the cursor, retitle
the window or hide what it asks for. The live table is paused while the question is open.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

from agentctl.render.safe import visible
from agentctl.tools.approval import Answer, ApprovalRequest

MAX_INPUT_CHARS = 600
ANSWERS: dict[str, Answer] = {
    **dict.fromkeys(("y", "yes"), True),
    **dict.fromkeys(("n", "no"), False),
    **dict.fromkeys(("a", "always"), "always"),
}


def call_text(request: ApprovalRequest, limit: int = MAX_INPUT_CHARS) -> str:
    """The call's input as one line of JSON, controls visible, cut at `limit` characters."""
    text = visible(json.dumps(dict(request.input), ensure_ascii=False, default=str), keep="")
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def question(request: ApprovalRequest) -> str:
    """What the prompt says before waiting for the answer."""
    label = visible(request.label, keep="")
    turn = f" (turn {request.turn})" if request.turn else ""
    return (
        f"agentctl: the model wants to call {label}{turn}\n"
        f"  input: {call_text(request)}\n"
        f"  allow? [y] once  [n] deny  [a] allow {label} for the rest of the run: "
    )


class TerminalApprover:
    """An `Approver` that asks on a terminal: `y` allows once, `n` (or Enter, or end of
    input) denies, `a` allows the tool for the rest of the run; anything else asks again."""

    def __init__(
        self,
        read: TextIO,
        write: TextIO,
        pause: Callable[[], AbstractContextManager[None]] = nullcontext,
    ) -> None:
        self._read, self._write, self._pause = read, write, pause

    def __call__(self, request: ApprovalRequest) -> Answer:
        with self._pause():
            self._write.write(question(request))
            while True:
                self._write.flush()
                line = self._read.readline()
                key = line.strip().lower()
                if not line or not key:  # end of input, or Enter alone: the safe answer
                    self._write.write("" if line else "\n")
                    return False
                if key in ANSWERS:
                    return ANSWERS[key]
                self._write.write("  answer y, n or a: ")
