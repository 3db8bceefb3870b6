"""Wire-level facts of the Messages API the emulator imitates: error envelopes, ids, headers."""

from __future__ import annotations

import json
import uuid
from typing import Any

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"  # compact_20260112; enough alone for context_management
BETA_COMPACT_ON_DEMAND = "compact-2026-09-04"  # top-level `compaction: {"type": "summarize"}`
ANTHROPIC_VERSION = "2023-06-01"
BATCHES_ROUTE = "/v1/messages/batches"
# Continuations of the server-side tool loop in one response before it stops with
# `pause_turn` (ours: the API's number is not public; docs/emulator.md).
PAUSE_AFTER = 10

# HTTP status -> the API's error `type` for that status.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class ApiFailure(Exception):
    """An error response the emulator sends: status, error type and message, as the API does."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or ERROR_TYPES.get(status, "api_error")
        self.details = details  # `error.details`, e.g. {"error_code": ...}


def invalid(message: str) -> ApiFailure:
    """A 400 invalid_request_error, the most common failure."""
    return ApiFailure(400, message)


def error_body(failure: ApiFailure, request_id: str) -> dict[str, Any]:
    """The API's error envelope."""
    error: dict[str, Any] = {"type": failure.error_type, "message": failure.message}
    if failure.details is not None:
        error["details"] = failure.details
    return {"type": "error", "error": error, "request_id": request_id}


def new_request_id() -> str:
    """A fresh `req_...` id for the `request-id` header."""
    return "req_emu" + uuid.uuid4().hex[:20]


def new_message_id() -> str:
    """A fresh `msg_...` id."""
    return "msg_emu" + uuid.uuid4().hex[:20]


def stable_id(prefix: str, *parts: object) -> str:
    """A deterministic id (tool_use ids, signatures) so replays of the same input match."""
    import hashlib  # here: its OpenSSL start-up is a tenth of `doctor --offline`

    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return f"{prefix}{digest[:24]}"


def header_betas(headers: dict[str, str]) -> set[str]:
    """The comma-separated `anthropic-beta` header as a set."""
    raw = headers.get("anthropic-beta", "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def check_auth(headers: dict[str, str]) -> None:
    """Require an x-api-key or a Bearer token, as the API does (any non-empty value)."""
    if headers.get("x-api-key", "").strip():
        return
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return
    raise ApiFailure(401, "x-api-key header is required")


def check_version(headers: dict[str, str]) -> None:
    """The API rejects requests without an `anthropic-version` header."""
    if not headers.get("anthropic-version", "").strip():
        raise invalid("anthropic-version: header is required")
