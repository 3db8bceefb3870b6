"""Remove credentials from text before agentctl shows or writes it: the one redaction function.

What is removed: the values of ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN (read when called,
so a key set after import is covered too) and anything shaped like an Anthropic key
(`sk-ant-` followed by key characters). Applied where server or SDK text enters agentctl
(the client turns SDK errors into ApiError), and again by the transcript writer and the
error/NDJSON printers as a last guard.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"
SECRET_ENVS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# Shorter values are not real credentials; replacing them would garble ordinary words.
MIN_SECRET_CHARS = 8
_KEY_SHAPE = re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}")


def configured_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """The credential values set in the environment (plus `extra`), longest first."""
    values = {os.environ.get(name, "") for name in SECRET_ENVS} | {v or "" for v in extra}
    values = {v.strip() for v in values}
    return sorted((v for v in values if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every configured credential (and `secrets`) and `sk-ant-...` token replaced."""
    for secret in configured_secrets(secrets):
        text = text.replace(secret, REDACTED)
    return _KEY_SHAPE.sub(REDACTED, text) if "sk-ant-" in text else text


def redact_optional(text: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """`redact`, passing None through (request ids may be missing)."""
    return None if text is None else redact(text, secrets)


def redact_json(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """`value` (JSON data) with credentials redacted in every string; the same object if clean."""
    text = json.dumps(value, ensure_ascii=False)
    cleaned = redact(text, secrets)
    return value if cleaned == text else json.loads(cleaned)
