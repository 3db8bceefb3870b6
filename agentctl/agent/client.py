"""The one module that talks to the `anthropic` SDK: a streamed beta request -> our small types.

The request goes out as `client.beta.messages.stream(**request)` sends it; the response's
events are read from its bytes as JSON (agent/sse.py) rather than through the SDK's models.

`anthropic` is imported inside functions (it takes over a second to import) and SDK types
appear in annotations only. The SDK's own retries are off (max_retries=0): one policy here
covers HTTP errors, timeouts, connection drops and streams that break mid-way alike.
What a server sends is held to `agentctl.agent.wire` limits (deadline, sizes, usage); redirects
are never followed (the key and the conversation stay with the configured origin); every error
text is redacted (`agentctl.redact`) before it leaves this module.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentctl.agent import sse
from agentctl.agent.model import (
    ModelResponse,
    Progress,
    ProgressKind,
    StreamItem,
    response_from_message,
)
from agentctl.agent.retry import RetryPolicy, parse_retry_after, status_is_retryable
from agentctl.agent.rounds import Outcome
from agentctl.agent.wire import (
    Alarm,
    BodyBudget,
    ResponseRejected,
    Watchdog,
    WireLimits,
    check_message,
    check_origin,
    check_request_size,
    scrub_surrogates,
    too_late,
)
from agentctl.errors import REQUEST_SIZE_REMEDY, ApiError, RequestTooLargeError
from agentctl.redact import redact, redact_json, redact_optional

if TYPE_CHECKING:
    # The SDK takes over a second to import: only when a model is called.
    import anthropic
    import httpx2
    from anthropic.types.beta import BetaMessage
    from anthropic.types.beta.messages import BetaMessageBatchResult

# A progress item every this many characters of a block (plus one when a block starts).
PROGRESS_STEP = 400
_E = TypeVar("_E", bound=BaseException)
_BLOCK_KINDS: dict[str, ProgressKind] = {
    "thinking": "thinking",
    "redacted_thinking": "thinking",
    "text": "text",
    "tool_use": "tool_input",
    "server_tool_use": "tool_input",
}
_DELTA_FIELDS = {
    "thinking_delta": "thinking",
    "text_delta": "text",
    "input_json_delta": "partial_json",
}
_STARTED = "agentctl.started"  # request extension: when the request was sent (wire clock)


class IncompleteStreamError(Exception):
    """The event stream ended before `message_stop` (a cut connection that closed cleanly)."""


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified: can it be retried, and what to tell the user."""

    retryable: bool
    message: str
    status: int | None = None
    request_id: str | None = None
    retry_after: float | None = None


class AnthropicClient:
    """A ModelClient over `client.beta.messages.stream(**request)`."""

    def __init__(
        self,
        *,
        base_url: str | None,
        timeout_s: float,
        retry: RetryPolicy,
        api_key: str | None = None,
        auth_token: str | None = None,
        wire: WireLimits | None = None,
        sdk_spans: bool = True,
    ) -> None:
        """`sdk_spans=False`: the SDK emits no OpenTelemetry spans of its own (agentctl's
        trace has a span per request: runner/trace.py)."""
        # The SDK takes over a second to import: only when a model is called.
        import anthropic

        # The SDK dumps what a server sent through pydantic, which warns on stderr about a
        # value of the wrong type; every figure is checked here (agent.wire) and a bad one
        # refused in one line, so the warning only adds noise, even under --quiet.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
        self._wire = wire or WireLimits()
        self._watchdog = Watchdog()
        http = anthropic.DefaultHttpxClient(
            follow_redirects=False,
            event_hooks={"request": [self._stamp], "response": [self._guard]},
        )
        self._sdk = anthropic.Anthropic(
            api_key=api_key,
            auth_token=auth_token,
            base_url=base_url or None,
            timeout=timeout_s,  # each wait; the watchdog ends the whole request at its deadline
            max_retries=0,
            http_client=http,
            # Compressed bodies would escape the size caps, which count bytes as received.
            default_headers={"accept-encoding": "identity"},
            open_telemetry=None if sdk_spans else False,
        )
        self._retry = retry
        self._timeout_s = timeout_s
        self._secrets = (api_key, auth_token)

    def _stamp(self, request: httpx2.Request) -> None:
        check_origin(str(request.url), str(self._sdk.base_url))
        size = int(request.headers.get("content-length") or 0)
        check_request_size(request.url.path, size, self._wire.max_request_bytes)
        request.extensions[_STARTED] = self._wire.clock()
        request.extensions["trace"] = self._watchdog.trace

    def _guard(self, response: httpx2.Response) -> None:
        """Headers are in: check time and encoding, then meter the body as it arrives."""
        lines = response.request.url.path.endswith("/results")  # a batch's JSONL results
        budget = BodyBudget(self._wire, response.request.extensions[_STARTED], lines=lines)
        budget.check_time()
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ResponseRejected(f"compressed response (content-encoding: {encoding})")
        response.stream = _metered_stream_type()(response.stream, budget)

    def stream(self, request: Mapping[str, Any]) -> Iterator[StreamItem]:
        """Progress items while streaming, then the response; ApiError once retries run out."""
        retries = 0
        while True:
            self._retry.before_attempt()
            failure = yield from self._try(request)
            if failure is None:
                return
            self._settle(failure, retries)
            retries += 1

    def _settle(self, failure: Failure, retries: int) -> None:
        """After a failed attempt: the ApiError if it was the last one, else the wait."""
        if not failure.retryable or retries >= self._retry.max_retries:
            # Raised outside the `except`: the SDK's exception (the server's unredacted
            # text) is neither the cause nor the context of the ApiError.
            raise _api_error(failure, retries + 1, self._secrets)
        self._retry.wait(retries, failure.retry_after)

    def _try(self, request: Mapping[str, Any]) -> Generator[StreamItem, None, Failure | None]:
        """One attempt: None once the response is out, else the classified failure."""
        alarm = None
        try:
            with self._watchdog.armed(self._wire.deadline_s) as alarm:
                yield from self._attempt(request)
        except Exception as exc:
            return _failure(exc, alarm, self._wire.deadline_s, self._timeout_s)
        return None

    def _attempt(self, request: Mapping[str, Any]) -> Iterator[StreamItem]:
        """The request sent as the SDK's `stream()` sends it; its events read from the bytes
        (agent/sse.py: the SDK's models of every event cost more than the rest of a turn)."""
        tracker = _ProgressTracker()
        message = sse.Message(delta_usage_counts(), request.get("betas") or ())
        with self._sdk.beta.messages.stream(**request) as stream:
            for event in self._events(stream.response):
                try:
                    message.add(event)
                    item = tracker.update(event)
                except (AttributeError, TypeError, KeyError, IndexError) as err:
                    why = f"{type(err).__name__}: {err}"
                    raise ResponseRejected(f"malformed stream event ({why})") from None
                if item is not None:
                    yield item
            if not message.complete:
                raise IncompleteStreamError("the response stream ended before message_stop")
            yield _checked(message.final(), stream.request_id or "", self._secrets)

    def _events(self, response: httpx2.Response) -> Iterator[Any]:
        """The response's events as JSON; an `error` event raises the SDK's status error for
        it, as the SDK's own stream does."""
        try:
            yield from sse.events(response.iter_bytes())
        except sse.ErrorEvent as err:
            # The SDK's constructor of its status errors (the class by status and error type).
            raise self._sdk._make_status_error(str(err), body=err.body, response=response) from None


@functools.cache
def delta_usage_counts() -> tuple[str, ...]:
    """The usage counts a `message_delta` carries: the fields of the SDK's
    BetaMessageDeltaUsage (those its stream copies onto the message)."""
    # The SDK takes over a second to import: only when a model is called.
    from anthropic.types.beta import BetaMessageDeltaUsage

    return tuple(BetaMessageDeltaUsage.model_fields)


def _checked(
    raw: dict[str, Any], request_id: str, secrets: tuple[str | None, ...]
) -> ModelResponse:
    """Our ModelResponse from a message as JSON, held to the wire limits and redacted."""
    check_message(raw)
    raw = scrub_surrogates(raw)
    return response_from_message(redact_json(raw, secrets), redact(request_id, secrets))


def _message_json(message: BetaMessage) -> dict[str, Any]:
    """An SDK message as JSON, its null fields left out (as agent/sse.py leaves them out)."""
    return message.to_dict(mode="json", exclude_unset=False, exclude_none=True, warnings=False)


class AnthropicBatches(AnthropicClient):
    """The Message Batches calls (agent/rounds.BatchApi) over the same client setup: retries,
    redirects refused, bodies metered, errors redacted. One caller at a time, plus `cancel`."""

    def create(self, requests: Sequence[tuple[str, Mapping[str, Any]]], betas: list[str]) -> str:
        body = [{"custom_id": custom_id, "params": dict(params)} for custom_id, params in requests]
        args: dict[str, Any] = {"requests": body, **({"betas": betas} if betas else {})}
        batch = self._call(lambda sdk: sdk.beta.messages.batches.create(**args))
        return str(batch.id)

    def ended(self, batch_id: str) -> bool:
        batch = self._call(lambda sdk: sdk.beta.messages.batches.retrieve(batch_id))
        return bool(batch.processing_status == "ended")

    def results(self, batch_id: str) -> dict[str, Outcome]:
        lines = self._call(lambda sdk: list(sdk.beta.messages.batches.results(batch_id)))
        found: dict[str, Outcome] = {}
        for line in lines:
            try:
                found[str(line.custom_id)] = _outcome(line.result, self._secrets)
            except ResponseRejected as err:
                found[str(line.custom_id)] = Outcome("errored", message=f"refused: {err}")
        return found

    def cancel(self, batch_id: str) -> None:
        self._call(lambda sdk: sdk.beta.messages.batches.cancel(batch_id))

    def _call(self, call: Callable[[anthropic.Anthropic], Any]) -> Any:
        """One SDK call under the retry policy; ApiError once retries run out."""
        retries = 0
        while True:
            self._retry.before_attempt()
            alarm = None
            try:
                with self._watchdog.armed(self._wire.deadline_s) as alarm:
                    return call(self._sdk)
            except Exception as exc:
                failure = _failure(exc, alarm, self._wire.deadline_s, self._timeout_s)
            self._settle(failure, retries)
            retries += 1


def _failure(exc: Exception, alarm: Alarm | None, deadline_s: float, timeout_s: float) -> Failure:
    """The failed attempt classified (re-raised when it is a bug, not an API or network
    error); whatever a connection cut at the deadline raised is the deadline."""
    if alarm is not None and alarm.expired:
        return Failure(False, f"response refused: {too_late(deadline_s)}")
    too_large = _cause(exc, RequestTooLargeError)
    if too_large is not None:  # never sent: nothing to retry, and not resumable as it is
        raise too_large from None
    failure = classify(exc, timeout_s)
    if failure is None:
        raise exc
    return failure


def _outcome(result: BetaMessageBatchResult, secrets: tuple[str | None, ...]) -> Outcome:
    if result.type == "succeeded":
        return Outcome("succeeded", _checked(_message_json(result.message), "", secrets))
    if result.type == "errored":
        error = result.error.error
        message = redact(str(error.message)[:300], secrets)
        return Outcome("errored", error_type=str(error.type), message=message)
    return Outcome(result.type)


@functools.cache
def _metered_stream_type() -> type[Any]:
    """A response byte stream that feeds a BodyBudget (httpx2 wants its own stream type)."""
    # The SDK's HTTP library: loaded with the SDK, on first use.
    import httpx2

    class MeteredStream(httpx2.SyncByteStream):
        def __init__(self, inner: httpx2.SyncByteStream, budget: BodyBudget) -> None:
            self._inner = inner
            self._budget = budget

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._inner:
                self._budget.feed(chunk)
                yield chunk

        def close(self) -> None:
            self._inner.close()

    return MeteredStream


class _ProgressTracker:
    """Turns raw stream events into a few Progress items (not one per delta), except for text:
    each text delta is one item carrying it (`--stream` writes the answer as it arrives)."""

    def __init__(self) -> None:
        self.kind: ProgressKind | None = None
        self.tool = ""
        self.chars = 0
        self.reported = 0
        self.text_chars = 0  # text of this response so far, all its text blocks

    def update(self, event: Any) -> Progress | None:
        """The Progress item `event` (the JSON of a stream event) makes, if any."""
        kind = event.get("type")
        if kind == "content_block_start":
            block = event["content_block"]
            self.kind = _BLOCK_KINDS.get(block.get("type"))
            self.tool = str(block.get("name") or "")
            self.chars = self.reported = 0
            return Progress(self.kind, 0, self.tool) if self.kind else None
        if kind != "content_block_delta" or self.kind is None:
            return None
        delta = event["delta"]
        attr = _DELTA_FIELDS.get(delta.get("type"))
        text = str(delta.get(attr) or "") if attr else ""
        self.chars += len(text)
        if attr == "text" and text:
            at, self.text_chars = self.text_chars, self.text_chars + len(text)
            self.reported = self.chars
            return Progress("text", self.chars, self.tool, text=text, at=at)
        if self.chars - self.reported < PROGRESS_STEP:
            return None
        self.reported = self.chars
        return Progress(self.kind, self.chars, self.tool)


def classify(exc: BaseException, timeout_s: float) -> Failure | None:
    """A Failure for errors of the API or the network; None for anything else (a bug)."""
    # The SDK takes over a second to import: only when a model is called.
    import anthropic
    import httpx2

    rejected = _cause(exc, ResponseRejected)
    if rejected is not None:
        return Failure(False, f"response refused: {rejected}")
    if isinstance(exc, RecursionError):
        return Failure(False, "response refused: JSON nested too deeply")
    if isinstance(exc, anthropic.APIStatusError):
        return _status_failure(exc)
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return Failure(True, f"the request timed out after {timeout_s:g}s (api.timeout_s)")
    if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        return Failure(True, f"connection failed: {_first_line(exc)}")
    if isinstance(exc, IncompleteStreamError | ValueError | httpx2.DecodingError):
        return Failure(True, f"malformed response: {_first_line(exc)}")
    if isinstance(exc, RuntimeError) and "event order" in str(exc):
        return Failure(True, f"malformed response: {_first_line(exc)}")
    return None


def _cause(exc: BaseException, kind: type[_E]) -> _E | None:
    """`exc` or the exception it was raised from, if one is a `kind` (the SDK wraps errors)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None or isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _status_failure(exc: anthropic.APIStatusError) -> Failure:
    error_type = exc.type if isinstance(exc.type, str) else None
    status = exc.status_code
    if 300 <= status < 400:
        return _redirect_failure(exc)
    message = exc.api_message or _first_line(exc)
    headers = dict(exc.response.headers) if exc.response is not None else None
    return Failure(
        retryable=status_is_retryable(status, error_type, headers),
        message=f"{error_type or 'error'}: {message}",
        status=status,
        request_id=exc.request_id,
        retry_after=parse_retry_after(headers),
    )


def _redirect_failure(exc: anthropic.APIStatusError) -> Failure:
    where = exc.response.headers.get("location", "?")
    why = f"redirect to {where} not followed (set api.base_url to the URL that answers)"
    return Failure(False, why, status=exc.status_code, request_id=exc.request_id)


def _api_error(failure: Failure, attempts: int, secrets: tuple[str | None, ...]) -> ApiError:
    head = "API request failed" if failure.status is None else f"API error {failure.status}"
    text = f"{head} ({failure.message})"
    if failure.retryable:
        text += f", gave up after {attempts} attempts (api.max_retries)"
    if failure.request_id:
        text += f"; request id {failure.request_id}"
    if failure.status == 401:
        text += "; check ANTHROPIC_API_KEY"
    if failure.status == 413:
        text += f"; the request is over the API's size limit: {REQUEST_SIZE_REMEDY}"
    request_id = redact_optional(failure.request_id, secrets)
    return ApiError(redact(text, secrets), status=failure.status, request_id=request_id)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
