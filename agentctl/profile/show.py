"""What `profile show` reports: the resolved settings and what the API will receive. Pure data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentctl.profile.keys import KEY_DOCS
from agentctl.profile.loader import (
    ambient_path,
    explicit_path,
    nest,
    parse_dotted_key,
    parse_set_value,
    read_profile_file,
)
from agentctl.profile.settings import Profile
from agentctl.profile.to_toml import profile_to_dict


def show_data(
    profile: Profile, betas: list[str], context_management: dict[str, Any] | None
) -> dict[str, Any]:
    """The `profile show --json` object: source, settings, context_management, betas.

    `betas` and `context_management` (of a first request) come from the caller (the CLI asks
    the request builder), so that what `show` prints is what `run` sends.
    """
    return {
        "source": profile.source,
        "profile": profile_to_dict(profile),
        "context_management": context_management,
        "betas": list(betas),
    }


def batched_note(profile: Profile) -> str | None:
    """For batched clearing, what later requests send instead of the edit `show` prints."""
    tool_uses = profile.context_editing.tool_uses
    if not tool_uses.enabled or tool_uses.strategy != "batched":
        return None
    return (
        'note: batched clearing (strategy "batched"): requests carry this edit until the prompt'
        f" first passes {tool_uses.trigger} input tokens; from then on each carries trigger"
        ' {"type": "tool_uses", "value": B} and keep = (clearable tool uses - B), B being the'
        ' batch boundary (docs/context.md, "Batched clearing"); strategy = "server" sends the'
        " edit as written"
    )


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
    return doc.api if doc is not None else ""


def profile_origins(explicit: str | Path | None, sets: Sequence[str]) -> dict[str, str]:
    """Dotted key -> "ambient" (the profile found without FILE), "file" (FILE) or "--set" for
    each key a layer wrote, the highest layer winning; the rest are defaults."""
    origins: dict[str, str] = {}
    for path, name in ((ambient_path(), "ambient"), (explicit_path(explicit), "file")):
        written = flatten(read_profile_file(path) if path else {})
        # An empty table header (`[memory]` with only comments) sets nothing.
        origins.update((key, name) for key, value in written if value != {})
    for item in sets:
        key, _, text = item.partition("=")
        override = nest(parse_dotted_key(key.strip(), item), parse_set_value(text.strip()))
        origins.update((k, "--set") for k, _ in flatten(override))
    return origins


def origin_of(key: str, origins: dict[str, str]) -> str:
    """Where a shown key's value came from: its own entry or its nearest table's, else default."""
    parts = key.split(".")
    for end in range(len(parts), 0, -1):
        origin = origins.get(".".join(parts[:end]))
        if origin:
            return origin
    return "default"
