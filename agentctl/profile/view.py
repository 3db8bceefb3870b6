"""What `profile show` reports: the resolved settings and what the API will receive. Pure data."""

from __future__ import annotations

from typing import Any

from agentctl.context.edits import build_context_management
from agentctl.profile.keys import KEY_DOCS
from agentctl.profile.settings import Profile
from agentctl.profile.writer import profile_to_dict


def show_data(profile: Profile, betas: list[str]) -> dict[str, Any]:
    """The `profile show --json` object: source, settings, context_management, betas.

    `betas` comes from the caller (the CLI asks the request builder), so that what `show`
    prints is what `run` sends.
    """
    return {
        "source": profile.source,
        "profile": profile_to_dict(profile),
        "context_management": build_context_management(profile.context_editing),
        "betas": list(betas),
    }


def flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """{"a": {"b": 1}} -> [("a.b", 1)]; empty tables stay as one row with {}."""
    rows: list[tuple[str, Any]] = []
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, key))
        else:
            rows.append((key, value))
    return rows


def api_field(key: str) -> str:
    """Where a dotted key ends up in the request ("" for client-side settings)."""
    parts = key.split(".")
    if parts[0] == "prices" and len(parts) == 3:
        key = f"prices.MODEL.{parts[2]}"
    doc = KEY_DOCS.get(key)
    return "" if doc is None or doc.api == "client" else doc.api
