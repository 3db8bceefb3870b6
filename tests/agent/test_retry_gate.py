"""One retry gate for many clients (a batch's workers): a 429's retry-after holds them all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentctl.agent.client import AnthropicClient
from agentctl.agent.model import ModelResponse
from agentctl.agent.request import build_request
from agentctl.agent.retry import RetryGate, RetryPolicy
from agentctl.emulator import running
from agentctl.profile.settings import Profile


class FakeTime:
    """A clock that only `sleep` moves; `during_first_sleep` runs once inside the first sleep
    (another worker acting while this one waits)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []
        self.during_first_sleep: Callable[[], None] = lambda: None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        action, self.during_first_sleep = self.during_first_sleep, lambda: None
        action()
        self.now += seconds


def client(base_url: str, gate: RetryGate) -> AnthropicClient:
    retry = RetryPolicy(max_retries=2, base_delay=0.001, jitter=lambda: 1.0, gate=gate)
    return AnthropicClient(api_key="k", base_url=base_url, timeout_s=5.0, retry=retry)


def ask(model: AnthropicClient) -> Any:
    request = build_request(Profile(), [{"role": "user", "content": "hi"}], [])
    return list(model.stream(request))[-1]


@pytest.mark.slow
def test_a_429_on_one_client_holds_the_next_request_of_another() -> None:
    time = FakeTime()
    gate = RetryGate(clock=time.clock, sleep=time.sleep)
    with running(faults="429:7@1") as emu:
        first, second = client(emu.base_url, gate), client(emu.base_url, gate)
        answers: list[Any] = []
        # While the first client waits out its 429, the second one asks: it waits too.
        time.during_first_sleep = lambda: answers.append(ask(second))
        answers.append(ask(first))
        assert len(emu.requests) == 3
    assert all(isinstance(answer, ModelResponse) for answer in answers)
    assert time.sleeps == [7.0, 7.0]  # the first client's wait, then the second's whole wait


def test_without_a_hold_the_gate_lets_requests_through_at_once() -> None:
    time = FakeTime()
    gate = RetryGate(clock=time.clock, sleep=time.sleep)
    with running() as emu:
        assert isinstance(ask(client(emu.base_url, gate)), ModelResponse)
    assert time.sleeps == []


def test_a_shorter_hold_never_cuts_a_longer_one() -> None:
    time = FakeTime()
    gate = RetryGate(clock=time.clock, sleep=time.sleep)
    gate.hold(5.0)
    gate.hold(1.0)
    gate.pass_through()
    assert time.sleeps == [5.0]
