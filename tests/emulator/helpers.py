"""Helpers for emulator tests: an SDK client factory and request builders."""

from __future__ import annotations

from typing import Any

import anthropic

BETA = "context-management-2025-06-27"
MODEL = "claude-sonnet-5"


def make_client(base_url: str, **kwargs: Any) -> anthropic.Anthropic:
    """A real SDK client pointed at an emulator (no retries unless asked)."""
    kwargs.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=base_url, api_key="test-key", **kwargs)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def request(**overrides: Any) -> dict[str, Any]:
    """A minimal valid beta.messages.create body."""
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 1000, "messages": [user("hello")]}
    body.update(overrides)
    return body
