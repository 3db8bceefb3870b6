"""A profile key's one definition, and the typed conversion of TOML into settings and back.

The dataclasses in `settings.py` are the schema: each field is one key, its type hint the
type, its default the default, and its `Key` (made by `setting` / `table`) what the key
means, the API field it feeds and what a task's front matter may do with it. A new field
there is a new TOML key here, with its type checked, its docs row and trust rule derived,
without touching this module. Semantic rules live in `rules.py`.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

# Fields of a settings class that are not TOML keys (set by the loader, not the user).
NOT_KEYS = frozenset({"source"})

# What a task file's front matter may do with a key without --trust-task:
# "set" it; only "lower" it (a limit; 0 means none for all but max_turns); turn it "off" but
# not on; only make stricter (the [approval] rules: profile/trust.py); or nothing at all
# ("refuse", saying `Key.refusal`). A path key (type Path) must
# also stay inside the task's folder (profile/trust.py).
TaskRule = Literal["set", "lower", "off", "tighten", "stricter", "refuse"]


@dataclass(frozen=True)
class Key:
    """What one key is besides its type and default: its meaning (one sentence, the docs and
    the `init` template show it), the request field it feeds ("" when it never reaches the
    API), the task rule (and its reason when refused), and whether 0 is a valid number
    (None: by type, integers count from 1 and amounts from 0)."""

    meaning: str
    api: str = ""
    task: TaskRule = "set"
    refusal: str = ""
    zero: bool | None = None


def setting(
    default: Any = dataclasses.MISSING,
    meaning: str = "",
    *,
    factory: Callable[[], Any] | None = None,
    api: str = "",
    task: TaskRule = "set",
    refusal: str = "",
    zero: bool | None = None,
) -> Any:
    """A settings field that is a key: its default (or `factory`) and its `Key`."""
    meta = {"key": Key(meaning, api, task, refusal, zero)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def table(cls: Callable[[], Any], meaning: str, **rules: Any) -> Any:
    """A settings field that is a table of keys (`cls` gives its defaults)."""
    return setting(meaning=meaning, factory=cls, **rules)


def key_of(f: dataclasses.Field[Any]) -> Key:
    """The `Key` of a settings field (a field made without `setting` is a bug: KeyError)."""
    key = f.metadata["key"]
    assert isinstance(key, Key)
    return key


class FieldError(Exception):
    """One bad key: the dotted key and what is wrong with it (the loader adds the file)."""

    def __init__(self, key: str, message: str, *, unknown: str | None = None) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message
        # Set for an unknown key with no close sibling: the caller may know where it belongs.
        self.unknown = unknown


def join_key(prefix: str, name: str) -> str:
    """Dotted key of `name` under `prefix`; names that are not bare TOML keys get quoted."""
    bare = name and all(c.isalnum() or c in "-_" for c in name)
    part = name if bare else f'"{name}"'
    return f"{prefix}.{part}" if prefix else part


_HINTS: dict[type[Any], dict[str, Any]] = {}


def type_hints(cls: type[Any]) -> dict[str, Any]:
    """The resolved type hints of a settings class, evaluated once: the classes never change,
    and the keys are walked several times while a profile loads."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    return hints


def key_names(cls: type[Any]) -> list[str]:
    """The TOML keys of one settings table, in declaration order."""
    return [f.name for f in dataclasses.fields(cls) if f.name not in NOT_KEYS]


def convert_table(cls: type[Any], data: Any, key: str, base_dir: Path, base: Any = None) -> Any:
    """Build dataclass `cls` from a TOML table; unknown keys and wrong types raise FieldError.

    `base`: a `cls` whose values the keys `data` leaves out keep (its tables merged key by key);
    None: the defaults (the fields without one, like a price's, must be given). Relative paths
    are taken from `base_dir`."""
    if not isinstance(data, dict):
        raise FieldError(key or "<root>", f"expected a table, got {describe_value(data)}")
    names, hints = key_names(cls), type_hints(cls)
    for name in data:
        if name not in names:
            raise unknown_key_error(join_key(key, name), name, names)
    if base is None:
        given = {
            name: convert_value(hints[name], data[name], join_key(key, name), base_dir)
            for name in names
            if name in data
        }
        check_required(cls, given, key)
        base, data = cls(**given), {}
    changes = {
        name: _over(hints[name], data.get(name), join_key(key, name), base_dir, value)
        for name in names
        if (value := getattr(base, name)) is not None or name in data
    }
    return dataclasses.replace(base, **changes)


def _over(tp: Any, value: Any, key: str, base_dir: Path, before: Any) -> Any:
    """A field of a base table: `value` (None: not given) over `before`."""
    if dataclasses.is_dataclass(before):
        return convert_table(type(before), {} if value is None else value, key, base_dir, before)
    if isinstance(before, dict) and isinstance(value, dict) and get_origin(tp) is dict:
        return {**before, **_over_dict(get_args(tp)[1], value, key, base_dir, before)}
    if value is None:
        return resolve_path(str(before), base_dir) if isinstance(before, Path) else before
    return convert_value(tp, value, key, base_dir)


def _over_dict(
    value_tp: Any, value: dict[str, Any], key: str, base_dir: Path, before: dict[str, Any]
) -> dict[str, Any]:
    """A table of tables (`[prices]`, `[mcp.servers]`): each entry merged with its base one."""
    return {
        name: _over(value_tp, v, join_key(key, name), base_dir, before[name])
        if name in before and isinstance(v, dict)
        else convert_value(value_tp, v, join_key(key, name), base_dir)
        for name, v in value.items()
    }


def check_required(cls: type[Any], given: dict[str, Any], key: str) -> None:
    """Fields without a default (the five prices of an override) must all be present."""
    required = [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    for name in required:
        if name not in given:
            needs = ", ".join(required)
            raise FieldError(join_key(key, name), f"missing (this table needs all of: {needs})")


def unknown_key_error(key: str, name: str, known: list[str]) -> FieldError:
    """'did you mean' the closest sibling key (difflib), else the list of keys of the table."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return FieldError(key, f"unknown key (did you mean {close[0]!r}?)")
    return FieldError(key, f"unknown key (known keys: {', '.join(known)})", unknown=name)


def convert_value(tp: Any, value: Any, key: str, base_dir: Path) -> Any:
    """Check `value` against type hint `tp` and return it in the settings' representation."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return convert_table(tp, value, key, base_dir)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return _convert_union(tp, value, key, base_dir)
    if origin is Literal:
        return _convert_literal(tp, value, key)
    if origin is tuple:
        return _convert_list(get_args(tp)[0], value, key, base_dir)
    if origin is dict:
        return _convert_dict(get_args(tp)[1], value, key, base_dir)
    return _convert_scalar(tp, value, key, base_dir)


def _convert_scalar(tp: Any, value: Any, key: str, base_dir: Path) -> Any:
    if tp is bool and isinstance(value, bool):
        return value
    # bool is a subclass of int in Python, never in TOML: `keep = true` is a mistake.
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if tp is str and isinstance(value, str):
        return value
    if tp is Path and isinstance(value, str) and value:
        return resolve_path(value, base_dir)
    raise FieldError(key, f"expected {describe_type(tp)}, got {describe_value(value)}")


def is_path(tp: Any) -> bool:
    """A path key: `Path`, or `Path | None` (optional: left out, it is None)."""
    return tp is Path or tp == (Path | None)


def resolve_path(value: str, base_dir: Path) -> Path:
    """`~` expands; a relative path is taken relative to the profile's directory."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base_dir / path).resolve()


def _convert_literal(tp: Any, value: Any, key: str) -> Any:
    choices = get_args(tp)
    if isinstance(value, str) and value in choices:
        return value
    raise FieldError(key, f"expected {describe_type(tp)}, got {describe_value(value)}")


def _convert_union(tp: Any, value: Any, key: str, base_dir: Path) -> Any:
    for alternative in get_args(tp):
        try:
            return convert_value(alternative, value, key, base_dir)
        except FieldError as err:
            if err.key != key:  # an error inside a list item is more precise: keep it
                raise
    raise FieldError(key, f"expected {describe_type(tp)}, got {describe_value(value)}")


def _convert_list(item_tp: Any, value: Any, key: str, base_dir: Path) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise FieldError(key, f"expected a list, got {describe_value(value)}")
    items = [convert_value(item_tp, v, f"{key}[{i}]", base_dir) for i, v in enumerate(value)]
    return tuple(items)


def _convert_dict(value_tp: Any, value: Any, key: str, base_dir: Path) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(key, f"expected a table, got {describe_value(value)}")
    return {
        name: convert_value(value_tp, v, join_key(key, name), base_dir) for name, v in value.items()
    }


def to_plain(value: Any) -> Any:
    """Settings value -> TOML value, recursively (the inverse of `convert_value`)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # A key whose value is None (an optional path not given) is left out: TOML has no null.
        return {
            f.name: to_plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in NOT_KEYS and getattr(value, f.name) is not None
        }
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def describe_type(tp: Any) -> str:
    """Human words for a type hint, as used in 'expected ...' messages."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):  # None is a key left out: TOML has no null
        return " or ".join(describe_type(a) for a in get_args(tp) if a is not type(None))
    if origin is Literal:
        choices = [f'"{a}"' for a in get_args(tp)]
        return choices[0] if len(choices) == 1 else "one of " + ", ".join(choices)
    if origin is tuple:
        return f"a list of {describe_type(get_args(tp)[0]).removeprefix('a ')}s"
    words = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    if tp is Path:
        return "a non-empty path string"
    return words.get(tp, "a table")


def describe_value(value: Any) -> str:
    """TOML words for a value's type plus the value itself, e.g. 'boolean true'."""
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a table"
    names: list[tuple[type[Any], str]] = [
        (int, "integer"),
        (float, "float"),
        (str, "string"),
        (list, "array"),
        (datetime.date, "date"),
        (datetime.time, "time"),
    ]
    for kind, word in names:
        if isinstance(value, kind):
            text = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            return f"{word} {text}"
    return type(value).__name__


__all__ = [
    "FieldError",
    "Key",
    "convert_table",
    "convert_value",
    "describe_type",
    "describe_value",
    "is_path",
    "join_key",
    "key_names",
    "key_of",
    "resolve_path",
    "setting",
    "table",
    "to_plain",
]
