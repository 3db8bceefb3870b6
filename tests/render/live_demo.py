"""Feed sample events with sleeps into a real renderer, to look at it in a terminal.

Usage: python tests/render/live_demo.py [--json] [--quiet] [--fast] [--error] [--turns N]
(run it in tmux at widths 100 and 80; pipe stderr to see the plain lines).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from render_samples import RESULT, START, TURNS

from agentctl.render import make_renderer, render_answer
from agentctl.types import ErrorEvent, ProgressEvent


def main(argv: list[str]) -> None:
    pause = 0.0 if "--fast" in argv else 0.15
    count = int(argv[argv.index("--turns") + 1]) if "--turns" in argv else 3
    renderer = make_renderer(
        json_mode="--json" in argv, quiet="--quiet" in argv, stdout=sys.stdout, stderr=sys.stderr
    )
    try:
        renderer.handle(START)
        time.sleep(pause * 4)
        turns = [replace(TURNS[i % 3], turn=i + 1, stop_reason="tool_use") for i in range(count)]
        turns[-1] = replace(turns[-1], stop_reason="end_turn")
        for turn in turns:
            for chars in range(0, 1500, 300):
                renderer.handle(ProgressEvent(turn.turn, "thinking", chars))
                time.sleep(pause)
            renderer.handle(ProgressEvent(turn.turn, "tool_input", 312, tool_name="memory"))
            time.sleep(pause * 3)
            renderer.handle(turn)
            time.sleep(pause * 3)
        if "--error" in argv:
            renderer.handle(ErrorEvent("limit", "max_turns 3 reached; resume with --resume x"))
            return
        renderer.handle(RESULT)
    except KeyboardInterrupt:  # what the runner does on Ctrl-C
        renderer.handle(ErrorEvent("interrupted", "interrupted; resume: agentctl run --resume x"))
        raise SystemExit(130) from None
    finally:
        renderer.close()
    if "--json" not in argv:
        render_answer(RESULT.text, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
