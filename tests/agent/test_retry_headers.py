"""The server's own word on retrying, as the SDK reads it: `x-should-retry` wins over the
status, and `retry-after` may be an HTTP date. Pure cases, then over real HTTP."""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from agent.test_client_hostile import outcome, serve
from agentctl.agent.retry import RetryPolicy, parse_retry_after, status_is_retryable

NOW = 1_800_000_000.0  # a fixed wall clock


@pytest.mark.parametrize(
    ("status", "header", "retried"),
    [
        (400, "true", True),
        (429, "false", False),
        (529, "FALSE", False),
        (429, None, True),
        (400, None, False),
        (400, "maybe", False),
    ],
)
def test_x_should_retry_wins_over_the_status(
    status: int, header: str | None, retried: bool
) -> None:
    headers = {"X-Should-Retry": header} if header is not None else {}
    assert status_is_retryable(status, None, headers) is retried


def test_retry_after_as_seconds_milliseconds_or_a_date() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(NOW + 7, usegmt=True)  # "Fri, 15 Jan 2027 08:00:07 GMT"
    assert parse_retry_after({"Retry-After": date}, now=lambda: NOW) == 7.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    policy = RetryPolicy(jitter=lambda: 1.0)
    past = parse_retry_after({"retry-after": email.utils.formatdate(NOW - 5)}, now=lambda: NOW)
    assert past == -5.0 and policy.delay(0, past) == policy.base_delay  # a past date: backoff


def refuse(status: int, *headers: tuple[str, str]) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        body = b'{"type":"error","error":{"type":"invalid_request_error","message":"no"}}'
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return answer


@pytest.mark.slow
def test_over_http_the_header_decides() -> None:
    with serve(refuse(429, ("x-should-retry", "false"))) as (url, seen, _):
        outcome(url)
    assert len(seen) == 1  # a 429 the server says not to retry is sent once
    with serve(refuse(400, ("x-should-retry", "true"))) as (url, seen, _):
        _, sleeps = outcome(url)
    assert len(seen) == 3 and len(sleeps) == 2  # a 400 it says to retry: 1 + max_retries
