"""The server rules the public docs leave open, as one named value: `ServerModel`.

The emulator, `simulate`, `tune`, `--as-seen` and `apply_context_edits` all play the server
under one ServerModel. Each field is one open rule (docs/context.md, "Server rules"):
- `trigger_basis`: is the `input_tokens` trigger of clear_tool_uses compared with the prompt
  the client sent ("unedited") or with the prompt as earlier requests' clearings left it
  ("edited")? (API-NOTES E.9)
- `min_result_tokens`: tool results smaller than this (estimated tokens) neither count toward
  `keep` nor get cleared; 0 = every result counts. (E.10: the cookbook's real runs.)
- `placeholder`: what a cleared tool result becomes (E.1: the server's text is not public).
- `thinking_keep`: the `keep` of a clear_thinking edit that gives none: "by-model" (the table
  below, after the docs), or a fixed number of turns, or "all".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

TriggerBasis = Literal["unedited", "edited"]
TRIGGER_BASES: tuple[TriggerBasis, ...] = ("unedited", "edited")
ThinkingKeep = Literal["by-model", "all"] | int

# Ours (E.1): the server's literal text is not public.
DEFAULT_CLEARED_RESULT_PLACEHOLDER = "[Tool result cleared by context management]"
# Ours (E.10): the cookbook's small results were one-line strings, its large ones tens of
# thousands of tokens; any threshold between fits. 100 is a round number in that gap.
LARGE_RESULT_TOKENS = 100


@dataclass(frozen=True)
class ServerModel:
    """One answer to each open server rule; `name` says which preset (or "custom")."""

    name: str = "unedited"
    trigger_basis: TriggerBasis = "unedited"
    min_result_tokens: int = 0
    placeholder: str = DEFAULT_CLEARED_RESULT_PLACEHOLDER
    thinking_keep: ThinkingKeep = "by-model"

    def counts(self, result_tokens: int) -> bool:
        """Whether a tool result of this size counts toward `keep` (and can be cleared)."""
        return result_tokens >= self.min_result_tokens

    def default_thinking_keep(self, model: str) -> int | None:
        """clear_thinking's `keep` when the edit names none: N turns, or None for all."""
        keep = self.thinking_keep
        if keep == "by-model":
            return default_thinking_keep(model)
        return None if keep == "all" else int(keep)

    def describe(self) -> str:
        """One line: the name and every rule, e.g. for a stderr note or a table caption."""
        counted = (
            "every result counts toward keep"
            if self.min_result_tokens <= 0
            else f"results under {self.min_result_tokens} tokens neither count nor clear"
        )
        return (
            f"{self.name}: trigger vs the {self.trigger_basis} prompt; {counted}; "
            f"placeholder {self.placeholder!r}; clear_thinking default keep {self.thinking_keep}"
        )

    def spec(self) -> str:
        """The spec `parse_server_model` reads back to these rules: a preset's name, or the
        rules written out (the name is then "custom")."""
        if PRESETS.get(self.name) == self:
            return self.name
        return (
            f"unedited,trigger_basis={self.trigger_basis},"
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


PRESETS: dict[str, ServerModel] = {
    m.name: m
    for m in (
        ServerModel("unedited"),
        ServerModel("edited", trigger_basis="edited"),
        ServerModel("unedited-large", min_result_tokens=LARGE_RESULT_TOKENS),
        ServerModel("edited-large", "edited", min_result_tokens=LARGE_RESULT_TOKENS),
    )
}
DEFAULT_SERVER_MODEL = PRESETS["unedited"]
# The named models a benchmark can loop over (bench/token_economy.py, tests).
SERVER_MODELS: tuple[ServerModel, ...] = tuple(PRESETS.values())


class ServerModelError(ValueError):
    """A server model spec or table that does not parse; the message says what is wrong."""


def parse_server_model(spec: str) -> ServerModel:
    """`"edited"`, or a preset with overrides: `"edited,min_result_tokens=100,thinking_keep=1"`.

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
    """A ServerModel from a TOML/JSON table: `base` (a preset, default "unedited") and any of
    the fields; `name` defaults to the base when nothing else is given, else "custom"."""
    known = {"base", "name", "trigger_basis", "min_result_tokens", "placeholder", "thinking_keep"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ServerModelError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
    model = _preset(str(table.get("base", DEFAULT_SERVER_MODEL.name)))
    fields: dict[str, Any] = {}
    if "trigger_basis" in table:
        fields["trigger_basis"] = _basis(table["trigger_basis"])
    if "min_result_tokens" in table:
        fields["min_result_tokens"] = _count("min_result_tokens", table["min_result_tokens"])
    if "placeholder" in table:
        fields["placeholder"] = _placeholder(table["placeholder"])
    if "thinking_keep" in table:
        fields["thinking_keep"] = _thinking_keep(table["thinking_keep"])
    changed = replace(model, **fields)
    name = table.get("name") or (model.name if changed == model else "custom")
    return replace(changed, name=str(name))


def _preset(name: str) -> ServerModel:
    if name not in PRESETS:
        raise ServerModelError(f"unknown server model {name!r} (known: {', '.join(PRESETS)})")
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


# --- clear_thinking's default keep, per model (API-NOTES B.3, the 2026-09 docs) -------------

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
