"""Lockstep rounds: RoundClients on threads, the real SDK's batches calls against the emulator."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from agentctl.agent.client import AnthropicBatches
from agentctl.agent.model import ModelResponse
from agentctl.agent.request import build_request
from agentctl.agent.retry import RetryPolicy
from agentctl.agent.rounds import PollPolicy, RoundCoordinator
from agentctl.agent.wire import WireLimits
from agentctl.emulator import BatchTiming, Emulator, parse_batch_faults, running
from agentctl.errors import ApiError, InterruptedRunError
from agentctl.profile.settings import Profile

Result = ModelResponse | BaseException


def ask(text: str) -> dict[str, Any]:
    return build_request(Profile(), [{"role": "user", "content": text}], [])


@contextmanager
def coordinator(
    *, faults: str = "", ready_after: int = 0, **kw: Any
) -> Iterator[tuple[RoundCoordinator, Emulator]]:
    timing = BatchTiming(ready_after=ready_after)
    with running(batch_timing=timing, batch_faults=parse_batch_faults(faults)) as emu:
        api = AnthropicBatches(
            api_key="test-key", base_url=emu.base_url, timeout_s=5, retry=RetryPolicy(0)
        )
        yield RoundCoordinator(api, **kw), emu


def run_tasks(rounds: RoundCoordinator, names: list[str], turns: int = 1) -> dict[str, Any]:
    """Each name on its own thread: `turns` requests in a row; what each got (or raised).
    Every place is joined before any thread starts; each leaves when it is done."""
    got: dict[str, Any] = {}
    rounds.join(len(names))  # a place each, as the batch scheduler gives its workers

    def work(name: str) -> None:
        try:
            with rounds.seat(name) as client:
                got[name] = [_one(client, f"{name} turn {n}") for n in range(turns)]
        except BaseException as err:
            got[name] = err
        finally:
            rounds.leave()

    threads = [threading.Thread(target=work, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    return got


def _one(client: Any, text: str) -> ModelResponse:
    (item,) = list(client.stream(ask(text)))
    assert isinstance(item, ModelResponse)
    return item


def batch_posts(emu: Emulator) -> list[list[str]]:
    """The custom_ids of each batch created, in order."""
    creates = [r for r in emu.requests if r.method == "POST" and r.path.endswith("/batches")]
    return [[q["custom_id"] for q in r.body["requests"]] for r in creates]


@pytest.mark.dates
def test_the_live_tasks_requests_go_as_one_batch_per_round() -> None:
    with coordinator() as (rounds, emu):
        got = run_tasks(rounds, ["a", "b.c", "d"], turns=2)
    assert batch_posts(emu) == [["a", "b_c", "d"], ["a", "b_c", "d"]]
    assert "a turn 1" in got["a"][1].text and "d turn 0" in got["d"][0].text
    assert got["b.c"][0].usage.input_tokens > 0
    assert (rounds.stats.rounds, rounds.stats.batches) == (2, 2)


@pytest.mark.dates
def test_a_place_that_leaves_no_longer_holds_a_round_back() -> None:
    with coordinator() as (rounds, emu):
        rounds.join()  # a worker that will find no task
        done = threading.Thread(target=rounds.leave)
        done.start()  # leaves while "x" waits for it, or before: either way x goes alone
        got = run_tasks(rounds, ["x"])
        done.join()
    assert batch_posts(emu) == [["x"]]
    assert "x turn 0" in got["x"][0].text


@pytest.mark.dates
def test_a_worker_between_two_tasks_holds_the_round_back() -> None:
    with coordinator() as (rounds, emu):
        rounds.join(2)
        second = threading.Event()

        def worker_a() -> None:  # two short tasks in a row, as a batch worker runs them
            for name in ("a1", "a2"):
                with rounds.seat(name) as client:
                    _one(client, f"{name} turn 0")
                if name == "a1":
                    second.wait(20)
            rounds.leave()

        thread = threading.Thread(target=worker_a)
        thread.start()
        with rounds.seat("b") as client:
            _one(client, "b turn 0")
            second.set()  # a1 is done; b's next request must wait for a2's first
            _one(client, "b turn 1")
        rounds.leave()
        thread.join(20)
    assert batch_posts(emu) == [["a1", "b"], ["a2", "b"]]


@pytest.mark.dates
def test_an_in_progress_batch_is_polled_with_growing_waits() -> None:
    sleeps: list[float] = []
    poll = PollPolicy(first_s=1, factor=3, max_s=5)
    with coordinator(ready_after=4, poll=poll, sleep=sleeps.append) as (rounds, _):
        got = run_tasks(rounds, ["a"])
    assert isinstance(got["a"][0], ModelResponse)
    assert sleeps == [1, 3, 5]


@pytest.mark.dates
def test_errored_and_expired_requests_go_again_in_the_next_round() -> None:
    with coordinator(faults="b:errored,c:expired") as (rounds, emu):
        got = run_tasks(rounds, ["a", "b", "c"])
    assert batch_posts(emu) == [["a", "b", "c"], ["b", "c"]]
    assert all(isinstance(got[name][0], ModelResponse) for name in "abc")
    assert rounds.stats.retried == 2


@pytest.mark.dates
def test_a_request_failing_every_round_fails_its_task_only() -> None:
    with coordinator(faults="b:expired*3", max_retries=2) as (rounds, emu):
        got = run_tasks(rounds, ["a", "b"], turns=2)
    err = got["b"]
    assert isinstance(err, ApiError)
    assert str(err) == "batch request b: expired, 3 attempts (api.max_retries)"
    assert len(got["a"]) == 2  # its second turn went out with b's first retry
    assert batch_posts(emu) == [["a", "b"], ["a", "b"], ["b"]]


@pytest.mark.dates
def test_an_invalid_request_fails_at_once() -> None:
    with (
        coordinator() as (rounds, emu),
        rounds.seat("bad") as client,
        pytest.raises(ApiError) as caught,
    ):
        list(client.stream({**ask("hi"), "max_tokens": 0}))
    assert str(caught.value).startswith("batch request bad: errored (invalid_request_error:")
    assert len(batch_posts(emu)) == 1


@pytest.mark.dates
def test_cancel_stops_the_wait_and_cancels_the_batch_in_flight() -> None:
    holder: list[RoundCoordinator] = []

    def sleep(_: float) -> None:
        holder[0].cancel()  # as Ctrl-C would, while the round waits

    with coordinator(ready_after=99, sleep=sleep) as (rounds, emu):
        holder.append(rounds)
        got = run_tasks(rounds, ["a"])
    assert isinstance(got["a"], InterruptedRunError)
    cancels = [r.path for r in emu.requests if r.path.endswith("/cancel")]
    assert cancels == [f"/v1/messages/batches/{rounds.stats.batch_ids[0]}/cancel"]


@pytest.mark.dates
def test_the_event_size_cap_counts_each_results_line_not_the_whole_file() -> None:
    params = {name: ask(f"Summarise part {name}.") for name in "abcde"}
    with running() as emu:
        limits = WireLimits(max_event_bytes=1500)  # one result line fits, five do not
        api = AnthropicBatches(
            api_key="k", base_url=emu.base_url, timeout_s=5, retry=RetryPolicy(0), wire=limits
        )
        requests = [
            (name, {k: v for k, v in p.items() if k != "betas"}) for name, p in params.items()
        ]
        batch_id = api.create(requests, params["a"]["betas"])
        assert api.ended(batch_id)
        found = api.results(batch_id)
    assert {outcome.kind for outcome in found.values()} == {"succeeded"}
    sizes = [len(json.dumps(o.response.raw)) for o in found.values() if o.response is not None]
    assert max(sizes) < 1400 and sum(sizes) > 1500


@pytest.mark.dates
def test_a_batch_that_never_ends_is_canceled_and_the_round_fails() -> None:
    waits: list[float] = []
    poll = PollPolicy(first_s=1.0, factor=2.0, max_s=4.0, max_wait_s=15.0)
    with coordinator(ready_after=10**9, poll=poll, sleep=waits.append) as (rounds, emu):
        got = run_tasks(rounds, ["a"])
        cancels = [r.path for r in emu.requests if r.path.endswith("/cancel")]
    assert isinstance(got["a"], ApiError)
    assert "had not ended after 15 s of polling" in str(got["a"])
    assert waits == [1.0, 2.0, 4.0, 4.0, 4.0]  # 15 s asked for in all, then no more waits
    assert len(cancels) == 1
