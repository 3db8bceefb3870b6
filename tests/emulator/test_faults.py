"""Fault injection: each kind against the real SDK, its retries, and the spec grammar."""

from __future__ import annotations

import threading

import anthropic
import pytest

from agentctl.emulator.faults import Fault, parse_faults
from agentctl.emulator.server import running
from agentctl.errors import UsageError

from .helpers import make_client, request


def test_429_carries_retry_after_and_the_sdk_retries() -> None:
    with running(faults="429:0.01@1") as emu:
        with pytest.raises(anthropic.RateLimitError) as caught:
            make_client(emu.base_url).beta.messages.create(**request())
        assert caught.value.response.headers["retry-after"] == "0.01"
        assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    with running(faults="429:0.01@1-2") as emu:
        message = make_client(emu.base_url, max_retries=2).beta.messages.create(**request())
        assert message.content and len(emu.requests) == 3


@pytest.mark.parametrize(
    ("kind", "error", "error_type"),
    [
        ("529", anthropic.OverloadedError, "overloaded_error"),
        ("500", anthropic.InternalServerError, "api_error"),
    ],
)
def test_server_errors(kind: str, error: type[anthropic.APIStatusError], error_type: str) -> None:
    with running(faults=f"{kind}@1") as emu:
        with pytest.raises(error) as caught:
            make_client(emu.base_url).beta.messages.create(**request())
        assert caught.value.status_code == int(kind)
        assert caught.value.body["error"]["type"] == error_type  # type: ignore[index]
        retried = make_client(emu.base_url, max_retries=1).beta.messages.create(**request())
        assert retried.content and len(emu.requests) == 2  # request 2 has no fault


def test_hang_times_out_the_client_and_does_not_block_shutdown() -> None:
    # An hour's hang: the client's timeout fires first by construction, and only close() can
    # end the handler. The bound on join() is reached only when close() does not wake it.
    before = set(threading.enumerate())
    with running(faults="hang:3600@1") as emu:
        with pytest.raises(anthropic.APITimeoutError):
            make_client(emu.base_url, timeout=0.3).beta.messages.create(**request())
        assert make_client(emu.base_url).beta.messages.create(**request()).content  # no fault
        assert len(emu.requests) == 2
        handlers = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        assert any(t.name.endswith("(process_request_thread)") for t in handlers)
    for thread in handlers:
        thread.join(timeout=60)
    assert [t.name for t in handlers if t.is_alive()] == []  # close() woke the hang


def test_drop_before_any_byte_is_a_connection_error_the_sdk_retries() -> None:
    with running(faults="drop@1") as emu:
        with pytest.raises(anthropic.APIConnectionError):
            make_client(emu.base_url).beta.messages.create(**request())
        assert make_client(emu.base_url, max_retries=1).beta.messages.create(**request()).content


def test_drop_mid_stream_after_some_events() -> None:
    with running(faults="drop:2@1") as emu:
        client = make_client(emu.base_url)
        seen = []
        # The SDK does not wrap a mid-stream failure: httpx's RemoteProtocolError surfaces.
        with pytest.raises(Exception, match="incomplete chunked read"):
            for event in client.beta.messages.create(**request(stream=True)):
                seen.append(event.type)
        assert seen == ["message_start", "content_block_start"]


def test_malformed_json_body() -> None:
    # The SDK surfaces the broken body as a JSONDecodeError (a ValueError), not an APIError.
    with running(faults="malformed@1") as emu, pytest.raises(ValueError, match="Expecting"):
        make_client(emu.base_url).beta.messages.create(**request())


def test_malformed_sse_data() -> None:
    with running(faults="malformed@1") as emu, pytest.raises(ValueError):
        for _ in make_client(emu.base_url).beta.messages.create(**request(stream=True)):
            pass


def test_spec_grammar() -> None:
    plan = parse_faults("429:2@1, 529@3-4,hang@5,rate=0.3:500|drop,seed=7")
    assert plan.numbered[1] == Fault("429", 2.0)
    assert plan.numbered[3] == plan.numbered[4] == Fault("529")
    assert plan.numbered[5] == Fault("hang", 30.0)
    assert plan.rate == 0.3 and plan.seed == 7
    assert plan.rate_kinds == (Fault("500"), Fault("drop", 3.0))


def test_rate_is_seeded_and_roughly_the_rate() -> None:
    one = parse_faults("rate=0.3:500|drop,seed=7")
    two = parse_faults("rate=0.3:500|drop,seed=7")
    other = parse_faults("rate=0.3:500|drop,seed=8")
    draws = [one.fault_for(n) for n in range(1, 1001)]
    assert draws == [two.fault_for(n) for n in range(1, 1001)]
    assert draws != [other.fault_for(n) for n in range(1, 1001)]
    hits = sum(d is not None for d in draws)
    assert 250 < hits < 350
    assert {d.kind for d in draws if d} == {"500", "drop"}


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("418@1", "unknown kind '418'"),
        ("500", "expected KIND@N"),
        ("500@0", "start at 1"),
        ("500@x", "'x' is not a number"),
        ("rate=2:500", "probability"),
        ("rate=0.5", "expected rate=P:KIND"),
    ],
)
def test_bad_specs_name_the_item(spec: str, fragment: str) -> None:
    with pytest.raises(UsageError, match="faults spec item") as caught:
        parse_faults(spec)
    assert fragment in str(caught.value)


def test_streamerror_sends_an_sse_error_event_mid_stream() -> None:
    with running(faults="streamerror:2@1,streamerror@2") as emu:
        client = make_client(emu.base_url)
        seen = []
        with pytest.raises(anthropic.APIStatusError) as caught:
            for event in client.beta.messages.create(**request(stream=True)):
                seen.append(event.type)
        with pytest.raises(anthropic.OverloadedError):  # not streaming: a plain 529
            client.beta.messages.create(**request())
    assert seen == ["message_start", "content_block_start"]
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
