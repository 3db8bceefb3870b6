"""The server's clearing rules that recordings leave open, as one named value: `ServerModel`.

The emulator, `simulate`, `tune`, `--as-seen` and `apply_context_edits` all play the server
under one ServerModel. There is one default (`DEFAULT_SERVER_MODEL`, "default"), the model
that reproduces every recording we know of (docs/context.md, "Server rules"); each field is a
rule the recordings do not settle, as a setting of that model:
- `trigger_basis`: is the `input_tokens` trigger of clear_tool_uses compared with the prompt
  the client sent ("unedited") or with the prompt as earlier requests' clearings left it
  ("edited", the default: the cookbook's "all-three" run favours it, it does not settle it).
- `min_result_tokens`: the small-result line. A tool result whose content is smaller than
  this many (estimated) tokens neither counts toward `keep` nor gets cleared; "placeholder"
  puts the line at the placeholder's own size. The recordings put it between a 36- and a
  56-character result; the default is a number in that gap.
- `placeholder`: what a cleared tool result becomes (the server's text is not public).
- `thinking_keep`: the `keep` of a clear_thinking edit that gives none: "by-model" (the table
  below, after the docs), or a fixed number of turns, or "all".

The four names of earlier versions (`unedited`, `edited`, `unedited-large`, `edited-large`)
are still accepted: `LEGACY_ALIASES` maps each to the settings it always named, so a profile
or transcript that names one keeps playing the rules it was recorded under.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

TriggerBasis = Literal["unedited", "edited"]
TRIGGER_BASES: tuple[TriggerBasis, ...] = ("unedited", "edited")
ThinkingKeep = Literal["by-model", "all"] | int
ResultLine = Literal["placeholder"] | int

# Ours: the server's literal text is not public.
DEFAULT_CLEARED_RESULT_PLACEHOLDER = "[Tool result cleared by context management]"
# The small-result line (estimated tokens of a result's content). The cookbook's saved runs:
# a 36-character result ("Finding #N recorded (session-local).", 9 estimated tokens) neither
# counted nor cleared, 56- and 59-character ones (13-15) did: about 10-12 real tokens.
SMALL_RESULT_TOKENS = 12
# The line of the `-large` names of earlier versions (kept for those aliases only).
LARGE_RESULT_TOKENS = 100
DEFAULT_NAME = "default"


@dataclass(frozen=True)
class ServerModel:
    """One answer to each open server rule; `name` says which named model (or "custom")."""

    name: str = DEFAULT_NAME
    trigger_basis: TriggerBasis = "edited"
    min_result_tokens: ResultLine = SMALL_RESULT_TOKENS
    placeholder: str = DEFAULT_CLEARED_RESULT_PLACEHOLDER
    thinking_keep: ThinkingKeep = "by-model"

    def counts(self, result_tokens: int, placeholder_tokens: int) -> bool:
        """Whether a tool result whose content has this many tokens counts toward `keep` (and
        can be cleared); `placeholder_tokens`: the placeholder's, for the "placeholder" line."""
        line = self.min_result_tokens
        return result_tokens >= (placeholder_tokens if line == "placeholder" else line)

    def default_thinking_keep(self, model: str) -> int | None:
        """clear_thinking's `keep` when the edit names none: N turns, or None for all."""
        keep = self.thinking_keep
        if keep == "by-model":
            return default_thinking_keep(model)
        return None if keep == "all" else int(keep)

    def describe(self) -> str:
        """One line: the name and every rule, e.g. for a stderr note or a table caption."""
        line = self.min_result_tokens
        if line == "placeholder":
            counted = "results no larger than the placeholder neither count nor clear"
        elif line <= 0:
            counted = "every result counts toward keep"
        else:
            counted = f"results under {line} tokens neither count nor clear"
        return (
            f"{self.name}: trigger vs the {self.trigger_basis} prompt; {counted}; "
            f"placeholder {self.placeholder!r}; clear_thinking default keep {self.thinking_keep}"
        )

    def spec(self) -> str:
        """The spec `parse_server_model` reads back to these rules: a named model, or the
        default with the rules written out (the name is then "custom")."""
        if PRESETS.get(self.name) == self:
            return self.name
        return (
            f"{DEFAULT_NAME},trigger_basis={self.trigger_basis},"
            f"min_result_tokens={self.min_result_tokens},thinking_keep={self.thinking_keep},"
            f"placeholder={self.placeholder}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "trigger_basis": self.trigger_basis,
            "min_result_tokens": self.min_result_tokens,
            "placeholder": self.placeholder,
            "thinking_keep": self.thinking_keep,
        }


DEFAULT_SERVER_MODEL = ServerModel()
# `--server-model all` and the benchmark: the default, then each open rule's other answer
# that changes what is cleared (the placeholder's text and clear_thinking's default keep
# change no count agentctl's own requests depend on: it always sends clear_thinking's keep).
SERVER_MODELS: tuple[ServerModel, ...] = (
    DEFAULT_SERVER_MODEL,
    replace(DEFAULT_SERVER_MODEL, name="unedited-basis", trigger_basis="unedited"),
    replace(DEFAULT_SERVER_MODEL, name="placeholder-line", min_result_tokens="placeholder"),
)
# The names of earlier versions, each with the rules it named (old profiles and transcripts).
LEGACY_ALIASES: dict[str, ServerModel] = {
    m.name: m
    for m in (
        ServerModel("unedited", "unedited", 0),
        ServerModel("edited", "edited", 0),
        ServerModel("unedited-large", "unedited", LARGE_RESULT_TOKENS),
        ServerModel("edited-large", "edited", LARGE_RESULT_TOKENS),
    )
}
# Every name a spec may start with.
PRESETS: dict[str, ServerModel] = {**{m.name: m for m in SERVER_MODELS}, **LEGACY_ALIASES}


class ServerModelError(ValueError):
    """A server model spec or table that does not parse; the message says what is wrong."""


def parse_server_model(spec: str) -> ServerModel:
    """`"default"`, or a named model with overrides: `"default,trigger_basis=unedited"`.

    `placeholder=` takes the rest of the spec, commas included, so it must come last.
    """
    head, _, rest = spec.strip().partition(",")
    model = _preset(head.strip())
    overrides: dict[str, Any] = {}
    while rest:
        item, _, tail = rest.partition(",")
        key, sep, value = item.partition("=")
        key = key.strip()
        if key == "placeholder" and sep:
            overrides["placeholder"] = rest.partition("=")[2]
            break
        if not sep:
            raise ServerModelError(f"{item.strip()!r}: expected KEY=VALUE")
        overrides[key] = value.strip()
        rest = tail
    return from_table({**overrides, "base": model.name}) if overrides else model


def from_table(table: Mapping[str, Any]) -> ServerModel:
    """A ServerModel from a TOML/JSON table: `base` (a named model, default "default") and
    any of the fields; `name` defaults to the base when nothing else is given, else "custom"."""
    known = {"base", "name", "trigger_basis", "min_result_tokens", "placeholder", "thinking_keep"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ServerModelError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
    model = _preset(str(table.get("base", DEFAULT_NAME)))
    fields: dict[str, Any] = {}
    if "trigger_basis" in table:
        fields["trigger_basis"] = _basis(table["trigger_basis"])
    if "min_result_tokens" in table:
        fields["min_result_tokens"] = _line(table["min_result_tokens"])
    if "placeholder" in table:
        fields["placeholder"] = _placeholder(table["placeholder"])
    if "thinking_keep" in table:
        fields["thinking_keep"] = _thinking_keep(table["thinking_keep"])
    changed = replace(model, **fields)
    name = table.get("name") or (model.name if changed == model else "custom")
    return replace(changed, name=str(name))


def _preset(name: str) -> ServerModel:
    if name not in PRESETS:
        current = ", ".join(m.name for m in SERVER_MODELS)
        raise ServerModelError(
            f"unknown server model {name!r} (known: {current}; "
            f"older names: {', '.join(LEGACY_ALIASES)})"
        )
    return PRESETS[name]


def _basis(value: Any) -> TriggerBasis:
    for basis in TRIGGER_BASES:
        if value == basis:
            return basis
    raise ServerModelError(f"trigger_basis {value!r}: expected one of {', '.join(TRIGGER_BASES)}")


def _count(key: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ServerModelError(f"{key} {value!r}: expected a whole number") from None
    if number < 0 or isinstance(value, bool):
        raise ServerModelError(f"{key} {value!r}: expected a whole number >= 0")
    return number


def _line(value: Any) -> ResultLine:
    if value == "placeholder":
        return "placeholder"
    try:
        return _count("min_result_tokens", value)
    except ServerModelError:
        raise ServerModelError(
            f"min_result_tokens {value!r}: expected a whole number >= 0 or placeholder"
        ) from None


def _placeholder(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ServerModelError(f"placeholder {value!r}: expected a non-empty string")
    return value


def _thinking_keep(value: Any) -> ThinkingKeep:
    if value in ("by-model", "all"):
        return "by-model" if value == "by-model" else "all"
    number = _count("thinking_keep", value)
    if number < 1:
        raise ServerModelError("thinking_keep 0: expected by-model, all or a number >= 1")
    return number


# --- clear_thinking's default keep, per model (the context-editing docs of 2026-09) ------------

# (family, first version that keeps all thinking turns by default); None: every version does.
# Older versions of a listed family keep only the last turn; so do claude-3* ids.
_KEEPS_ALL_FROM: dict[str, tuple[int, int] | None] = {
    "opus": (4, 5),
    "sonnet": (4, 6),
    "haiku": (5, 0),  # "all Haiku through 4.5" keep the last turn
    "fable": None,
    "mythos": None,
}


def default_thinking_keep(model: str) -> int | None:
    """The docs' default for clear_thinking without `keep`: None (all turns) on Opus 4.5+,
    Sonnet 4.6+, Haiku after 4.5, Fable, Mythos and unknown (newer) models; 1 on older ones."""
    parts = model.lower().split("-")
    if len(parts) < 2 or parts[0] != "claude":
        return None
    if parts[1].isdigit():  # claude-3-5-sonnet-..., claude-3-opus-...: all older
        return 1
    family, numbers = parts[1], [int(p) for p in parts[2:4] if p.isdigit() and len(p) < 3]
    if family not in _KEEPS_ALL_FROM:
        return None
    since = _KEEPS_ALL_FROM[family]
    version = [*numbers, 0, 0][:2] if numbers else [99, 0]
    return None if since is None or tuple(version) >= since else 1
