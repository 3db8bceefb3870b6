"""The one module that knows agentctl's on-disk layout (AGENTCTL_HOME and the user config dir)."""

from __future__ import annotations

import os
from pathlib import Path

from agentctl.errors import ConfigError


def home_dir() -> Path:
    """AGENTCTL_HOME, else the platform data dir (XDG_DATA_HOME/agentctl or ~/.local/share)."""
    env = os.environ.get("AGENTCTL_HOME")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentctl"


TRANSCRIPT_SUFFIX = ".jsonl"  # a session's transcript: sessions_dir() / f"{id}{suffix}"


def sessions_dir() -> Path:
    """Where run transcripts (one JSONL file per session) are written."""
    return home_dir() / "sessions"


def user_config_dir() -> Path:
    """Where the user-wide profile lives: AGENTCTL_HOME if set, else XDG_CONFIG_HOME/agentctl."""
    env = os.environ.get("AGENTCTL_HOME")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentctl"


def user_profile_path() -> Path:
    """The user-wide profile consulted when no --profile, AGENTCTL_PROFILE or ./agentctl.toml."""
    return user_config_dir() / "profile.toml"


def unusable_folder(folder: Path, err: OSError) -> ConfigError:
    """The one-line error for a data folder agentctl cannot create or write (exit 2)."""
    why = err.strerror or str(err)
    if isinstance(err, FileExistsError | NotADirectoryError):
        why = "a file is in the way"
    where = "AGENTCTL_HOME" if os.environ.get("AGENTCTL_HOME") else "the data folder"
    return ConfigError(
        f"{folder}: cannot create or write the sessions folder ({why}); "
        f"point {where} at a writable folder"
    )


def batches_dir() -> Path:
    """Where `agentctl batch` puts each batch's folder when no --out is given."""
    return home_dir() / "batches"


def calibration_path() -> Path:
    """The server model `agentctl probe` identified (read by the emulator, simulate, tune)."""
    return home_dir() / "server-model.json"
