"""Deprecated / retired models, read from the installed SDK's data file without importing it.

Importing `anthropic` costs over a second, and `profile check` must stay light, so the SDK's
`_data/deprecated_models.py` is located with `find_spec` (which does not import a top-level
package) and its `DEPRECATED_MODELS` literal is evaluated with `ast.literal_eval`.
"""

from __future__ import annotations

import ast
import datetime
import difflib
import importlib.util
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from agentctl.context.prices import MODELS, model_info, price_for
from agentctl.profile.settings import PriceOverride

# End-of-life dates agentctl has seen in SDK releases (anthropic 2.14.0's table). Merged under
# the installed SDK's table: the SDK drops a model once it is retired (2.15.0 dropped
# claude-sonnet-4-5 the day after its end of life), and a retired model must still warn.
KNOWN_END_OF_LIFE: dict[str, str] = {
    "claude-mythos-preview": "June 30th, 2026",
    "claude-opus-4-5": "January 22nd, 2027",
    "claude-opus-4-5-20251101": "January 22nd, 2027",
    "claude-sonnet-4-5": "November 30th, 2026",
    "claude-sonnet-4-5-20250929": "November 30th, 2026",
}

# Same, for anthropic 2.14.0's models_to_warn_with_thinking_enabled.py.
FALLBACK_THINKING_DEPRECATED: tuple[str, ...] = ("claude-opus-4-6", "claude-mythos-preview")

_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)")


def sdk_data_file(name: str) -> Path | None:
    """Path of `anthropic/_data/<name>` in the installed SDK, or None when it is not there."""
    spec = importlib.util.find_spec("anthropic")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "_data" / name
    return path if path.is_file() else None


def parse_literal_assignment(source: str, name: str) -> object:
    """The literal value assigned to `name` at module level in `source` (None if absent)."""
    for node in ast.parse(source).body:
        target: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == name and value is not None:
            return ast.literal_eval(value)
    return None


def sdk_literal(file_name: str, name: str) -> object:
    """The literal `name` in the SDK's `_data/<file_name>`, or None if it cannot be read."""
    path = sdk_data_file(file_name)
    try:
        return parse_literal_assignment(path.read_text("utf-8"), name) if path else None
    except (OSError, SyntaxError, ValueError):
        return None


def sdk_deprecated_models() -> dict[str, str] | None:
    """The installed SDK's `DEPRECATED_MODELS` (model -> end-of-life text), None if unreadable."""
    table = sdk_literal("deprecated_models.py", "DEPRECATED_MODELS")
    if isinstance(table, dict) and all(isinstance(v, str) for v in table.values()):
        return {str(k): v for k, v in table.items()}
    return None


@cache
def deprecated_models() -> dict[str, str]:
    """Model name -> end-of-life date text: agentctl's record, then the SDK's list over it."""
    return {**KNOWN_END_OF_LIFE, **(sdk_deprecated_models() or {})}


@cache
def thinking_enabled_deprecated() -> tuple[str, ...]:
    """Models on which the SDK warns that thinking.type "enabled" is deprecated (use adaptive)."""
    names = sdk_literal(
        "models_to_warn_with_thinking_enabled.py", "MODELS_TO_WARN_WITH_THINKING_ENABLED"
    )
    if isinstance(names, list | tuple) and all(isinstance(n, str) for n in names):
        return tuple(names)
    return FALLBACK_THINKING_DEPRECATED


def price_warning(model: str, overrides: Mapping[str, PriceOverride]) -> str | None:
    """A warning when agentctl cannot price `model`: costs and limits.max_usd need a price."""
    if price_for(model, overrides) is not None:
        return None
    fix = f'add a [prices."{model}"] table to get cost figures'
    if model_info(model) is not None:
        return f"model: no price is known for {model!r} ({fix})"
    close = difflib.get_close_matches(model, list(MODELS), n=1, cutoff=0.8)
    hint = f"did you mean {close[0]!r}? If not, " if close else ""
    return f"model: {model!r} is not a model agentctl knows ({hint}{fix})"


def parse_eol_date(text: str) -> datetime.date | None:
    """'November 30th, 2026' -> date(2026, 11, 30); None when the SDK changes its wording."""
    try:
        return datetime.datetime.strptime(_ORDINAL.sub(r"\1", text), "%B %d, %Y").date()
    except ValueError:
        return None


def model_warning(
    model: str, today: datetime.date, table: Mapping[str, str] | None = None
) -> str | None:
    """A warning for a deprecated or retired model on `today`, or None for a current one.

    `table` (model -> end-of-life date text) defaults to the installed SDK's list; a model the
    SDK lists is deprecated from the day it is listed (the SDK gives no deprecation dates).
    """
    eol_text = (deprecated_models() if table is None else table).get(model)
    if eol_text is None:
        return None
    eol = parse_eol_date(eol_text)
    advice = "(switch to a current model such as 'claude-sonnet-5')"
    if eol is not None and eol == today:
        return f"model: {model!r} reaches end of life today, {eol_text} {advice}"
    if eol is not None and eol < today:
        return f"model: {model!r} reached end of life on {eol_text} and is retired {advice}"
    return f"model: {model!r} is deprecated and reaches end of life on {eol_text} {advice}"
