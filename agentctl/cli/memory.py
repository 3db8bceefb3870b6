"""`agentctl memory ...`: inspect and edit the /memories directory an agent keeps. Thin.

Never imports anthropic: every command here starts in well under 150 ms.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentctl.errors import AgentctlError, ToolError, UsageError
from agentctl.render.safe import error_line, safe_text, visible

if TYPE_CHECKING:
    from rich.console import Console

    from agentctl.memory.store import MemoryStore

# Lazy imports: each subcommand imports what only it uses (the archive, the journal, Rich,
# an editor), so `memory view` loads none of the others' code and `memory --help` none of it.

HELP = """\
Inspect and edit the directory the model sees as /memories.

The root is --root DIR, else memory.root of --profile FILE, else of the profile found by the
usual lookup (AGENTCTL_PROFILE, ./agentctl.toml, the user profile), else ./memory.
PATH arguments take the model's form (/memories/notes.md) or a plain relative one (notes.md).

\b
Examples:
  agentctl memory view                      the tree, as the model sees it
  agentctl memory view notes.md --lines 10:20
  agentctl memory cat /memories/notes.md > notes.md
  echo '{"command": "view", "path": "/memories"}' | agentctl memory call
"""


app = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode=None)

RootOption = Annotated[
    Path | None,
    typer.Option("--root", metavar="DIR", help="The memory directory itself (the /memories)."),
]
ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", metavar="FILE", help="Profile whose memory.root and limits to use."),
]
# `--memory-review MODE` of run and batch: the memory.review key, as a --set after the others.
ReviewOption = Annotated[
    str | None,
    typer.Option(
        "--memory-review",
        metavar="MODE",
        help='"queue": hold memory writes for `agentctl memory review` (sets memory.review).',
    ),
]


def review_sets(mode: str | None) -> list[str]:
    """--memory-review MODE as the --set it stands for."""
    return [f"memory.review={mode}"] if mode else []


PathArg = Annotated[
    str, typer.Argument(metavar="PATH", help="/memories/... or a path relative to it.")
]


def register(root: typer.Typer) -> None:
    """Attach this command group to the root app."""
    root.add_typer(app, name="memory")


def open_store(
    root: Path | None, profile: str | None, session: str = "cli", *, create: bool = False
) -> MemoryStore:
    """The store for --root / --profile / the default profile; limits come from the profile.

    Says on stderr which folder it is and why, once it is open. Only commands that write
    (`create`) make a missing root; the others report it (one line, exit 2).
    """
    from agentctl.memory.store import MemoryStore  # not needed by --help: import on use

    if root is not None and profile is None:
        store, where = MemoryStore(root, session=session, create=create), "--root"
    else:
        from agentctl.profile.loader import resolve_profile

        settings, warnings = resolve_profile(profile)
        for warning in warnings:
            print(error_line(f"warning: {warning}"), file=sys.stderr)
        where = "--root" if root else f"memory.root of {settings.source}"
        chosen = root or settings.memory.root
        store = MemoryStore(chosen, settings.memory, session=session, create=create)
    print(f"memory root: {store.root.absolute()} ({where})", file=sys.stderr)
    return store


def memory_path(arg: str) -> str:
    """`/memories/...` as given; `notes.md` or `./notes.md` -> `/memories/notes.md`."""
    if arg.startswith("/"):
        return arg
    rel = arg.removeprefix("./").strip("/")
    return "/memories" if rel in ("", ".") else f"/memories/{rel}"


def parse_lines(spec: str) -> list[int]:
    """`10:20`, `10:` or `10` -> a view_range."""
    start, _, end = spec.partition(":")
    try:
        return [int(start), int(end) if end.strip() else -1]
    except ValueError:
        raise UsageError(f"--lines {spec}: expected START:END, e.g. 10:20 or 10:") from None


@app.command()
def view(
    path: Annotated[
        str, typer.Argument(metavar="[PATH]", help="Directory or file (default: /memories).")
    ] = "",
    lines: Annotated[
        str | None,
        typer.Option(
            "--lines", metavar="A:B", help="Line range of a file: 10:20, or 10: to the end."
        ),
    ] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Exactly the text the model gets.")] = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Show a directory tree (2 levels) or a file with line numbers, as the model sees it.

    On a terminal the tree is drawn; with --raw, or when stdout is a pipe, the output is
    byte for byte the memory tool's result text.

    \b
    Examples:
      agentctl memory view
      agentctl memory view projects/ --raw
      agentctl memory view notes.md --lines 40:
    """
    command: dict[str, Any] = {"command": "view", "path": memory_path(path)}
    if lines:
        command["view_range"] = parse_lines(lines)
    text = open_store(root, profile).execute(command)
    if raw or not sys.stdout.isatty():
        if sys.stdout.isatty():
            print(RAW_NOTE, file=sys.stderr)
        sys.stdout.write(text + "\n")
        return
    print_rich(text)


RAW_NOTE = "agentctl: --raw: the text as it is, control characters included"


def print_rich(text: str, console: Console | None = None) -> None:
    """A view result drawn for a terminal: a tree for a directory, a bold head for a file."""
    from rich.console import Console

    from agentctl.render.format import color_system
    from agentctl.render.memory_tree import listing_tree

    console = console or Console(highlight=False, color_system=color_system())
    if text.startswith("Here're the files"):
        console.print(listing_tree(text))
    else:  # the head names the file and the body is its text: data, never markup
        head, _, body = text.partition("\n")
        console.print(safe_text(head, "bold", keep=""))
        console.print(safe_text(body))


@app.command()
def cat(
    path: PathArg,
    root: RootOption = None,
    profile: ProfileOption = None,
    raw: Annotated[
        bool, typer.Option("--raw", help="On a terminal too, the bytes as they are.")
    ] = False,
) -> None:
    """Print a memory file's content (no line numbers): piped, as is; on a terminal with
    control characters shown escaped (a note may hold escape sequences), unless --raw.

    \b
    Examples:
      agentctl memory cat notes.md > notes-backup.md
      agentctl memory cat notes.md --raw      escape sequences too, on the terminal
    """
    text = open_store(root, profile).read_text(memory_path(path))
    if not sys.stdout.isatty():
        sys.stdout.write(text)
    elif raw:
        print(RAW_NOTE, file=sys.stderr)
        sys.stdout.write(text)
    else:
        sys.stdout.write(visible(text))


@app.command()
def rm(path: PathArg, root: RootOption = None, profile: ProfileOption = None) -> None:
    """Delete a memory file or a whole directory (journaled like the model's delete).

    \b
    Example:
      agentctl memory rm old-notes/
    """
    print(open_store(root, profile).execute({"command": "delete", "path": memory_path(path)}))


@app.command()
def mv(
    old: Annotated[str, typer.Argument(metavar="OLD", help="What to move.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="Where to (must not exist).")],
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Rename or move a file or directory; missing parent directories are created.

    \b
    Example:
      agentctl memory mv notes.md archive/2026/notes.md
    """
    command = {"command": "rename", "old_path": memory_path(old), "new_path": memory_path(new)}
    print(open_store(root, profile).execute(command))


@app.command()
def recount(root: RootOption = None, profile: ProfileOption = None) -> None:
    """Count the files and bytes the size limits see, walking the whole folder.

    Needed only after a file was rewritten in place by another program (`>>`, an editor
    that overwrites): files added, removed or renamed by hand are noticed on their own.

    \b
    Example:
      agentctl memory recount
    """
    usage = open_store(root, profile).recount()
    print(f"{usage.files} files, {usage.bytes} bytes")


@app.command()
def edit(path: PathArg, root: RootOption = None, profile: ProfileOption = None) -> None:
    """Open a memory file in $VISUAL or $EDITOR; saved atomically when the editor exits 0.

    A missing file is created on save. An unchanged file is not rewritten.

    \b
    Example:
      EDITOR=nano agentctl memory edit notes.md
    """
    store, target = open_store(root, profile, create=True), memory_path(path)
    before = _current_text(store, target)
    after = _run_editor(before or "", Path(target).suffix)
    if after == (before or ""):
        print(f"No changes to {target}", file=sys.stderr)
        return
    beside = store.save_edit(target, before, after)
    if beside is not None:
        raise AgentctlError(
            f"{target} changed while the editor was open (an agent wrote to it?): it was left "
            f"as it is now, and your version was saved as {beside}"
        )
    print(f"Saved {target}", file=sys.stderr)


def _current_text(store: MemoryStore, path: str) -> str | None:
    """The file's text, None when it does not exist (yet)."""
    try:
        return store.read_text(path)
    except ToolError as err:
        if "does not exist" in str(err):
            return None
        raise


def _run_editor(text: str, suffix: str) -> str:
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise UsageError("no editor: set VISUAL or EDITOR (e.g. EDITOR=nano)")
    fd, name = tempfile.mkstemp(prefix="agentctl-memory-", suffix=suffix or ".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        code = _call_editor(editor, name)
        if code != 0:
            raise UsageError(f"editor {editor!r} exited with {code}; nothing was saved")
        return Path(name).read_text(encoding="utf-8")
    finally:
        os.unlink(name)


def _call_editor(editor: str, name: str) -> int:
    import shlex
    import subprocess

    try:
        return subprocess.call([*shlex.split(editor), name])
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise UsageError(
            f"editor {editor!r} cannot be started ({why}); set VISUAL or EDITOR to an editor "
            "(e.g. EDITOR=nano)"
        ) from None


@app.command()
def export(
    file: Annotated[
        str, typer.Argument(metavar="FILE", help="Archive to write (.tar.gz); - for stdout.")
    ],
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Write all memory files to a portable tar.gz (entries under memories/).

    \b
    Example:
      agentctl memory export memories-$(date +%F).tar.gz
    """
    from agentctl.memory.archive import export_archive

    data, count = export_archive(open_store(root, profile))
    if file == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        _write_new(Path(file), data)
    print(f"Exported {count} files", file=sys.stderr)


def _write_new(path: Path, data: bytes) -> None:
    try:
        with path.open("xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise UsageError(f"{path}: already exists; choose another name") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot write: {err.strerror or err}") from None


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Archive made by `memory export`.")],
    replace: Annotated[
        bool, typer.Option("--replace", help="Overwrite files that already exist.")
    ] = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Add the files of an exported archive to the memory directory.

    The whole archive is refused (nothing written) if any entry would escape the root, is a
    symlink or special file, exceeds the limits, or exists already (unless --replace).

    \b
    Example:
      agentctl memory import memories-2026-11-30.tar.gz --root ./other-agent/memory
    """
    from agentctl.memory.archive import import_archive

    count = import_archive(open_store(root, profile, create=True), file, replace=replace)
    print(f"Imported {count} files", file=sys.stderr)


JsonOption = Annotated[bool, typer.Option("--json", help="One JSON object per line.")]


@app.command()
def log(
    as_json: JsonOption = False,
    limit: Annotated[
        int, typer.Option("-n", metavar="N", help="Show at most N entries (0: all).")
    ] = 0,
    by_session: Annotated[
        bool, typer.Option("--sessions", help="One line per session: when, turns, files.")
    ] = False,
    only: Annotated[
        str | None,
        typer.Option("--session", metavar="ID", help="Only the changes of this session."),
    ] = None,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Show the history of changes to the memory directory, newest first.

    Every successful create, str_replace, insert, delete and rename (by the model or by these
    commands) is recorded with its time, path, bytes written, session id and, for the model's
    calls, the turn and tool_use id. --sessions sums it up per session.

    \b
    Examples:
      agentctl memory log -n 20
      agentctl memory log --sessions
      agentctl memory log --session 20261201-101500-ab12     one run's changes, by turn
    """
    from agentctl.memory.journal import newest_entries, read_history

    path = open_store(root, profile).root
    if by_session:
        from agentctl.memory.blame import sessions

        for summary in sessions(read_history(path))[::-1][: limit or None]:
            _emit(summary.to_json(), as_json, _session_line)
        return
    for entry in newest_entries(path, limit, only):
        _emit(entry, as_json, _log_line)


def _emit(record: dict[str, Any], as_json: bool, line: Any) -> None:
    print(json.dumps(record, ensure_ascii=False) if as_json else visible(line(record)))


def _log_line(entry: dict[str, Any]) -> str:
    target = entry.get("path", "")
    if entry.get("new_path"):
        target += f" -> {entry['new_path']}"
    size = f"{entry.get('bytes', 0)}B" if entry.get("bytes") else "-"
    session = entry.get("session") or "-"
    turn = f"turn {entry['turn']}" if isinstance(entry.get("turn"), int) else "-"
    when, command = entry.get("time", "?"), entry.get("command", "?")
    return f"{when}  {command:<11}  {size:>8}  {session:<10}  {turn:<8}  {target}"


def _session_line(summary: dict[str, Any]) -> str:
    turns = ",".join(map(str, summary["turns"])) or "-"
    files = ", ".join(summary["paths"])
    return (
        f"{summary['session']:<14}  {summary['first']}  {summary['last']}  "
        f"{summary['changes']:>3} changes  turns {turns}  {files}"
    )


@app.command()
def blame(
    path: PathArg,
    as_json: JsonOption = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Show each line of a memory file with the session, turn and time that last wrote it.

    Lines the history cannot account for (changed by hand, or pruned) show `unrecorded`.

    \b
    Example:
      agentctl memory blame notes.md
    """
    from agentctl.memory.blame import blame as blame_lines

    store, target = open_store(root, profile), memory_path(path)
    current = store.read_text(target).encode("utf-8")
    for line in blame_lines(store.history(), target, current, store.read_blob):
        record = {"line": line.number, "text": line.text, **line.origin.to_json()}
        _emit(record, as_json, _blame_line)


def _blame_line(record: dict[str, Any]) -> str:
    who = record["session"] or ("(before history)" if record["command"] == "base" else "-")
    if record["command"] == "unrecorded":
        who = "unrecorded"
    turn = f"turn {record['turn']}" if record["turn"] else ""
    text = record["text"].removesuffix("\n")
    return f"{record['line']:>5}  {who:<14} {turn:<8} {record['time'] or '-':<24}  {text}"


SessionArg = Annotated[str, typer.Argument(metavar="SESSION", help="A session id (memory log).")]


@app.command()
def diff(
    session: SessionArg,
    as_json: JsonOption = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Show what a session changed in the memory directory: a unified diff per change.

    \b
    Example:
      agentctl memory diff 20261201-101500-ab12
    """
    from agentctl.memory.blame import session_changes

    store = open_store(root, profile)
    changes = session_changes(store.history(), session, store.read_blob)
    if not changes:
        raise UsageError(f"memory diff: session {session!r} changed nothing in {store.root}")
    for change in changes:
        if as_json:
            print(json.dumps(change.to_json(), ensure_ascii=False))
        else:
            sys.stdout.write(visible(change.unified()))


@app.command()
def revert(
    session: SessionArg,
    as_json: JsonOption = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Undo everything a session wrote, keeping what later sessions changed.

    Each change is undone by a three-way merge; where a later change touched the same (or
    adjacent) lines, nothing is written and the files are named (exit 1).

    \b
    Example:
      agentctl memory revert 20261201-101500-ab12
    """
    store = open_store(root, profile)
    if not any(e.get("session") == session for e in store.history()):
        raise UsageError(f"memory revert: session {session!r} changed nothing in {store.root}")
    changed, conflicts = store.revert(session)
    if as_json:
        print(json.dumps({"reverted": changed, "conflicts": [c.__dict__ for c in conflicts]}))
    if conflicts:
        why = "; ".join(dict.fromkeys(f"{c.path}: {c.why}" for c in conflicts))
        raise AgentctlError(f"memory revert {session}: nothing was changed: {why}")
    if not as_json:
        print(f"Reverted {session}: {len(changed)} files ({', '.join(changed) or 'none'})")


@app.command()
def clear(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Delete every memory file and directory (the journal is kept).

    Asks for confirmation; without a terminal it refuses unless --yes is given.

    \b
    Example:
      agentctl memory clear --yes --root ./scratch-memory
    """
    store = open_store(root, profile)
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("memory clear: no terminal to confirm on; pass --yes to clear")
        if not typer.confirm(f"Delete everything in {store.root}?"):
            print("Nothing deleted.", file=sys.stderr)
            raise typer.Exit(1)
    print(f"Deleted {store.clear()} entries from {store.root}", file=sys.stderr)


@app.command()
def call(
    session: Annotated[
        str, typer.Option("--session", metavar="ID", help="Session id written to the journal.")
    ] = "cli-call",
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Run memory tool inputs read from stdin, one JSON object per line.

    Prints one JSON line per input, flushed at once: {"ok": true, "result": "..."} or
    {"ok": false, "error": "..."}. Bad lines get ok:false and processing goes on. Exit 0.

    \b
    Example:
      printf '%s\\n' '{"command":"create","path":"/memories/a.md","file_text":"hi"}' \\
        '{"command":"view","path":"/memories/a.md"}' | agentctl memory call
    """
    store = open_store(root, profile, session=session, create=True)
    out = sys.stdout.buffer  # UTF-8 whatever the locale: the answers are for programs
    for number, line in enumerate(sys.stdin.buffer, start=1):
        if line.strip():
            answer = json.dumps(call_line(store, line, number), ensure_ascii=False)
            out.write(answer.encode("utf-8") + b"\n")
            out.flush()


def call_line(store: MemoryStore, line: bytes | str, number: int) -> dict[str, Any]:
    """One stdin line (UTF-8 JSON) -> the JSON answer for it."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        command = json.loads(text)
    except UnicodeDecodeError:
        return {"ok": False, "error": f"line {number}: not UTF-8"}
    except json.JSONDecodeError as err:
        return {"ok": False, "error": f"line {number}: not JSON: {err.msg} (column {err.colno})"}
    except RecursionError:
        return {"ok": False, "error": f"line {number}: JSON nested too deeply"}
    if not isinstance(command, dict):
        kind = type(command).__name__
        return {"ok": False, "error": f"line {number}: expected a JSON object, got {kind}"}
    try:
        return {"ok": True, "result": store.execute(command)}
    except ToolError as err:
        return {"ok": False, "error": str(err)}


@app.command()
def review(
    paths: Annotated[
        list[str] | None,
        typer.Argument(metavar="[PATH]...", help="With --apply / --drop: only these files."),
    ] = None,
    apply: Annotated[
        str | None,
        typer.Option("--apply", metavar="SESSION", help="Write the session's pending changes."),
    ] = None,
    drop: Annotated[
        str | None,
        typer.Option("--drop", metavar="SESSION", help="Discard the session's pending changes."),
    ] = None,
    as_json: JsonOption = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """List, apply or drop the memory writes that runs with memory.review = "queue" left
    pending (each run reads its own writes back; the memory directory is not touched).

    Applying merges each file's changes into the directory as it is now; where it changed
    meanwhile in the same lines, nothing is applied (exit 1).

    \b
    Examples:
      agentctl memory review                             pending changes per session, as diffs
      agentctl memory review --apply 20261201-101500-ab12
      agentctl memory review --drop 20261201-101500-ab12 notes/draft.md
    """
    from agentctl.memory.pending import Layer, layers

    store = open_store(root, profile)
    if apply and drop:
        raise UsageError("memory review: give --apply SESSION or --drop SESSION, not both")
    session = apply or drop
    if session is None:
        if paths:
            raise UsageError("memory review: PATH arguments go with --apply or --drop")
        for layer in layers(store.root):
            _show_pending(layer, as_json)
        return
    layer = Layer(store.root, session)
    if not layer.exists():
        raise UsageError(f"memory review: session {session!r} has nothing pending in {store.root}")
    chosen = [memory_path(p) for p in paths or []]
    settled = layer.settle(store.settings, chosen, apply=apply is not None)
    verb = "applied" if apply else "dropped"
    if as_json:
        print(json.dumps({"session": session, verb: settled}))
    else:
        print(f"{verb.capitalize()} {session}: {len(settled)} files ({', '.join(settled)})")


def _show_pending(layer: Any, as_json: bool) -> None:
    changes = layer.changes()
    if not changes:  # a queued run that wrote nothing
        return
    if as_json:
        for change in changes:
            record = {"session": layer.session, "path": change.path, "diff": change.unified()}
            print(json.dumps(record, ensure_ascii=False))
        return
    print(f"session {layer.session}: {len(changes)} pending files")
    for change in changes:
        sys.stdout.write(visible(change.unified()))


@app.command()
def init(
    template: Annotated[
        str, typer.Option("--template", metavar="NAME", help="The layout to seed: project-log.")
    ] = "project-log",
    as_json: JsonOption = False,
    root: RootOption = None,
    profile: ProfileOption = None,
) -> None:
    """Seed the memory directory with a layout for work that spans sessions.

    project-log: progress.md (a log each session adds to), features.md (a checklist) and
    startup.md (a note pointing at the start-up scripts). Files that exist are refused (exit 2),
    nothing written.

    \b
    Example:
      agentctl memory init --template project-log --root ./memory
    """
    from agentctl.memory.templates import seed

    created = seed(open_store(root, profile, create=True), template)
    if as_json:
        print(json.dumps({"template": template, "created": created}))
    else:
        print(f"Created {', '.join(created)}")
