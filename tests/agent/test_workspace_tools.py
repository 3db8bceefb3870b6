"""Workspace tools on real directories: formats of the shared contract, paging, caps, refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctl.errors import ToolError
from agentctl.tools.registry import ToolBox
from agentctl.tools.workspace import MAX_MATCHES, WorkspaceTools


@pytest.fixture
def ws(tmp_path: Path) -> WorkspaceTools:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (tmp_path / "b.log").write_text("x" * 10)
    (tmp_path / ".hidden").write_text("secret")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("secret")
    return WorkspaceTools(tmp_path, 20_000)


def test_list_files_is_recursive_sorted_with_sizes_and_skips_hidden(ws: WorkspaceTools) -> None:
    assert ws.list_files({}) == "b.log\t10\nnotes/a.txt\t17"
    assert ws.list_files({"path": "notes"}) == "notes/a.txt\t17"


def test_read_file_numbers_lines_like_the_memory_view(ws: WorkspaceTools) -> None:
    assert ws.read_file({"path": "notes/a.txt"}) == "     1\talpha\n     2\tbeta\n     3\tgamma"


def test_read_file_pages_with_offset_and_limit(ws: WorkspaceTools) -> None:
    out = ws.read_file({"path": "notes/a.txt", "offset": 2, "limit": 1})
    assert out == (
        "     2\tbeta\n[truncated: more lines follow; call read_file with offset=3 to continue]"
    )
    assert ws.read_file({"path": "notes/a.txt", "offset": 3}) == "     3\tgamma"


def test_read_file_cut_by_the_size_cap_says_where_to_continue(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(
        "".join(f"line {i:04d} " + "y" * 80 + "\n" for i in range(1, 501))
    )
    out = WorkspaceTools(tmp_path, 2_000).read_file({"path": "big.txt"})
    last = out.splitlines()[-1]
    assert len(out) <= 2_000
    assert last.startswith("[truncated: ") and "call read_file with offset=" in last
    next_offset = int(last.split("offset=")[1].split()[0])
    assert out.splitlines()[-2].startswith(f"{next_offset - 1:>6}\t")


def test_search_text_reports_path_line_and_text(ws: WorkspaceTools) -> None:
    assert ws.search_text({"pattern": "^(beta|gam)"}) == "notes/a.txt:2:beta\nnotes/a.txt:3:gamma"
    assert ws.search_text({"pattern": "zzz"}) == "[no matches]"


def test_search_text_stops_after_the_match_limit(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * (MAX_MATCHES + 50))
    lines = WorkspaceTools(tmp_path, 100_000).search_text({"pattern": "hit"}).splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1].startswith("[truncated")


@pytest.mark.parametrize(
    ("call", "tool_input", "message"),
    [
        ("read_file", {"path": "missing.txt"}, "does not exist"),
        ("read_file", {"path": "../etc/passwd"}, "'..'"),
        ("read_file", {"path": "/etc/passwd"}, "absolute"),
        ("read_file", {"path": "notes"}, "not a regular file"),
        ("read_file", {"path": "notes/a.txt", "offset": 0}, "positive integer"),
        ("read_file", {"path": "notes/a.txt", "offset": 99}, "past the end"),
        ("list_files", {"path": "nope"}, "does not exist"),
        ("search_text", {"pattern": "("}, "bad regular expression"),
        ("search_text", {"pattern": "a", "path": "%2e%2e/x"}, "percent-encoded"),
    ],
)
def test_bad_inputs_are_tool_errors(
    ws: WorkspaceTools, call: str, tool_input: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message) as info:
        getattr(ws, call)(tool_input)
    assert str(info.value).startswith("Error: ")
    assert str(ws.root) not in str(info.value)  # never a host path


def test_symlinks_out_of_the_root_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / "link.txt")
    os.symlink(tmp_path, root / "linkdir")
    ws = WorkspaceTools(root, 1000)
    with pytest.raises(ToolError, match="symbolic link"):
        ws.read_file({"path": "link.txt"})
    with pytest.raises(ToolError, match="symbolic link"):
        ws.read_file({"path": "linkdir/outside.txt"})
    assert ws.list_files({}) == "[no files]"
    assert ws.search_text({"pattern": "secret"}) == "[no matches]"


def test_toolbox_turns_tool_errors_into_is_error_results(ws: WorkspaceTools) -> None:
    box = ToolBox(ws.tools(), max_result_chars=50)
    missing = box.dispatch("read_file", {"path": "nope"})
    assert missing.is_error and missing.content.startswith("Error: The path nope")
    unknown = box.dispatch("shell", {"cmd": "ls"})
    assert unknown.is_error and "unknown tool 'shell'" in unknown.content
    assert [d["name"] for d in box.definitions()] == ["list_files", "read_file", "search_text"]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("./%2e\\ab\x00")), max_size=12))
def test_no_path_reads_outside_the_root(tmp_path_factory: pytest.TempPathFactory, rel: str) -> None:
    base = tmp_path_factory.mktemp("hyp")
    (base / "secret.txt").write_text("TOPSECRET")
    root = base / "root"
    root.mkdir(exist_ok=True)
    (root / "ab").write_text("fine")
    ws = WorkspaceTools(root, 1000)
    for call in (ws.read_file, ws.list_files):
        try:
            out = call({"path": rel or "."})
        except ToolError:
            continue
        assert "TOPSECRET" not in out and "secret.txt" not in out
