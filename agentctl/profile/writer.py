"""Profile -> plain TOML-able dict and TOML text (tomli-w): the inverse of the loader."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agentctl.profile.schema import NOT_KEYS
from agentctl.profile.settings import Profile


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """Every setting as TOML types (paths as strings, tuples as lists); `source` left out."""
    result = to_plain(profile)
    assert isinstance(result, dict)
    return result


def to_plain(value: Any) -> Any:
    """Settings value -> TOML value, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in NOT_KEYS
        }
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def profile_to_toml(profile: Profile) -> str:
    """The profile as TOML text (no comments); loads back to an equal Profile."""
    import tomli_w

    text: str = tomli_w.dumps(profile_to_dict(profile))
    return text
