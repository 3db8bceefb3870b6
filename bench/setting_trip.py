"""Trace one profile key, `context_editing.tool_uses.trigger`, from its TOML file to the wire.

Runs `agentctl run TASK --offline --profile FILE` in-process on a (fake) terminal, so the live
view is the renderer, with the trigger set to a value nothing else produces (23457), a task
whose front matter tunes the run (so the trust check runs), and `--set` on top. Every call
whose arguments or return value hold the trigger is recorded, as long as it holds it as data
of its own: the int (found by identity), a dict/list/tuple around it, its text (TOML, JSON,
HTTP bytes), or a context-editing settings object (`ClearToolUses`, `ContextEditing`). Calls
that are only handed the whole `Profile`/`Plan` do not count: they pass the setting on
without looking at it. A "form" is the shape the trigger has in such a call: its text, the
dotted path inside a plain dict, or the settings attribute.

    python bench/setting_trip.py            # summary: modules, calls, forms
    python bench/setting_trip.py --calls    # also the module.function list in call order
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

VALUE = 23457
TEXT = str(VALUE)
PROFILE = f"""\
model = "claude-sonnet-5"
[context_editing.tool_uses]
strategy = "server"
trigger = {VALUE}
"""
TASK = """\
+++
max_turns = 4
[cache]
ttl = "5m"
+++
Summarise the notes.
"""
SETTINGS_CLASSES = {"ClearToolUses", "ContextEditing"}


def holds(value: Any, target: int, depth: int = 0) -> str | None:
    """The form in which `value` holds the trigger as data of its own, or None."""
    if value is target:
        return "int"
    if isinstance(value, str | bytes | bytearray):
        needle = TEXT if isinstance(value, str) else TEXT.encode()
        return f"text:{_text_kind(value)}" if needle in value else None
    if depth > 8:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = holds(item, target, depth + 1)
            if found is not None:
                return found if found.startswith("text") else _path(key, found)
        return None
    if isinstance(value, list | tuple):
        for item in value:
            found = holds(item, target, depth + 1)
            if found is not None:
                return found if found.startswith("text") else _path("[]", found)
        return None
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and name in SETTINGS_CLASSES:
        for f in dataclasses.fields(value):
            found = holds(getattr(value, f.name, None), target, depth + 1)
            if found is not None:
                return f"{name}.{f.name}" if found == "int" else f"{name}.{f.name}>{found}"
    return None


def _path(key: Any, found: str) -> str:
    return f"dict[{key}]" if found == "int" else f"dict[{key}]{found.removeprefix('dict')}"


def _text_kind(value: str | bytes | bytearray) -> str:
    head = bytes(value[:200]) if not isinstance(value, str) else value[:200].encode()
    if head.lstrip().startswith((b"{", b"[")):
        return "json"
    if b"HTTP/" in head or b"POST " in head:
        return "http"
    return "toml" if b"=" in head else "other"


class Tracer:
    """sys.setprofile hook: the agentctl calls (and the SDK's send) that hold the trigger."""

    def __init__(self) -> None:
        self.target: int | None = None
        self.calls: list[tuple[str, str]] = []
        self.sent = False  # the first request went out: the trip is over

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or self.target is None or self.sent:
            return
        module = frame.f_globals.get("__name__", "")
        if (
            module.startswith("httpx")
            and module.endswith("._client")
            and frame.f_code.co_name == "send"
        ):
            self.sent = True  # the request JSON is on the wire
            self.calls.append(("httpx.Client.send", "text:json"))
            return
        ours = module.startswith("agentctl") and not module.startswith("agentctl.emulator")
        if not ours and not module.startswith(("tomllib", "json")):
            return
        code = frame.f_code
        values = (
            [frame.f_locals[n] for n in code.co_varnames[: _argc(code)] if n in frame.f_locals]
            if event == "call"
            else [arg]
        )
        for value in values:
            form = holds(value, self.target)
            if form is not None:
                self.calls.append((f"{module}.{code.co_qualname}", form))
                return


def _argc(code: Any) -> int:
    return int(code.co_argcount + code.co_kwonlyargcount)


class FakeTty:
    """stderr that says it is a terminal, so the run picks the live view."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("no file descriptor")


def trace() -> Tracer:
    import tomllib

    import typer

    from agentctl.cli.main import app

    tracer = Tracer()
    original = tomllib.loads

    def loads(text: str, **kw: Any) -> dict[str, Any]:  # the first int the TOML parser makes
        data = original(text, **kw)
        found = (data.get("context_editing") or {}).get("tool_uses", {}).get("trigger")
        if found == VALUE and tracer.target is None:
            tracer.target = found
        return data

    tomllib.loads = loads  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "conf").mkdir()
        (root / "conf" / "p.toml").write_text(PROFILE)
        (root / "work").mkdir()
        (root / "work" / "task.md").write_text(TASK)
        os.environ["AGENTCTL_HOME"] = str(root / "home")
        os.environ["COLUMNS"] = "120"
        os.chdir(root)
        sys.stderr, stderr = FakeTty(), sys.stderr  # type: ignore[assignment]
        argv = ["run", "work/task.md", "--offline", "--profile", "conf/p.toml"]
        argv += ["--set", "max_turns=3"]
        sys.setprofile(tracer)
        try:
            typer.main.get_command(app).main(argv, standalone_mode=False)
        finally:
            sys.setprofile(None)
            sys.stderr = stderr
            tomllib.loads = original  # type: ignore[assignment]
    return tracer


def main() -> None:
    tracer = trace()
    seen: dict[str, str] = {}
    for call, form in tracer.calls:
        seen.setdefault(call, form)
    ours = [c for c in seen if c.startswith("agentctl.")]
    modules = sorted({_module(c) for c in ours})
    forms = sorted({shape(form) for form in seen.values()} | {"TOML text"})
    print(f"modules: {len(modules)}  calls (distinct functions): {len(ours)}  forms: {len(forms)}")
    print("modules:", ", ".join(m.removeprefix("agentctl.") for m in modules))
    print("forms:", "; ".join(forms))
    if "--calls" in sys.argv:
        for call, form in seen.items():
            print(f"  {call}  [{form}]")


def shape(form: str) -> str:
    """The forms grouped by what the value is: text, a profile-shaped dict, an edit dict (the
    request's `trigger.value`), the typed setting, or the bare int."""
    if form.startswith("text:"):
        return "TOML text" if form == "text:toml" else "JSON text"
    if form.endswith("[trigger][value]"):
        return "request dict (trigger.value)"
    if form.startswith("dict"):
        return "profile dict (tool_uses.trigger)"
    return "int" if form == "int" else "typed ClearToolUses.trigger"


def _module(call: str) -> str:
    import importlib

    parts = call.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        return name
    return call


if __name__ == "__main__":
    main()
