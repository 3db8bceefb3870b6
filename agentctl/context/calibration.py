"""The calibration file `agentctl probe` writes, and which server model a command plays.

One file under the user's agentctl folder (`home.calibration_path()`): JSON with the server
model the probe identified and what it observed. Precedence, for the emulator, `simulate`,
`tune` and `--as-seen`: an explicit choice (a flag, or the profile's
`context_editing.server_model`) > the calibration file > the default server model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentctl.context.server_model import (
    DEFAULT_SERVER_MODEL,
    ServerModel,
    ServerModelError,
    from_table,
    parse_server_model,
)
from agentctl.errors import ConfigError
from agentctl.home import calibration_path

CALIBRATION_FORMAT = "agentctl-calibration-1"


@dataclass(frozen=True)
class ResolvedModel:
    """The server model a command plays, and where it came from (for a line on stderr)."""

    model: ServerModel = DEFAULT_SERVER_MODEL
    source: str = "default"  # "--server-model", "profile", "calibration <path>" or "default"

    def note(self) -> str:
        return f"server model {self.model.describe()} (from {self.source})"

    def to_json(self) -> dict[str, Any]:
        return {**self.model.to_json(), "source": self.source}


def resolve_server_model(spec: str = "", *, source: str = "profile") -> ResolvedModel:
    """`spec` when given (its `source` named), else the calibration file, else the default.
    A bad spec or file is a ConfigError naming it."""
    if spec:
        try:
            return ResolvedModel(parse_server_model(spec), source)
        except ServerModelError as err:
            raise ConfigError(f"{source}: server model {spec!r}: {err}") from None
    calibrated = load_calibration()
    if calibrated is not None:
        return ResolvedModel(calibrated, f"calibration {calibration_path()}")
    return ResolvedModel(DEFAULT_SERVER_MODEL, "default")


def load_calibration(path: Path | None = None) -> ServerModel | None:
    """The server model in the calibration file, or None when there is none."""
    path = path or calibration_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # no file (or no folder): no calibration
        return None
    except (OSError, ValueError) as err:
        raise ConfigError(
            f"calibration {path}: cannot read it ({err}); run agentctl probe again"
        ) from None
    if not isinstance(data, Mapping) or data.get("format") != CALIBRATION_FORMAT:
        raise ConfigError(f"calibration {path}: not an {CALIBRATION_FORMAT} file")
    try:
        return from_table(data.get("server_model") or {})
    except ServerModelError as err:
        raise ConfigError(f"calibration {path}: server_model: {err}") from None


def save_calibration(
    model: ServerModel, observed: Mapping[str, Any], path: Path | None = None
) -> Path:
    """Write the file atomically (a temporary file renamed over it); returns its path."""
    path = path or calibration_path()
    table = {k: v for k, v in model.to_json().items() if k != "name"}
    data = {
        "format": CALIBRATION_FORMAT,
        "server_model": {"name": model.name, **table},
        "observed": dict(observed),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.replace(temporary, path)
    except OSError as err:
        raise ConfigError(f"calibration {path}: cannot write: {err.strerror or err}") from None
    return path
