"""Message Batches against hostile servers (issue 20): tiny threaded servers written here that
play the batches endpoints the way a hostile or proxying server could."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from agentctl.agent.client import AnthropicBatches
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.wire import WireLimits
from agentctl.errors import ApiError
from tests.reliability.helpers import http_server

KEY = "sk-ant-api03-BATCH-HOSTILE-0123456789"
PREFIX = "/v1/messages/batches"
Seen = list[tuple[str, str, dict[str, str]]]  # method, path, headers


def batch_object(batch_id: str, results_url: str | None) -> dict[str, Any]:
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": "ended",
        "request_counts": {"processing": 0, "succeeded": 1, "errored": 0, "canceled": 0,
                           "expired": 0},
        "created_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:00:01Z",
        "expires_at": "2026-01-02T00:00:00Z",
        "cancel_initiated_at": None,
        "archived_at": None,
        "results_url": results_url,
    }  # fmt: skip


Answer = Callable[[BaseHTTPRequestHandler, str], None]


@contextmanager
def serve(answer: Answer) -> Iterator[tuple[str, Seen]]:
    """A server answering every GET/POST with `answer(handler, method)`; yields (url, seen)."""
    seen: Seen = []

    class Server(BaseHTTPRequestHandler):
        def _any(self, method: str) -> None:
            seen.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
            self.rfile.read(int(self.headers.get("content-length") or 0))
            answer(self, method)

        def do_GET(self) -> None:
            self._any("GET")

        def do_POST(self) -> None:
            self._any("POST")

        def log_message(self, *args: Any) -> None:
            pass

    with http_server(Server) as url:
        yield url, seen


def send_json(handler: BaseHTTPRequestHandler, data: Any, status: int = 200) -> None:
    body = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def result_line(custom_id: str) -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
               "content": [{"type": "text", "text": "stolen"}], "stop_reason": "end_turn",
               "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
    line = {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}
    return (json.dumps(line) + "\n").encode()


def jsonl(handler: BaseHTTPRequestHandler, _method: str) -> None:
    body = result_line("t1")
    handler.send_response(200)
    handler.send_header("content-type", "application/binary")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def batches_api(results_url: Callable[[str], str]) -> Answer:
    """The batches endpoints: create and retrieve answer a batch that has ended, whose
    `results_url` is `results_url(batch_id)`; its own `/results` answers one line."""

    def answer(handler: BaseHTTPRequestHandler, method: str) -> None:
        if handler.path.split("?")[0].endswith("/results"):
            jsonl(handler, method)
        else:
            send_json(handler, batch_object("msgbatch_1", results_url("msgbatch_1")))

    return answer


def batches_client(url: str, wire: WireLimits | None = None) -> AnthropicBatches:
    return AnthropicBatches(
        api_key=KEY, base_url=url, timeout_s=5, retry=RetryPolicy(max_retries=1), wire=wire
    )


def test_results_from_another_origin_are_refused_and_the_key_not_sent() -> None:
    """Before the fix the SDK fetched the hostile `results_url` with `x-api-key`: the other
    server received the key (and the run went on with its results)."""
    with (
        serve(jsonl) as (elsewhere, trap),
        serve(batches_api(lambda batch_id: f"{elsewhere}{PREFIX}/{batch_id}/results")) as (
            api_url,
            seen,
        ),
    ):
        api = batches_client(api_url)
        batch_id = api.create([("t1", {"model": "m", "max_tokens": 1, "messages": []})], [])
        assert api.ended(batch_id)
        with pytest.raises(ApiError) as caught:
            api.results(batch_id)
    assert trap == [], f"the other origin received {trap}"
    message = str(caught.value)
    assert "\n" not in message
    assert elsewhere in message and "origin" in message
    assert KEY not in message
    assert [m for m, *_ in seen] == ["POST", "GET", "GET"]  # create, retrieve, retrieve


@pytest.mark.parametrize(
    "where",
    [
        "{api}/v1/messages/batches/{id}/results",  # the API's own origin, absolute
        "/v1/messages/batches/{id}/results",  # a path on the API's origin
    ],
)
def test_results_from_the_api_origin_are_fetched(where: str) -> None:
    holder: list[str] = []
    with serve(batches_api(lambda batch_id: where.format(api=holder[0], id=batch_id))) as (
        api_url,
        seen,
    ):
        holder.append(api_url)
        api = batches_client(api_url)
        found = api.results("msgbatch_1")
    assert list(found) == ["t1"] and found["t1"].kind == "succeeded"
    assert seen[-1][1].startswith(f"{PREFIX}/msgbatch_1/results")
    assert any(KEY in value for value in seen[-1][2].values())  # the key went: same origin


def trickle(handler: BaseHTTPRequestHandler, _method: str) -> None:
    """Headers a line at a time, until the client hangs up (at most 30 s)."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    for n in range(600):
        try:
            handler.wfile.write(b"x-pad-%d: 1\r\n" % n)
            handler.wfile.flush()
        except OSError:
            return
        time.sleep(0.05)


@pytest.mark.parametrize("call", ["create", "ended", "results", "cancel"])
def test_every_message_batches_call_ends_at_the_deadline(call: str) -> None:
    """Before the fix the Message Batches calls had no deadline: a server trickling its
    headers kept a batch alive past api.deadline_s (here the test's 60 s bound)."""
    box: list[BaseException | object] = []
    with serve(trickle) as (url, seen):
        api = batches_client(url, WireLimits(deadline_s=0.3))
        calls = {
            "create": lambda: api.create([("t1", {"model": "m"})], []),
            "ended": lambda: api.ended("msgbatch_1"),
            "results": lambda: api.results("msgbatch_1"),
            "cancel": lambda: api.cancel("msgbatch_1"),
        }

        def go() -> None:
            try:
                box.append(calls[call]())
            except BaseException as err:
                box.append(err)

        worker = threading.Thread(target=go, daemon=True)
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive(), "the call outlived api.deadline_s"
    assert isinstance(box[0], ApiError), box[0]
    assert "no complete response within 0.3s (api.deadline_s)" in str(box[0])
    assert len(seen) == 1  # not retried
