"""Measure agentctl's token estimator against the legacy Claude tokenizer, per kind of text.

The legacy tokenizer ships inside old anthropic wheels; it is NOT a runtime dependency:

    pip download --no-deps anthropic==0.34.2 -d /tmp/x
    cd /tmp/x && unzip -o anthropic-0.34.2-py3-none-any.whl anthropic/tokenizer.json
    .venv/bin/pip install tokenizers
    .venv/bin/python bench/tokens_calibration.py /tmp/x/anthropic/tokenizer.json

Corpora come from the running Python's standard library (so the figures are reproducible on
any machine): prose = docstrings, code = module sources, json = a JSON rendering of the
stdlib's AST-level inventory (tool-result-like), markdown = installed packages' READMEs.
Current Claude models use a newer tokenizer than this one; see docs/context.md.

`recorded_counts()` needs no tokenizer: it compares the estimator with the input-token counts
real API responses reported, from the recordings in tests/recordings/ (and two figures of a
public probe run quoted below), and runs first.
"""

from __future__ import annotations

import ast
import json
import random
import statistics
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

from agentctl.context.cache import PromptCache
from agentctl.context.compaction import DEFAULT_SUMMARY_PROMPT, compacted
from agentctl.context.engine import apply_context_edits
from agentctl.context.tokens import (
    estimate_block_tokens,
    estimate_request_tokens,
    estimate_text_tokens,
)
from agentctl.emulator import message_from_events, recorded_events

RECORDINGS = Path(__file__).resolve().parent.parent / "tests" / "recordings"
# A public probe run (claude-opus-5-5, clear_thinking keep 1): clearing these two thinking
# blocks cut billed input from 847 to 737 tokens.
THINKING_TEXTS = (
    "Counting primes below 20 gives 8 of them, so I need the 8th Greek letter, which is theta.\n\n",
    "Computing 41*17+3, getting 700, then finding 700 mod 23 gives remainder 10.\n\n",
)

MODULES = [
    "argparse.py",
    "dataclasses.py",
    "json/decoder.py",
    "email/message.py",
    "http/client.py",
    "pathlib.py",
    "textwrap.py",
    "typing.py",
    "subprocess.py",
    "logging/__init__.py",
]


def _sources() -> list[tuple[str, str]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [(name, (stdlib / name).read_text()) for name in MODULES]


def _docstrings(source: str) -> str:
    nodes = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Module)
    ]
    return "\n\n".join(d for n in nodes if (d := ast.get_docstring(n)))


def _inventory(name: str, source: str) -> str:
    tree = ast.parse(source)
    items = [
        {
            "name": n.name,
            "kind": type(n).__name__,
            "line": n.lineno,
            "args": [a.arg for a in n.args.args],
        }
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef)
    ]
    return json.dumps({"module": name, "functions": items}, indent=2)


def _readmes() -> list[str]:
    """Package long descriptions (markdown) from the installed dist-info METADATA files."""
    texts = []
    for dist in ("anthropic", "rich", "typer", "pydantic", "hypothesis", "pytest", "mypy"):
        for meta in Path(sysconfig.get_paths()["purelib"]).glob(f"{dist}-*.dist-info/METADATA"):
            body = meta.read_text().partition("\n\n")[2]
            if body.strip():
                texts.append(body)
    return texts


def _license() -> list[str]:
    """The PSF license history: plain English prose."""
    return [(Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt").read_text()]


def corpora() -> dict[str, list[str]]:
    sources = _sources()
    return {
        "prose (Python LICENSE.txt)": _license(),
        "prose (stdlib docstrings)": [_docstrings(s) for _, s in sources],
        "code (stdlib sources)": [s for _, s in sources],
        "json (pretty, tool-result-like)": [_inventory(n, s) for n, s in sources],
        "markdown (package READMEs)": _readmes(),
    }


def _total(usage: dict[str, Any]) -> int:
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(int(usage.get(k) or 0) for k in keys)


def _response(recording: dict[str, Any]) -> dict[str, Any]:
    """The recorded response body (a stream's: the message its events add up to)."""
    events = recorded_events(recording)
    return message_from_events(events) if events is not None else dict(recording["response"])


def recorded_rows() -> list[tuple[str, int, int]]:
    """(what, recorded input tokens, our estimate) for every input count the recordings hold."""
    rows: list[tuple[str, int, int]] = []
    for path in sorted(RECORDINGS.glob("*.json")):
        recording = json.loads(path.read_text())
        if not recording.get("complete"):
            continue
        request, body, name = recording["request"], _response(recording), path.stem
        if recording["endpoint"].endswith("count_tokens"):
            rows.append(
                (f"{name}: count_tokens", body["input_tokens"], estimate_request_tokens(request))
            )
            continue
        view = compacted(request)
        usage = body["usage"]
        kinds = [i["type"] for i in usage.get("iterations", [])]
        if "compaction" in kinds:
            closed = estimate_request_tokens(view)
            asked = estimate_text_tokens(DEFAULT_SUMMARY_PROMPT)
            first = usage["iterations"][0]
            rows.append((f"{name}: compaction call", _total(first), closed + asked))
            block = next(b for b in body["content"] if b["type"] == "compaction")
            after = {**view, "messages": [{"role": "user", "content": [block]}]}
            rows.append((f"{name}: reply after it", _total(usage), estimate_request_tokens(after)))
        else:
            rows.append((f"{name}: request", _total(usage), estimate_request_tokens(view)))
    thinking = sum(
        estimate_block_tokens({"type": "thinking", "thinking": t}) for t in THINKING_TEXTS
    )
    rows.append(("probe: two thinking blocks cleared", 847 - 737, thinking))
    return rows


def recorded_counts() -> None:
    print(f"{'recorded input count':44} {'real':>7} {'ours':>7} {'error':>7}")
    for what, real, ours in recorded_rows():
        print(f"{what:44} {real:>7,} {ours:>7,} {(ours - real) / real:>+7.1%}")


def main(tokenizer_path: str) -> None:
    recorded_counts()
    try:
        from tokenizers import Tokenizer  # calibration only, never a runtime dependency
    except ImportError:
        print("tokenizers is not installed: skipping calibration (see the module docstring)")
        engine_speed()
        return
    tokenizer = Tokenizer.from_file(tokenizer_path)
    head = ("corpus", "docs", "chars", "legacy", "ours", "ratio", "doc min..max")
    print("{:34} {:>4} {:>9} {:>8} {:>8} {:>6} {:>13}".format(*head))
    for kind, docs in corpora().items():
        legacy = [len(tokenizer.encode(d).ids) for d in docs]
        ours = [estimate_text_tokens(d) for d in docs]
        ratios = [o / t for o, t in zip(ours, legacy, strict=True) if t]
        chars = sum(len(d) for d in docs)
        print(
            f"{kind:34} {len(docs):>4} {chars:>9} {sum(legacy):>8} {sum(ours):>8} "
            f"{sum(ours) / sum(legacy):>6.3f} {min(ratios):>6.3f}..{max(ratios):.3f}"
        )
    _speed([d for docs in corpora().values() for d in docs])
    engine_speed()


def _speed(docs: list[str]) -> None:
    text = "\n".join(docs) * 4
    estimate_text_tokens.cache_clear()
    start = time.perf_counter()
    estimate_text_tokens(text)
    seconds = time.perf_counter() - start
    print(f"speed: {len(text) / seconds / 1e6:.1f} M chars/s on {len(text):,} chars (cold cache)")
    per_doc = statistics.mean(len(d) / max(estimate_text_tokens(d), 1) for d in docs)
    print(f"chars per token (ours, mean over documents): {per_doc:.2f}")


def _round(i: int, words: list[str]) -> list[dict[str, Any]]:
    """One agent round: thinking + text + a memory tool call, then a ~1,200-word result."""
    pick = random.Random(i)

    def say(n: int) -> str:
        return " ".join(pick.choice(words) for _ in range(n))

    call = {"type": "tool_use", "id": f"t{i}", "name": "memory", "input": {"path": f"/m/{i}"}}
    thinking = {"type": "thinking", "thinking": say(200), "signature": "x" * 300}
    result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": say(1200)}
    assistant = [thinking, {"type": "text", "text": say(30)}, call]
    return [{"role": "assistant", "content": assistant}, {"role": "user", "content": [result]}]


def engine_speed(turns: int = 100) -> None:
    """Time estimate / edits / cache accounting over a growing session (the emulator's load)."""
    words = _license()[0].split()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Do the task."}]
    request: dict[str, Any] = {"system": "sys", "messages": messages}
    request["tools"] = [{"type": "memory_20250818", "name": "memory"}]
    request["cache_control"] = {"type": "ephemeral"}
    edits = [{"type": "clear_tool_uses_20250919"}]  # defaults: 100k trigger, keep 3
    cache, spent = PromptCache(clock=lambda: 0.0), [0.0, 0.0, 0.0]
    for i in range(turns):
        messages += _round(i, words)
        start = time.perf_counter()
        estimate_request_tokens(request)
        mid = time.perf_counter()
        out = apply_context_edits(request, edits)
        end = time.perf_counter()
        cache.account(out.request, "claude-sonnet-5")
        done = time.perf_counter()
        for k, span in enumerate((mid - start, end - mid, done - end)):
            spent[k] += span
    print(
        f"engine: {turns} requests up to {out.original_input_tokens:,} tokens "
        f"({len(json.dumps(request)):,} JSON chars): estimate {spent[0]:.2f} s, "
        f"edits {spent[1]:.2f} s, cache {spent[2]:.2f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/x/anthropic/tokenizer.json")
