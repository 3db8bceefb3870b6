"""The Message Batches endpoints over real HTTP with the real SDK (`beta.messages.batches`)."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from agentctl.emulator.batches import BatchTiming, parse_batch_faults
from agentctl.emulator.server import running
from agentctl.errors import UsageError

from .helpers import BETA, make_client, request, user


def entry(custom_id: str, **params: Any) -> dict[str, Any]:
    return {"custom_id": custom_id, "params": request(**params)}


def results_of(client: anthropic.Anthropic, batch_id: str) -> dict[str, Any]:
    return {line.custom_id: line.result for line in client.beta.messages.batches.results(batch_id)}


@pytest.mark.dates
def test_a_batch_answers_each_request_as_messages_would() -> None:
    params = request(messages=[user("Summarise part 3.")])
    with running() as emu:
        client = make_client(emu.base_url)
        direct = client.beta.messages.create(**params, betas=[BETA])
        batch = client.beta.messages.batches.create(
            requests=[{"custom_id": "one", "params": params}, entry("two")], betas=[BETA]
        )
        assert batch.processing_status == "in_progress"
        assert batch.request_counts.processing == 2 and batch.results_url is None
        ended = client.beta.messages.batches.retrieve(batch.id)
        found = results_of(client, batch.id)
    assert ended.processing_status == "ended" and ended.request_counts.succeeded == 2
    assert ended.results_url == f"{emu.base_url}/v1/messages/batches/{batch.id}/results"
    assert found["one"].type == "succeeded"
    message = found["one"].message
    assert [b.to_dict() for b in message.content] == [b.to_dict() for b in direct.content]
    assert message.usage.input_tokens == direct.usage.input_tokens
    assert (message.usage.service_tier, direct.usage.service_tier) == ("batch", "standard")
    assert emu.requests[1].headers["anthropic-beta"] == BETA


@pytest.mark.dates
def test_processing_ends_after_the_set_number_of_retrieves() -> None:
    with running(batch_timing=BatchTiming(ready_after=3)) as emu:
        client = make_client(emu.base_url)
        batch = client.beta.messages.batches.create(requests=[entry("a")])
        seen = [client.beta.messages.batches.retrieve(batch.id).processing_status for _ in "123"]
    assert seen == ["in_progress", "in_progress", "ended"]


@pytest.mark.dates
def test_processing_waits_for_the_delay_on_the_injected_clock() -> None:
    now = [100.0]
    with running(batch_timing=BatchTiming(delay_s=60), clock=lambda: now[0]) as emu:
        client = make_client(emu.base_url)
        batch = client.beta.messages.batches.create(requests=[entry("a")])
        early = client.beta.messages.batches.retrieve(batch.id).processing_status
        now[0] += 60
        late = client.beta.messages.batches.retrieve(batch.id).processing_status
    assert (early, late) == ("in_progress", "ended")


@pytest.mark.dates
def test_faults_make_chosen_requests_errored_or_expired_once() -> None:
    faults = parse_batch_faults("b:errored,c:expired")
    with running(batch_faults=faults) as emu:
        client = make_client(emu.base_url)
        requests = [entry(x) for x in "abc"]
        first = client.beta.messages.batches.create(requests=requests)
        counts = client.beta.messages.batches.retrieve(first.id).request_counts
        found = results_of(client, first.id)
        again = client.beta.messages.batches.create(requests=requests)
        client.beta.messages.batches.retrieve(again.id)
        retried = results_of(client, again.id)
    assert (counts.succeeded, counts.errored, counts.expired) == (1, 1, 1)
    assert found["b"].type == "errored" and found["b"].error.error.type == "api_error"
    assert found["c"].type == "expired"
    assert {result.type for result in retried.values()} == {"succeeded"}


@pytest.mark.dates
def test_an_invalid_request_comes_back_errored_with_the_messages_validation() -> None:
    with running() as emu:
        client = make_client(emu.base_url)
        bad = {"custom_id": "bad", "params": request(max_tokens=0)}
        batch = client.beta.messages.batches.create(requests=[bad, entry("good")])
        client.beta.messages.batches.retrieve(batch.id)
        found = results_of(client, batch.id)
    assert found["good"].type == "succeeded"
    assert found["bad"].type == "errored"
    assert found["bad"].error.error.type == "invalid_request_error"
    assert "max_tokens" in found["bad"].error.error.message


@pytest.mark.dates
def test_cancel_ends_the_batch_with_every_request_canceled() -> None:
    with running(batch_timing=BatchTiming(ready_after=5)) as emu:
        client = make_client(emu.base_url)
        batch = client.beta.messages.batches.create(requests=[entry("a"), entry("b")])
        canceling = client.beta.messages.batches.cancel(batch.id)
        ended = client.beta.messages.batches.retrieve(batch.id)
        found = results_of(client, batch.id)
        listed = client.beta.messages.batches.list()
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at
    assert ended.processing_status == "ended" and ended.request_counts.canceled == 2
    assert {r.type for r in found.values()} == {"canceled"}
    assert [b.id for b in listed.data] == [batch.id]


@pytest.mark.parametrize(
    ("requests", "says"),
    [
        ([], "requests: must be a non-empty list"),
        ([{"custom_id": "a b", "params": request()}], "requests.0.custom_id: must match"),
        ([{"custom_id": "x" * 65, "params": request()}], "requests.0.custom_id: must match"),
        ([entry("a"), entry("a")], "requests.1.custom_id: 'a' is used more than once"),
        ([{"custom_id": "a", "params": "hi"}], "requests.0: must be an object with custom_id"),
        ([entry("a", stream=True)], "requests.0.params.stream: streaming is not supported"),
        ([entry("a"), entry("b"), entry("c")], "at most 2 requests per batch (3 given)"),
    ],
)
def test_create_refuses_bad_batches(requests: list[Any], says: str) -> None:
    with running(batch_timing=BatchTiming(max_requests=2)) as emu:
        client = make_client(emu.base_url)
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.beta.messages.batches.create(requests=requests)
    assert caught.value.status_code == 400
    assert says in str(caught.value)


@pytest.mark.dates
def test_unknown_batches_and_early_results_are_refused() -> None:
    with running(batch_timing=BatchTiming(ready_after=9)) as emu:
        client = make_client(emu.base_url)
        with pytest.raises(anthropic.NotFoundError):
            client.beta.messages.batches.retrieve("msgbatch_nope")
        batch = client.beta.messages.batches.create(requests=[entry("a")])
        # The SDK's results() refuses before asking when there is no results_url: ask directly.
        with pytest.raises(anthropic.BadRequestError, match="has not finished processing"):
            client.get(f"/v1/messages/batches/{batch.id}/results", cast_to=object)


def test_bad_fault_specs_are_refused() -> None:
    with pytest.raises(UsageError, match="use ID:KIND"):
        parse_batch_faults("a:exploded")
    assert parse_batch_faults("a:expired*2,b:errored").queued == {
        "a": ["expired", "expired"],
        "b": ["errored"],
    }
