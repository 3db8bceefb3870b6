"""Find, read, merge and validate a profile: the one entry point the rest of agentctl uses.

Lookup order: an explicit path, else $AGENTCTL_PROFILE, else ./agentctl.toml, else the user
profile (agentctl.home.user_profile_path()), else the built-in defaults.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import os
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentctl.errors import ConfigError, UsageError
from agentctl.home import user_profile_path
from agentctl.profile.keys import key_locations, path_keys
from agentctl.profile.schema import FieldError, convert_table, join_key
from agentctl.profile.settings import Profile
from agentctl.profile.trust import FrontMatter, check_front_matter
from agentctl.profile.validate import check_profile
from agentctl.profile.writer import profile_to_dict

BUILTIN_SOURCE = "<built-in>"
LOCAL_PROFILE = "agentctl.toml"
ENV_PROFILE = "AGENTCTL_PROFILE"
PATH_KEYS = frozenset(path_keys(Profile))

__all__ = [
    "BUILTIN_SOURCE",
    "ProfileKeyError",
    "apply_set_overrides",
    "build_profile",
    "deep_merge",
    "find_profile_path",
    "profile_to_dict",
    "read_profile_file",
    "resolve_profile",
]


class ProfileKeyError(ConfigError):
    """A ConfigError about one dotted key; keeps the key so the caller can say who set it."""

    def __init__(self, source: str, key: str, detail: str) -> None:
        super().__init__(f"profile {source}: {key}: {detail}")
        self.key = key
        self.detail = detail


def read_profile_file(path: Path) -> dict[str, Any]:
    """Parse one TOML file; ConfigError naming the file (and line) when it cannot be used."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ConfigError(f"profile {path}: cannot read: {err.strerror or err}") from err
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ConfigError(f"profile {path}: not UTF-8 text ({err.reason})") from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"profile {path}: invalid TOML: {err}") from err


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: tables merge key by key, any other value in `override` replaces."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def apply_set_overrides(data: dict[str, Any], sets: Sequence[str]) -> dict[str, Any]:
    """Apply `--set KEY=VALUE` items in order; KEY is a dotted TOML key, VALUE a TOML value.

    A VALUE that is not valid TOML (`model=claude-opus-5-5`) is taken as a plain string.
    """
    for item in sets:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE (e.g. --set max_turns=20)")
        path = parse_dotted_key(key.strip(), item)
        value = parse_set_value(text.strip())
        if ".".join(path) in PATH_KEYS and isinstance(value, str) and value:
            # A path typed on the command line means what the shell means: relative to cwd.
            value = str(Path.cwd() / Path(value).expanduser())
        data = deep_merge(data, nest(path, value))
    return data


def parse_dotted_key(key: str, item: str) -> list[str]:
    """`a.b."c.d"` -> ["a", "b", "c.d"], parsed by tomllib itself so quoting works."""
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:
        node = None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        name, node = next(iter(node.items()))
        path.append(name)
    if node != 0 or not path:
        raise UsageError(f"--set {item!r}: {key!r} is not a dotted key (e.g. cache.ttl)")
    return path


def parse_set_value(text: str) -> Any:
    """A TOML value (5, true, "x", ["a", "b"]) if `text` is one, else `text` itself."""
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    # "1\nother = 2" parses as two keys: not one value, so keep it as the literal string.
    return parsed["v"] if len(parsed) == 1 else text


def nest(path: list[str], value: Any) -> dict[str, Any]:
    """["a", "b"], 1 -> {"a": {"b": 1}}."""
    result: dict[str, Any] = {path[-1]: value}
    for name in reversed(path[:-1]):
        result = {name: result}
    return result


def build_profile(
    data: dict[str, Any], *, source: str, base_dir: Path, today: datetime.date | None = None
) -> tuple[Profile, list[str]]:
    """Validate a parsed profile: (Profile, warnings), or ConfigError naming source and key.

    `today` dates the model warnings (default: the clock's date).
    """
    try:
        profile = convert_table(Profile, data, "", base_dir)
        warnings = check_profile(profile, today)
    except FieldError as err:
        raise ProfileKeyError(source, err.key, explain(err)) from None
    return dataclasses.replace(profile, source=source), warnings


def explain(err: FieldError) -> str:
    """The error's message; for a misplaced key, the table(s) where that key does exist."""
    places = key_locations(Profile, err.unknown) if err.unknown else []
    if not places:
        return err.message
    tables = " or ".join(f"[{p}]" if p else "the top level" for p in places)
    return f"unknown key here (it belongs in {tables})"


def find_profile_path(explicit: str | Path | None) -> Path | None:
    """The profile file to use, per the lookup order; None means the built-in defaults."""
    if explicit is not None and str(explicit) != "":
        return existing(Path(explicit).expanduser(), "profile")
    env = os.environ.get(ENV_PROFILE)
    if env:
        return existing(Path(env).expanduser(), f"profile (from ${ENV_PROFILE})")
    for candidate in (Path(LOCAL_PROFILE), user_profile_path()):
        if candidate.is_file():
            return candidate
    return None


def existing(path: Path, what: str) -> Path:
    """`path` if it is a file, else a ConfigError naming it."""
    if not path.exists():
        raise ConfigError(
            f"{what} {path}: no such file (check the path, or run `agentctl profile init {path}`)"
        )
    if not path.is_file():
        raise ConfigError(f"{what} {path}: not a file")
    return path


def default_paths(cwd: Path) -> dict[str, Any]:
    """The built-in path defaults, made absolute against `cwd`, as a profile dict."""
    defaults = profile_to_dict(Profile())
    data: dict[str, Any] = {}
    for key in PATH_KEYS:
        parts = key.split(".")
        value: Any = defaults
        for name in parts:
            value = value[name]
        data = deep_merge(data, nest(parts, str(cwd / value)))
    return data


def resolve_profile(
    explicit: str | Path | None = None,
    sets: Sequence[str] = (),
    extra: dict[str, Any] | FrontMatter | None = None,
    *,
    trust_task: bool = False,
) -> tuple[Profile, list[str]]:
    """Find + read + merge `extra` (task front matter) + apply --set + validate.

    Paths written in the file are relative to the file; paths it leaves out default to the
    current directory (as with no file at all), so a shared profile works from any project.
    A task's FrontMatter may only tune the run (agentctl.profile.trust) unless `trust_task`;
    a plain dict is the caller's own and is merged as it is.
    """
    path = find_profile_path(explicit)
    data = deep_merge(default_paths(Path.cwd()), read_profile_file(path) if path else {})
    if isinstance(extra, FrontMatter):
        if not trust_task:
            check_front_matter(extra, deep_merge(profile_to_dict(Profile()), data))
        extra = extra.data
    data = deep_merge(data, extra or {})
    data = apply_set_overrides(data, sets)
    source = str(path) if path else BUILTIN_SOURCE
    base_dir = path.resolve().parent if path else Path.cwd()
    try:
        return build_profile(data, source=source, base_dir=base_dir)
    except ProfileKeyError as err:
        origin = override_origin(err.key, sets, extra or {})
        if origin is None:
            raise
        raise ConfigError(f"profile {source}, {origin}: {err.key}: {err.detail}") from None


def override_origin(key: str, sets: Sequence[str], extra: dict[str, Any]) -> str | None:
    """Which --set (the last one wins) or the task front matter set the bad `key`, if any."""
    for item in reversed(sets):
        path = parse_dotted_key(item.partition("=")[0].strip(), item)
        if related(key, ".".join(join_key("", p) for p in path)):
            return f"--set {item}"
    if any(related(key, k) for k in dotted_keys(extra)):
        return "task front matter"
    return None


def related(error_key: str, set_key: str) -> bool:
    """True when the error is about `set_key` itself, something inside it, or a table above it."""
    inside = error_key.startswith((f"{set_key}.", f"{set_key}["))
    return error_key == set_key or inside or set_key.startswith(f"{error_key}.")


def dotted_keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    """Every leaf key of a nested dict, dotted."""
    keys: list[str] = []
    for name, value in data.items():
        key = join_key(prefix, name)
        keys.extend(dotted_keys(value, key) if isinstance(value, dict) and value else [key])
    return keys
