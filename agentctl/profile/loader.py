"""Find, read, merge and validate a profile: the one entry point the rest of agentctl uses.

Layers, lowest first; each sets only the keys it names, and what you type wins:
1. the built-in defaults;
2. the ambient profile: $AGENTCTL_PROFILE, else ./agentctl.toml, else the user profile
   (agentctl.home.user_profile_path());
3. the task's front matter (`Overrides.extra`);
4. `--profile FILE` or a preset name (`Overrides.profile`);
5. `--set` items, then flags (`Overrides.sets`, `Overrides.values`).

Layers 2 and 4 (the files) make one typed Profile; the task's front matter is checked against
it (agentctl.profile.trust), then layers 3 and 5 are set on it (`build_overridden`).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentctl.errors import ConfigError, UsageError
from agentctl.home import user_profile_path
from agentctl.profile.keys import key_locations, path_keys
from agentctl.profile.legacy import migrate
from agentctl.profile.preset import preset_path, unknown_preset
from agentctl.profile.rules import check_budget, check_profile
from agentctl.profile.schema import FieldError, convert_table, join_key, resolve_path
from agentctl.profile.settings import Profile
from agentctl.profile.to_toml import profile_to_dict
from agentctl.profile.trust import FrontMatter, check_front_matter, leaves, lookup, plain_at

BUILTIN_SOURCE = "<built-in>"
LOCAL_PROFILE = "agentctl.toml"
ENV_PROFILE = "AGENTCTL_PROFILE"
PATH_KEYS = frozenset(path_keys(Profile))

__all__ = [
    "BUILTIN_SOURCE",
    "Overrides",
    "ProfileKeyError",
    "apply_overrides",
    "apply_set_overrides",
    "build_overridden",
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
    import tomllib  # here and below: the built-in defaults (no file, no --set) start without it

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
        data = deep_merge(data, nest(path, from_cwd(path, parse_set_value(text.strip()))))
    return data


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Apply `{dotted key: value}` overrides in order (command-line flags, the Python API)."""
    for key, value in overrides.items():
        path = dotted_path(key)
        if path is None:
            raise ConfigError(f"override {key!r}: not a dotted profile key (e.g. cache.ttl)")
        data = deep_merge(data, nest(path, from_cwd(path, value)))
    return data


def from_cwd(path: list[str], value: Any) -> Any:
    """A path given by the caller means what the shell means: relative to the current dir."""
    if ".".join(path) in PATH_KEYS and isinstance(value, str | Path) and str(value):
        return str(Path.cwd() / Path(value).expanduser())
    return value


def parse_dotted_key(key: str, item: str) -> list[str]:
    """`a.b."c.d"` -> ["a", "b", "c.d"], parsed by tomllib itself so quoting works."""
    path = dotted_path(key)
    if path is None:
        raise UsageError(f"--set {item!r}: {key!r} is not a dotted key (e.g. cache.ttl)")
    return path


def dotted_path(key: str) -> list[str] | None:
    """The parts of a dotted TOML key, or None when `key` is not one."""
    import tomllib  # only --set needs it

    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:
        node = None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        name, node = next(iter(node.items()))
        path.append(name)
    return path if node == 0 and path else None


def parse_set_value(text: str) -> Any:
    """A TOML value (5, true, "x", ["a", "b"]) if `text` is one, else `text` itself."""
    import tomllib  # only --set needs it

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
    data: dict[str, Any],
    *,
    source: str,
    base_dir: Path,
    today: datetime.date | None = None,
    budget: bool = False,
    base: Profile | None = None,
) -> tuple[Profile, list[str]]:
    """Validate a parsed profile: (Profile, warnings), or ConfigError naming source and key.

    `today` dates the model warnings (default: the clock's date); `budget`: also refuse a
    `limits.max_usd` that cannot be kept (a profile about to be used, not a recorded one);
    `base`: the profile `data` is set on (None: the built-in defaults).
    """
    try:
        profile, moved = set_keys(data, base_dir, base)
        warnings = moved + check_profile(profile, today)
        if budget:
            check_budget(profile)
    except FieldError as err:
        raise ProfileKeyError(source, err.key, explain(err)) from None
    return dataclasses.replace(profile, source=source), warnings


def set_keys(
    data: dict[str, Any], base_dir: Path, base: Profile | None = None
) -> tuple[Profile, list[str]]:
    """The keys of `data` (old spellings read as their new keys, with a warning each) set on
    `base` (None: the built-in defaults), types checked: FieldError naming a bad key."""
    data, moved = migrate(data)
    return convert_table(Profile, data, "", base_dir, base), moved


def explain(err: FieldError) -> str:
    """The error's message; for a misplaced key, the table(s) where that key does exist."""
    places = key_locations(Profile, err.unknown) if err.unknown else []
    if not places:
        return err.message
    tables = " or ".join(f"[{p}]" if p else "the top level" for p in places)
    return f"unknown key here (it belongs in {tables})"


def find_profile_path(explicit: str | Path | None) -> Path | None:
    """The topmost profile file: the one given (a path or a preset name), else the ambient one;
    None means the built-in defaults."""
    return explicit_path(explicit) or ambient_path()


def explicit_path(explicit: str | Path | None) -> Path | None:
    """The file `--profile` names: an existing path, else a preset (`balanced`); else an error.

    A path that exists wins over a preset of the same name: what you type is what you get.
    """
    if explicit is None or str(explicit) == "":
        return None
    return existing(Path(explicit).expanduser(), "profile", str(explicit))


def ambient_path() -> Path | None:
    """The profile a command uses without `--profile`: $AGENTCTL_PROFILE (a path or a preset),
    else ./agentctl.toml, else the user profile; None when there is none."""
    env = os.environ.get(ENV_PROFILE)
    if env:
        return existing(Path(env).expanduser(), f"profile (from ${ENV_PROFILE})", env)
    for candidate in (Path(LOCAL_PROFILE), user_profile_path()):
        if candidate.is_file():
            return candidate
    return None


def existing(path: Path, what: str, name: str) -> Path:
    """`path` if it is a file, else the preset called `name`, else a ConfigError naming it."""
    if path.is_file():
        return path
    if path.exists():
        raise ConfigError(f"{what} {path}: not a file")
    preset = preset_path(name)
    if preset is None:
        raise unknown_preset(name, what)
    return preset


def file_layer(path: Path | None) -> dict[str, Any]:
    """A profile file's keys, its relative paths made absolute against the file's folder."""
    if path is None:
        return {}
    data = read_profile_file(path)
    folder = path.resolve().parent
    for key in PATH_KEYS:
        value = lookup(data, key)
        if isinstance(value, str) and value:
            data = deep_merge(data, nest(key.split("."), str(resolve_path(value, folder))))
    return _server_folders(data, folder)


def _server_folders(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Each `[mcp.servers.NAME]` of a file runs in its `cwd` taken from the file's folder
    (the file's folder when it names none), whichever layer the file is."""
    servers = (data.get("mcp") or {}).get("servers") if isinstance(data.get("mcp"), dict) else None
    if not isinstance(servers, dict):
        return data
    for name, server in servers.items():
        if isinstance(server, dict) and "url" not in server:
            cwd = server.get("cwd", ".")
            if isinstance(cwd, str):
                path = ["mcp", "servers", name, "cwd"]
                data = deep_merge(data, nest(path, str(resolve_path(cwd or ".", folder))))
    return data


def default_paths(cwd: Path) -> dict[str, Any]:
    """The built-in path defaults, made absolute against `cwd`, as a profile dict."""
    defaults = profile_to_dict(Profile())
    data: dict[str, Any] = {}
    for key in PATH_KEYS:
        parts = key.split(".")
        value: Any = defaults
        for name in parts:
            value = value.get(name) if isinstance(value, dict) else None
        if value is not None:  # an optional path (output.schema) has no default
            data = deep_merge(data, nest(parts, str(cwd / value)))
    return data


@dataclasses.dataclass(frozen=True)
class Overrides:
    """What goes on top of the ambient profile, in this order, and how to name each in an error.

    `extra`: the task's front matter; `profile`: the keys of the `--profile` file (paths
    absolute), named `profile_source`; `sets`: `--set KEY=VALUE` items; `values`: dotted key ->
    value (flags, the Python API); `origins`: dotted key -> what the user typed for it.
    `untrusted`: the task file `extra` came from, when the user did not trust it: then it may
    only tune the run (agentctl.profile.trust), checked before anything is merged.
    """

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    sets: Sequence[str] = ()
    values: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    origins: Mapping[str, str] = dataclasses.field(default_factory=dict)
    untrusted: FrontMatter | None = None
    profile: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    profile_source: str = ""

    def above(self) -> dict[str, Any]:
        """The keys set above the profile files: the front matter's that the `--profile` file
        (the layer above it) leaves alone, then `--set` items and flag values."""
        front = unless(dict(self.extra), dict(self.profile))
        return apply_overrides(apply_set_overrides(front, self.sets), self.values)

    def typed(self) -> Overrides:
        """Only what the command line gave (`--profile`, `--set`, flags): no front matter."""
        return dataclasses.replace(self, extra={}, untrusted=None)


def resolve_profile(
    explicit: str | Path | None = None,
    sets: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    *,
    overrides: Overrides | None = None,
) -> tuple[Profile, list[str]]:
    """The layers (module docstring) merged and validated: the ambient profile, `extra` (task
    front matter), the `explicit` file or preset, `sets`, and flag values (`overrides` gives
    all but the files at once).

    Paths written in a file are relative to that file; paths no layer names default to the
    current directory (as with no file at all), so a shared profile works from any project.
    An `overrides.untrusted` task may only tune the run (agentctl.profile.trust).
    """
    ambient, chosen = ambient_path(), explicit_path(explicit)
    data = deep_merge(default_paths(Path.cwd()), file_layer(ambient))
    more = overrides or Overrides(extra=extra or {}, sets=sets)
    if chosen is not None:
        more = dataclasses.replace(more, profile=file_layer(chosen), profile_source=str(explicit))
    top = chosen or ambient
    source = str(top) if top else BUILTIN_SOURCE
    below = str(ambient) if ambient and chosen else None
    return build_overridden(data, more, source=source, base_dir=Path.cwd(), below=below)


def build_overridden(
    data: dict[str, Any],
    overrides: Overrides,
    *,
    source: str,
    base_dir: Path,
    below: str | None = None,
    base: Profile | None = None,
) -> tuple[Profile, list[str]]:
    """The profile the layers make, typed a layer at a time: the files (`data`, on `base` or
    the built-in defaults, and the `--profile` file) make one Profile, which the task's front
    matter is checked against (agentctl.profile.trust); the front matter, `--set` items and
    flags are set on it, and the result validated. An error names the layer that caused it
    (`below`: the ambient file under a `--profile`, which `data` holds)."""
    try:
        both = deep_merge(data, dict(overrides.profile))
        files, moved = _files(both, overrides, source=source, base_dir=base_dir, base=base)
        if overrides.untrusted is not None:
            check_front_matter(overrides.untrusted, files)
        profile, warnings = build_profile(
            overrides.above(), source=source, base_dir=base_dir, budget=True, base=files
        )
    except ProfileKeyError as err:
        origin = override_origin(err.key, overrides)
        if origin is None and below is not None and not named(err.key, overrides.profile):
            raise ConfigError(f"profile {below}: {err.key}: {err.detail}") from None
        if origin is None:
            raise
        raise ConfigError(f"profile {source}, {origin}: {err.key}: {err.detail}") from None
    note = front_matter_note(overrides, profile)
    return profile, [*moved, *warnings, *([note] if note else [])]


def _files(
    data: dict[str, Any], overrides: Overrides, *, source: str, base_dir: Path, base: Profile | None
) -> tuple[Profile, list[str]]:
    """The profile files' keys set on `base`. A bad one that a layer above sets again is left
    out: what you type wins over it, as over a good one."""
    while True:
        try:
            return set_keys(data, base_dir, base)
        except FieldError as err:
            named_above = override_origin(err.key, overrides) is not None
            left = without(data, dotted_path(err.key.split("[")[0]) or []) if named_above else data
            if left == data:
                raise ProfileKeyError(source, err.key, explain(err)) from None
            data = left


def without(data: dict[str, Any], path: list[str]) -> dict[str, Any]:
    """`data` less the key at `path`."""
    if len(path) == 1:
        return {k: v for k, v in data.items() if k != path[0]}
    inner = data.get(path[0]) if path else None
    return {**data, path[0]: without(inner, path[1:])} if isinstance(inner, dict) else data


def unless(lower: dict[str, Any], upper: dict[str, Any]) -> dict[str, Any]:
    """The keys of `lower` that `upper`, merged over it, leaves as they are."""
    kept: dict[str, Any] = {}
    for name, value in lower.items():
        if name not in upper:
            kept[name] = value
        elif isinstance(value, dict) and isinstance(upper[name], dict):
            rest = unless(value, upper[name])
            if rest:
                kept[name] = rest
    return kept


def front_matter_note(overrides: Overrides, profile: Profile) -> str | None:
    """One line naming the front-matter keys that the command line overrode, by what overrode
    them: `--profile balanced: max_turns, cache.ttl; --max-turns 5: max_turns`."""
    typed = overrides.typed()
    changed: dict[str, list[str]] = {}
    for key, value in leaves(overrides.extra):
        if plain_at(profile, key) == value:
            continue
        origin = override_origin(key, typed)
        if origin is None and named(key, typed.profile):
            origin = f"--profile {typed.profile_source}"
        if origin:
            changed.setdefault(origin, []).append(key)
    if not changed:
        return None
    parts = [f"{origin}: {', '.join(keys)}" for origin, keys in changed.items()]
    return "the command line overrides the task's front matter: " + "; ".join(parts)


def named(key: str, data: Mapping[str, Any]) -> bool:
    """True when `data` sets `key`, something inside it, or a table above it."""
    return any(related(key, k) for k in dotted_keys(dict(data)))


def override_origin(key: str, overrides: Overrides) -> str | None:
    """Which layer above the ambient profile set the bad `key` (the last one wins): a flag, a
    --set or the task front matter; None for the `--profile` file (the error's source)."""
    for name, value in reversed(list(overrides.values.items())):
        if related(key, ".".join(join_key("", p) for p in dotted_path(name) or [name])):
            return overrides.origins.get(name) or f"override {name}={value!r}"
    for item in reversed(overrides.sets):
        path = parse_dotted_key(item.partition("=")[0].strip(), item)
        if related(key, ".".join(join_key("", p) for p in path)):
            return f"--set {item}"
    if named(key, overrides.profile):
        return None
    return "task front matter" if named(key, overrides.extra) else None


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
