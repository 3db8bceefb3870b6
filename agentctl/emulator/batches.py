"""The Message Batches endpoints (/v1/messages/batches): create, list, retrieve, cancel, results.

Each request of a batch is answered by the same `MessagesService` as /v1/messages (validation,
context edits, cache accounting, the model), never streamed. When a batch ends is a rule, not a
timer the tests wait on: it ends on the first retrieve at which at least `ready_after` retrieves
were made AND `delay_s` seconds passed on the injected clock; its requests are answered then.
`BatchFaults` makes chosen custom_ids come back `errored` (api_error) or `expired`. Usage of a
batch result says `service_tier: "batch"`; the price (half of list) is the client's business.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentctl import clock as wall
from agentctl.emulator.protocol import BATCHES_ROUTE, ApiFailure, invalid
from agentctl.emulator.service import MessagesService
from agentctl.emulator.validation import CUSTOM_ID, validate_batch_requests
from agentctl.errors import UsageError

Json = dict[str, Any]
PREFIX = BATCHES_ROUTE
MAX_REQUESTS = 100_000  # the documented per-batch limit
KEEP_BATCHES = 1_000  # a long-lived emulator forgets the oldest batches past this many
FAULT_KINDS = ("errored", "expired")
_HEADERS_KEPT = ("anthropic-beta", "anthropic-version", "x-api-key", "authorization")


@dataclass
class BatchFaults:
    """custom_id -> the outcomes its next submissions get, used up in order ("errored" or
    "expired"); spec `ID:KIND[*N],...`, e.g. `t03:errored,t05:expired*2`."""

    queued: dict[str, list[str]] = field(default_factory=dict)

    def take(self, custom_id: str) -> str | None:
        kinds = self.queued.get(custom_id)
        return kinds.pop(0) if kinds else None


def parse_batch_faults(spec: str) -> BatchFaults:
    """Parse a batch fault spec; UsageError names the item that is wrong."""
    faults = BatchFaults()
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        custom_id, _, rest = item.partition(":")
        kind, _, times = rest.partition("*")
        if not CUSTOM_ID.match(custom_id) or kind not in FAULT_KINDS:
            raise UsageError(f"batch fault {item!r}: use ID:KIND[*N], KIND errored or expired")
        if times and not times.isdigit():
            raise UsageError(f"batch fault {item!r}: N must be a whole number")
        faults.queued.setdefault(custom_id, []).extend([kind] * int(times or 1))
    return faults


@dataclass(frozen=True)
class BatchTiming:
    """When a batch ends: on a retrieve once `ready_after` retrieves were made and `delay_s`
    seconds passed on `clock` (both 0: the first retrieve ends it)."""

    ready_after: int = 0
    delay_s: float = 0.0
    max_requests: int = MAX_REQUESTS


@dataclass
class _Batch:
    id: str
    requests: list[Json]
    headers: dict[str, str]
    created: dt.datetime
    started: float
    status: str = "in_progress"
    retrieves: int = 0
    results: list[Json] = field(default_factory=list)
    ended_at: dt.datetime | None = None
    cancel_at: dt.datetime | None = None


class BatchesService:
    """The batches a running emulator holds (in memory, thread-safe)."""

    def __init__(
        self,
        messages: MessagesService,
        timing: BatchTiming | None = None,
        faults: BatchFaults | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.messages = messages
        self.timing = timing or BatchTiming()
        self.faults = faults or BatchFaults()
        self.clock = clock or time.monotonic
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def handle(self, method: str, route: str, headers: dict[str, str], body: Any) -> Json | bytes:
        """The answer to one batches request: a JSON object, or the results as JSONL bytes."""
        parts = route[len(PREFIX) :].strip("/").split("/") if route != PREFIX else []
        with self._lock:
            answer = self._route(method, parts, headers, body)
        if isinstance(answer, dict):
            _absolute_urls(answer, f"http://{headers.get('host', '127.0.0.1')}")
        return answer

    def _route(
        self, method: str, parts: list[str], headers: dict[str, str], body: Any
    ) -> Json | bytes:
        if method == "POST" and not parts:
            return self._create(headers, body)
        if method == "GET" and not parts:
            return self._list()
        batch = self._find(parts[0]) if parts else None
        if batch is not None and method == "GET" and len(parts) == 1:
            return self._retrieve(batch)
        if batch is not None and method == "POST" and parts[1:] == ["cancel"]:
            return self._cancel(batch)
        if batch is not None and method == "GET" and parts[1:] == ["results"]:
            return self._results(batch)
        raise ApiFailure(404, "Not Found")

    def _find(self, batch_id: str) -> _Batch:
        batch = self._batches.get(batch_id)
        if batch is None:
            raise ApiFailure(404, f"message batch {batch_id!r} not found")
        return batch

    def _create(self, headers: dict[str, str], body: Any) -> Json:
        requests = validate_batch_requests(body, self.timing.max_requests)
        kept = {k: v for k, v in headers.items() if k in _HEADERS_KEPT}
        batch = _Batch(
            "msgbatch_emu" + uuid.uuid4().hex[:20], requests, kept, wall.now(), self.clock()
        )
        self._batches[batch.id] = batch
        while len(self._batches) > KEEP_BATCHES:
            del self._batches[next(iter(self._batches))]
        return self._view(batch)

    def _list(self) -> Json:
        data = [self._view(batch) for batch in reversed(self._batches.values())]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}

    def _retrieve(self, batch: _Batch) -> Json:
        batch.retrieves += 1
        if batch.status == "canceling":
            self._end(batch, canceled=True)
        elif batch.status == "in_progress" and self._ready(batch):
            self._end(batch, canceled=False)
        return self._view(batch)

    def _ready(self, batch: _Batch) -> bool:
        waited = self.clock() - batch.started
        return batch.retrieves >= self.timing.ready_after and waited >= self.timing.delay_s

    def _cancel(self, batch: _Batch) -> Json:
        """In progress: `canceling` now, `ended` with every request canceled at the next
        retrieve. An ended batch is returned as it is."""
        if batch.status == "in_progress":
            batch.status, batch.cancel_at = "canceling", wall.now()
        return self._view(batch)

    def _results(self, batch: _Batch) -> bytes:
        if batch.status != "ended":
            raise invalid(f"message batch {batch.id!r} has not finished processing")
        return b"".join(json.dumps(line).encode() + b"\n" for line in batch.results)

    def _end(self, batch: _Batch, *, canceled: bool) -> None:
        for request in batch.requests:
            custom_id = request["custom_id"]
            result = {"type": "canceled"} if canceled else self._answer(batch, request)
            batch.results.append({"custom_id": custom_id, "result": result})
        batch.status, batch.ended_at = "ended", wall.now()

    def _answer(self, batch: _Batch, request: Json) -> Json:
        fault = self.faults.take(request["custom_id"])
        if fault == "expired":
            return {"type": "expired"}
        if fault == "errored":
            return _errored(ApiFailure(500, "Internal server error (emulator: batch fault)"))
        try:
            message = self.messages.create(batch.headers, request["params"])
        except ApiFailure as failure:
            return _errored(failure)
        message["usage"]["service_tier"] = "batch"
        return {"type": "succeeded", "message": message}

    def _view(self, batch: _Batch) -> Json:
        return batch_json(batch.id, batch.status, _counts(batch), _times(batch))


def _absolute_urls(answer: Json, origin: str) -> None:
    """`results_url` as the API gives it: an absolute URL (here, of the host that was asked)."""
    for view in answer.get("data") or [answer]:
        if view.get("results_url"):
            view["results_url"] = origin + view["results_url"]


def _errored(failure: ApiFailure) -> Json:
    error = {"type": failure.error_type, "message": failure.message}
    return {"type": "errored", "error": {"type": "error", "error": error}}


def _counts(batch: _Batch) -> dict[str, int]:
    counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
    if batch.status != "ended":
        counts["processing"] = len(batch.requests)
    for line in batch.results:
        counts[line["result"]["type"]] += 1
    return counts


def _times(batch: _Batch) -> dict[str, dt.datetime | None]:
    return {
        "created_at": batch.created,
        "expires_at": batch.created + dt.timedelta(hours=24),
        "ended_at": batch.ended_at,
        "cancel_initiated_at": batch.cancel_at,
    }


def batch_json(
    batch_id: str, status: str, counts: dict[str, int], times: dict[str, dt.datetime | None]
) -> Json:
    """The BetaMessageBatch object; `results_url` (a path: the server makes it absolute)
    once processing has ended."""
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": counts,
        **{key: _rfc3339(value) for key, value in times.items()},
        "archived_at": None,
        "results_url": f"{PREFIX}/{batch_id}/results" if status == "ended" else None,
    }


def _rfc3339(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
