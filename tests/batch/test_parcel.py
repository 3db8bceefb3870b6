"""What a Ray task takes along and brings back: folders as tar bytes, unpacked only inside."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from agentctl.batch.parcel import WORKSPACE_LIMIT, pack_tree, pack_workspace, unpack_tree
from agentctl.errors import UsageError


def _listing(root: Path) -> dict[str, bytes | str]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else "<dir>"
        for p in sorted(root.rglob("*"))
    }


def test_a_memory_tree_comes_back_as_it_went(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "projects" / "empty").mkdir(parents=True)
    (src / "projects" / "notes.md").write_text("# notes\n- ünïcode\n")
    (src / "top.md").write_bytes(b"\x00binary\xff")
    unpack_tree(pack_tree(src), tmp_path / "dest", "memory")
    assert _listing(tmp_path / "dest") == _listing(src)


def test_the_workspace_travels_as_the_workspace_tools_see_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref")
    (ws / "docs").mkdir()
    (ws / "docs" / "a.txt").write_text("alpha")
    (ws / ".env").write_text("SECRET=1")
    (ws / "link.txt").symlink_to(ws / "docs" / "a.txt")
    unpack_tree(pack_workspace(ws), tmp_path / "dest", "workspace")
    assert _listing(tmp_path / "dest") == {"docs": "<dir>", "docs/a.txt": b"alpha"}


def test_a_workspace_past_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with (ws / "big.bin").open("wb") as sparse:
        sparse.truncate(WORKSPACE_LIMIT + 1)
    with pytest.raises(UsageError, match=f"workspace {ws}: more than 64 MB"):
        pack_workspace(ws)


def _tar(info: tarfile.TarInfo, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


@pytest.mark.parametrize(
    "member",
    [tarfile.TarInfo("../escape.md"), _link("out", "../../escape.md"), _link("etc", "/etc")],
    ids=["dotdot", "link-out", "link-absolute"],
)
def test_members_that_would_land_outside_are_refused(
    tmp_path: Path, member: tarfile.TarInfo
) -> None:
    dest = tmp_path / "inner" / "dest"
    with pytest.raises(UsageError, match="the memory a Ray task sent back: cannot unpack it"):
        unpack_tree(_tar(member, b"bad"), dest, "the memory a Ray task sent back")
    assert not list((tmp_path / "inner").rglob("*escape*")) and not list(dest.rglob("*"))


def test_an_absolute_member_lands_inside(tmp_path: Path) -> None:
    unpack_tree(_tar(tarfile.TarInfo("/etc/escape.md"), b"ok"), tmp_path / "dest", "memory")
    assert _listing(tmp_path / "dest") == {"etc": "<dir>", "etc/escape.md": b"ok"}
