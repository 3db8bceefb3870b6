"""Reading one response: the client CPU from its bytes to the message agentctl keeps.

Usage: python bench/stream_read.py [--rounds 5] [--n 2000]

One scripted turn of bench/scale.py's workload (text, then a `read_file` call whose input
streams in pieces) is fetched from the emulator twice, streamed and not, and its bytes are
then read in this process, with nothing on the network, three ways (each to the message as
JSON, null fields left out):
- the SDK's stream: `Stream` + `BetaMessageStream` (a model per event, the message built
  from them) and `to_dict`: how agentctl read every response before agent/sse.py;
- the SDK's non-streaming response: one `BetaMessage` from the JSON body and `to_dict`
  (the cost a non-streaming `create` would have, the other option for issue 26);
- agentctl's agent/sse.py: each event one `json.loads`, the message built as plain JSON.
The three alternate within each round; each row is the median over the rounds of CPU
microseconds per response (`time.process_time`) and its ratio to agent/sse.py in the round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
from anthropic._streaming import Stream
from anthropic._types import NOT_GIVEN
from anthropic.lib.streaming._beta_messages import BetaMessageStream
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent

from agentctl.agent import sse
from agentctl.agent.client import delta_usage_counts
from agentctl.emulator import Script, ScriptTurn, ToolCall, running

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # the workload's file text

TURN = Script((ScriptTurn(text="reading 0", tool_calls=(
    ToolCall("read_file", {"path": "f0.txt", "limit": 2000}),)),))  # fmt: skip
REQUEST = {"model": "claude-sonnet-5", "max_tokens": 4096,
           "tools": [{"name": "read_file", "description": scale.file_text(0)[:80],
                      "input_schema": {"type": "object"}}],
           "messages": [{"role": "user", "content": "Read the files."}]}  # fmt: skip
HEADERS = {"content-type": "application/json", "x-api-key": "bench",
           "anthropic-version": "2023-06-01"}  # fmt: skip


def fetch(stream: bool) -> bytes:
    with running(script=TURN) as emu:
        body = json.dumps({**REQUEST, "stream": stream}).encode()
        request = urllib.request.Request(f"{emu.base_url}/v1/messages", body, HEADERS)
        with urllib.request.urlopen(request) as answer:
            data: bytes = answer.read()
            return data


def readers(streamed: bytes, whole: bytes) -> dict[str, Callable[[], dict[str, Any]]]:
    sdk = anthropic.Anthropic(api_key="bench", base_url="http://127.0.0.1:9")
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")

    def response(body: bytes, kind: str) -> httpx2.Response:
        return httpx2.Response(200, content=body, request=request, headers={"content-type": kind})

    def sdk_stream() -> dict[str, Any]:
        raw = Stream(cast_to=BetaRawMessageStreamEvent, client=sdk,
                     response=response(streamed, "text/event-stream"))  # fmt: skip
        events = BetaMessageStream(raw, output_format=NOT_GIVEN)
        for _ in events:
            pass
        return as_json(events.get_final_message())

    def sdk_whole() -> dict[str, Any]:
        answer = response(whole, "application/json")
        message = sdk._process_response_data(data=answer.json(), cast_to=BetaMessage,
                                             response=answer)  # fmt: skip
        return as_json(message)

    def agentctl_sse() -> dict[str, Any]:
        message = sse.Message(delta_usage_counts())
        for event in sse.events(response(streamed, "text/event-stream").iter_bytes()):
            message.add(event)
        return message.final()

    return {"SDK stream (agentctl before)": sdk_stream, "SDK non-streaming": sdk_whole,
            "agentctl agent/sse.py": agentctl_sse}  # fmt: skip


def as_json(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = message.to_dict(mode="json", exclude_none=True, warnings=False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000, help="responses read per path a round")
    args = parser.parse_args()
    ways = readers(fetch(True), fetch(False))
    built = [read() for read in ways.values()]
    for other in built[1:]:  # the same message each way (ids differ between the two fetches)
        assert {**other, "id": ""} == {**built[0], "id": ""}, (other, built[0])
    table: list[list[float]] = []
    for _ in range(args.rounds):
        row = []
        for read in ways.values():
            started = time.process_time()
            for _ in range(args.n):
                read()
            row.append((time.process_time() - started) * 1e6 / args.n)
        table.append(row)
    for i, name in enumerate(ways):
        us = statistics.median(r[i] for r in table)
        ratio = statistics.median(r[i] / r[-1] for r in table)
        print(f"{name}: {us:.0f} us a response ({ratio:.2f}x agent/sse.py)", flush=True)


if __name__ == "__main__":
    main()
