"""Reading a memory archive for import: a byte-budgeted stream, every member checked first.

A gzip bomb must not be decompressed whole: the archive is decompressed by us, through a reader
that stops at a byte budget, and read by tarfile as a plain stream. Each member's declared
size is checked against the limits before its data is read; a duplicate member replaces the
earlier one (as tar extraction would) and is counted once; a name that is both a file and a
folder refuses the archive. Nothing is written here.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from agentctl.errors import UsageError
from agentctl.memory.fsops import is_reserved
from agentctl.memory.guard import PathRefusedError, split_relative
from agentctl.profile.settings import MemorySettings

PREFIX = "memories"
# What the decompressed stream may hold besides the data: 1 kB of tar header and padding per
# file, plus 1 MB; with no limit on files or bytes, 64 MB and 1 GB.
PER_FILE_ALLOWANCE = 1024
NO_LIMIT_HEADERS = 64 * 1024 * 1024
NO_LIMIT_BYTES = 1024 * 1024 * 1024
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "lzma"}


@dataclass(frozen=True)
class ArchivedFile:
    """One file to import: its components below the root and its bytes."""

    parts: tuple[str, ...]
    data: bytes


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class OverBudgetError(Exception):
    """The archive decompresses to more bytes than the import may read."""


class _Budgeted(io.RawIOBase):
    """A readable stream that raises OverBudgetError past `budget` bytes."""

    def __init__(self, inner: _Readable, budget: int) -> None:
        self.inner, self.left = inner, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer)
        data = self.inner.read(min(len(view), self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise OverBudgetError
        view[: len(data)] = data
        return len(data)


@contextmanager
def open_stream(src: Path, budget: int) -> Iterator[IO[bytes]]:
    """The archive's decompressed bytes (gzip, bzip2, xz or none), held to `budget`."""
    with src.open("rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        kind = next((k for magic, k in _MAGIC.items() if head.startswith(magic)), None)
        inner: _Readable = raw if kind is None else _decompressor(kind, raw)
        try:
            yield io.BufferedReader(_Budgeted(inner, budget))
        finally:
            inner.close()


def _decompressor(kind: str, raw: IO[bytes]) -> _Readable:
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(raw)
    import lzma

    return lzma.LZMAFile(raw)


class ImportPlan:
    """The archive's files as they are read, with every check that needs no disk."""

    def __init__(self, src: Path, settings: MemorySettings) -> None:
        self.src, self.settings = src, settings
        self.budget = _budget(settings)
        self._files: dict[tuple[str, ...], bytes] = {}
        self._dirs: set[tuple[str, ...]] = set()
        self._bytes = 0

    def add(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        """Check one member and keep its data (read only once every check passed)."""
        parts = member_parts(member.name, self.src)
        if member.isdir():
            self._dirs.add(parts)
            return
        where = f"{self.src}: entry {member.name!r}"
        if not member.isfile():
            raise UsageError(
                f"{where} is a link or special file; only regular files and directories can be "
                "imported (nothing was imported)"
            )
        if not parts:
            raise UsageError(
                f"{where} is a file in place of the {PREFIX}/ folder itself (nothing was imported)"
            )
        self._check_size(parts, member.size, where)
        handle = tar.extractfile(member)
        assert handle is not None  # a regular file member always has data
        self._files[parts] = handle.read(member.size)

    def _check_size(self, parts: tuple[str, ...], size: int, where: str) -> None:
        s = self.settings
        if 0 < s.max_file_bytes < size:
            raise UsageError(
                f"{where} is {size} bytes, over memory.max_file_bytes ({s.max_file_bytes}); "
                "nothing was imported"
            )
        self._bytes += size - len(self._files.get(parts, b""))
        count = len(self._files) + (parts not in self._files)
        if 0 < s.max_total_bytes < self._bytes or 0 < s.max_files < count:
            raise UsageError(
                f"{self.src}: the archive holds more than memory.max_files ({s.max_files}) "
                f"files or memory.max_total_bytes ({s.max_total_bytes}) bytes; nothing was "
                "imported"
            )

    def files(self) -> list[ArchivedFile]:
        """The files to write, once the whole archive was read: no name both file and folder."""
        folders = self._dirs | {parts[:i] for parts in self._files for i in range(len(parts))}
        for parts in self._files:
            if parts in folders:
                shown = "/".join((PREFIX, *parts))
                raise UsageError(
                    f"{self.src}: {shown} is both a file and a folder in the archive; nothing "
                    "was imported"
                )
        return [ArchivedFile(parts, data) for parts, data in self._files.items()]


def _budget(settings: MemorySettings) -> int:
    """How many decompressed bytes an import may read: the data limit plus the headers."""
    data = settings.max_total_bytes if settings.max_total_bytes > 0 else NO_LIMIT_BYTES
    files = settings.max_files
    headers = PER_FILE_ALLOWANCE * files + (1 << 20) if files > 0 else NO_LIMIT_HEADERS
    return data + headers


def member_parts(name: str, src: Path) -> tuple[str, ...]:
    """The components below the root of an archive member named `memories/...`; UsageError."""
    head, _, rest = name.partition("/")
    where = f"{src}: entry {name!r}"
    if head != PREFIX:
        raise UsageError(f"{where} is not under {PREFIX}/ (nothing was imported)")
    try:
        parts = split_relative(rest)
    except PathRefusedError as err:
        raise UsageError(f"{where} refused: {err} (nothing was imported)") from None
    if any(is_reserved(p) for p in parts):
        raise UsageError(f"{where} uses a name reserved for agentctl (nothing was imported)")
    return parts
