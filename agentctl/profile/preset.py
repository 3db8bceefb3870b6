"""The shipped presets (configs/*.toml) and examples (examples/*), from a checkout or a wheel.

In a checkout they sit at the repository root, beside the package; a wheel carries the same
files inside the package as `agentctl/presets/` and `agentctl/examples/` (pyproject.toml maps
the two folders, so git holds one copy).
"""

from __future__ import annotations

from pathlib import Path

from agentctl.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent.parent
SUFFIX = ".toml"


def shipped_dir(installed: str, checkout: str) -> Path:
    """The folder of shipped files: inside the package (a wheel), else the checkout's."""
    inside = PACKAGE / installed
    return inside if inside.is_dir() else PACKAGE.parent / checkout


def presets_dir() -> Path:
    return shipped_dir("presets", "configs")


def examples_dir() -> Path:
    return shipped_dir("examples", "examples")


def preset_names() -> list[str]:
    """The preset names, sorted: `balanced` for configs/balanced.toml."""
    folder = presets_dir()
    return sorted(p.stem for p in folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []


def example_names() -> list[str]:
    """The examples that hold a task file, sorted."""
    folder = examples_dir()
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob("*/task.md"))


def preset_path(name: str) -> Path | None:
    """The file of preset `name` (`balanced` or `balanced.toml`), or None when there is none."""
    stem = name.removesuffix(SUFFIX)
    if not stem or "/" in stem or stem.startswith("."):
        return None
    path = presets_dir() / f"{stem}{SUFFIX}"
    return path if path.is_file() else None


def example_hint(missing: str) -> str | None:
    """For a missing file in a shipped example's folder (`examples/research/task.md` where
    there is no checkout), the command that copies the example there; None otherwise."""
    path = Path(missing)
    folder = path.parent
    if folder.name not in example_names() or folder.exists():
        return None
    if not (examples_dir() / folder.name / path.name).is_file():
        return None
    return f"agentctl example copy {folder.name} {folder}"


def listing(names: list[str]) -> str:
    return ", ".join(names) if names else "none shipped"


def unknown_preset(name: str, what: str = "profile", *, files: bool = True) -> ConfigError:
    """The one-line error for a name that is no preset (nor a file, when `files`): exit 2."""
    if not files:
        return ConfigError(f"{what} {name}: no such preset (presets: {listing(preset_names())})")
    stem = Path(name).name.removesuffix(SUFFIX)
    if stem != name and preset_path(stem) is not None:  # `configs/balanced.toml`, no checkout
        return ConfigError(
            f"{what} {name}: no such file; {stem} is a preset: give its name ({stem}), or "
            f"write the file with `agentctl profile init --preset {stem} {name}`"
        )
    return ConfigError(
        f"{what} {name}: no such file and no such preset (presets: "
        f"{listing(preset_names())}; or run `agentctl profile init {name}`)"
    )
