"""Differential suite: our store vs the SDK's BetaLocalFilesystemMemoryTool, same inputs.

Each scenario is a command sequence; every step must give the same result or error text on both
sides and the trees must end equal. Known, deliberate differences are tested at the end.
"""

from __future__ import annotations

from typing import Any

import pytest
from memory_harness import Pair, assert_same, modes

M = "/memories"


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def view(path: str, view_range: list[int] | None = None) -> dict[str, Any]:
    cmd: dict[str, Any] = {"command": "view", "path": path}
    if view_range is not None:
        cmd["view_range"] = view_range
    return cmd


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: int, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "path": None, "old_path": old, "new_path": new}


TEN = "".join(f"line {i}\n" for i in range(1, 11))
NOTES = f"{M}/notes.md"

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "empty root view": [view(M)],
    "root with trailing slash": [create(f"{M}/a.txt", "x"), view(f"{M}/")],
    "create then view": [create(NOTES, "Hello World\nThis is line two\n"), view(NOTES), view(M)],
    "create exists": [create(NOTES, "a"), create(NOTES, "b"), view(NOTES)],
    "create on root": [create(M, "x")],
    "create empty file": [create(f"{M}/empty.txt", ""), view(f"{M}/empty.txt"), view(M)],
    "no trailing newline": [create(NOTES, "one\ntwo"), view(NOTES)],
    "unicode": [
        create(f"{M}/ünï/çødé.md", "héllo wörld ✓\n日本語\n🙂 emoji\n"),
        view(f"{M}/ünï/çødé.md"),
        replace(f"{M}/ünï/çødé.md", "日本語", "中文"),
        insert(f"{M}/ünï/çødé.md", 1, "ß\n"),
        view(f"{M}/ünï/çødé.md"),
        view(M),
    ],
    "crlf": [create(NOTES, "a\r\nb\r\nc\r\n"), insert(NOTES, 2, "x"), view(NOTES)],
    "view_range variants": [
        create(NOTES, TEN),
        view(NOTES, [2, 4]),
        view(NOTES, [5, -1]),
        view(NOTES, [0, 3]),
        view(NOTES, [-5, 2]),
        view(NOTES, [8, 100]),
        view(NOTES, [20, 30]),
        view(NOTES, [4, 2]),
        view(NOTES, [3, 3]),
        view(NOTES, [1, -1]),
        view(NOTES, []),
    ],
    "view_range on a directory": [create(f"{M}/d/f", "x"), view(f"{M}/d", [1, 2])],
    "view missing": [view(f"{M}/nope.md"), view(f"{M}/nope/deeper.md")],
    "view under a file": [create(NOTES, "x"), view(f"{NOTES}/child")],
    "nested listing depth 2": [
        create(f"{M}/a.txt", "aaa"),
        create(f"{M}/sub/b.txt", "bb"),
        create(f"{M}/sub/deep/c.txt", "c"),
        create(f"{M}/sub/deep/deeper/d.txt", "d"),
        create(f"{M}/sub/.hidden", "h"),
        create(f"{M}/.hidden_dir/x.txt", "x"),
        create(f"{M}/node_modules/pkg.json", "{}"),
        view(M),
        view(f"{M}/sub"),
        view(f"{M}/sub/deep"),
    ],
    "listing sorted by code point": [
        create(f"{M}/b.txt", "1"),
        create(f"{M}/B.txt", "22"),
        create(f"{M}/a.txt", "333"),
        create(f"{M}/_x.txt", "4444"),
        create(f"{M}/é.txt", "5"),
        create(f"{M}/10.txt", "6"),
        create(f"{M}/9.txt", "7"),
        view(M),
    ],
    "listing sizes": [
        create(f"{M}/k1", "x" * 1024),
        create(f"{M}/k15", "x" * 1536),
        create(f"{M}/b1023", "x" * 1023),
        create(f"{M}/m", "x" * (1024 * 1024 + 200_000)),
        view(M),
    ],
    "str_replace snippet positions": [
        create(NOTES, TEN),
        replace(NOTES, "line 1\n", "first\n"),
        replace(NOTES, "line 5", "fifth\nand a half"),
        replace(NOTES, "line 10\n", "last"),
        view(NOTES),
    ],
    "str_replace errors": [
        create(NOTES, "dup\nx dup\ndup dup\n"),
        replace(NOTES, "absent", "y"),
        replace(NOTES, "dup", "y"),
        replace(f"{M}/missing.md", "a", "b"),
        create(f"{M}/dir/f.md", "x"),
        replace(f"{M}/dir", "a", "b"),
        replace(M, "a", "b"),
        view(NOTES),
    ],
    "str_replace overlapping occurrences": [create(NOTES, "aaa\naa\n"), replace(NOTES, "aa", "b")],
    "str_replace multi-line old": [
        create(NOTES, "alpha\nbeta\ngamma\ndelta\n"),
        replace(NOTES, "beta\ngamma\n", "BG\n"),
        view(NOTES),
    ],
    "str_replace to empty": [create(NOTES, "keep drop keep"), replace(NOTES, " drop", "")],
    "multi-line inserts": [
        create(NOTES, "one\ntwo\nthree\n"),
        insert(NOTES, 0, "zero\n"),
        insert(NOTES, 4, "four\nfive\n\n\n"),
        insert(NOTES, 2, "a\nb\nc"),
        view(NOTES),
    ],
    "insert into empty and no-newline files": [
        create(f"{M}/e.md", ""),
        insert(f"{M}/e.md", 0, "first"),
        create(f"{M}/n.md", "no newline"),
        insert(f"{M}/n.md", 1, "after"),
        view(f"{M}/e.md"),
        view(f"{M}/n.md"),
    ],
    "insert errors": [
        create(NOTES, "a\nb\n"),
        insert(NOTES, 3, "x"),
        insert(NOTES, -1, "x"),
        insert(f"{M}/missing.md", 0, "x"),
        create(f"{M}/d/f", "x"),
        insert(f"{M}/d", 0, "x"),
        view(NOTES),
    ],
    "delete file and dir": [
        create(f"{M}/keep.md", "k"),
        create(f"{M}/d/a.md", "a"),
        create(f"{M}/d/e/b.md", "b"),
        delete(f"{M}/d"),
        delete(f"{M}/d"),
        delete(f"{M}/keep.md"),
        delete(f"{M}/nope"),
        view(M),
    ],
    "delete root forms": [delete(M), delete(f"{M}/"), delete(f"{M}/."), view(M)],
    "rename into new dirs": [
        create(f"{M}/a.md", "A"),
        rename(f"{M}/a.md", f"{M}/x/y/z.md"),
        view(f"{M}/x/y/z.md"),
        view(M),
    ],
    "rename dir": [
        create(f"{M}/d/a.md", "A"),
        create(f"{M}/d/s/b.md", "B"),
        rename(f"{M}/d", f"{M}/e"),
        view(M),
    ],
    "rename errors": [
        create(f"{M}/a.md", "A"),
        create(f"{M}/b.md", "B"),
        rename(f"{M}/a.md", f"{M}/b.md"),
        rename(M, f"{M}/x"),
        rename(f"{M}/", f"{M}/x"),
        rename(f"{M}/a.md", M),
        rename(f"{M}/a.md", f"{M}/a.md"),
        view(M),
    ],
    "path prefix errors": [
        view("/etc/passwd"),
        view("memories/notes.md"),
        view(""),
        create("/tmp/x", "y"),
        rename("/memories/a", "/other/b"),
    ],
    "traversal that escapes": [
        view(f"{M}/../etc/passwd"),
        view(f"{M}/.."),
        create(f"{M}/../../x", "y"),
        delete(f"{M}/a/../../x"),
    ],
    "double slashes and dots": [
        create(f"{M}//d//f.md", "x"),
        view(f"{M}//d"),
        view(f"{M}/./d/./f.md"),
    ],
    "hidden files are allowed but not listed": [
        create(f"{M}/.secret", "s"),
        view(f"{M}/.secret"),
        view(M),
    ],
    "unknown command": [{"command": "bogus", "path": M}],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.dates
def test_same_as_sdk(pair: Pair, name: str) -> None:
    outcomes = assert_same(pair, SCENARIOS[name])
    assert outcomes  # every scenario ran at least one command


@pytest.mark.dates
def test_listing_matches_documented_example(pair: Pair) -> None:
    outcomes = assert_same(pair, [create(f"{M}/notes.txt", "x" * 29), view(M)])
    assert outcomes[-1][1] == (
        "Here're the files and directories up to 2 levels deep in /memories, "
        "excluding hidden items:\n4K\t/memories\n29B\t/memories/notes.txt"
    )


@pytest.mark.dates
def test_modes_match(pair: Pair) -> None:
    assert_same(pair, [create(f"{M}/a/b/c.md", "x"), replace(f"{M}/a/b/c.md", "x", "y")])
    assert modes(pair.ours_root) == modes(pair.sdk_root)
    assert set(modes(pair.ours_root).values()) == {0o700, 0o600}


# -- deliberate differences (docs/memory.md, "Differences from the SDK") -------------------


def test_memoriesfoo_refused_where_sdk_maps_it(pair: Pair) -> None:
    ours, sdk = pair.both(create("/memoriesfoo", "x"))
    assert sdk == ("ok", "File created successfully at: /memoriesfoo")
    assert ours == ("err", "Path must be /memories or start with /memories/, got: /memoriesfoo")
    assert "foo" not in pair.trees()[0]


@pytest.mark.dates
def test_missing_new_str_deletes_where_sdk_crashes(pair: Pair) -> None:
    pair.both(create(NOTES, "keep drop keep"))
    cmd = {"command": "str_replace", "path": NOTES, "old_str": " drop"}
    ours, sdk = pair.both(cmd)
    assert sdk[0] == "exc:TypeError"
    assert ours[0] == "ok"
    assert (pair.ours_root / "notes.md").read_text() == "keep keep"


def test_non_utf8_is_a_clear_error(pair: Pair) -> None:
    for root in (pair.ours_root, pair.sdk_root):
        (root / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    ours, sdk = pair.both(view(f"{M}/bin.dat"))
    assert sdk[0] == "exc:UnicodeDecodeError"
    assert ours[0] == "err"
    assert ours[1].startswith("The file /memories/bin.dat is not UTF-8 text (9 bytes)")


@pytest.mark.dates
def test_empty_old_str_refused(pair: Pair) -> None:
    pair.both(create(NOTES, "abc"))
    ours, sdk = pair.both(replace(NOTES, "", "x"))
    assert sdk == (
        "err",
        "No replacement was performed. Multiple occurrences of old_str `` in lines: "
        "1, 1, 1, 1. Please ensure it is unique",
    )
    assert ours[0] == "err" and "old_str is empty" in ours[1]


def test_rename_missing_source_leaves_no_directories(pair: Pair) -> None:
    ours, sdk = pair.both(rename(f"{M}/nope.md", f"{M}/new/dir/x.md"))
    assert ours == sdk == ("err", "The path /memories/nope.md does not exist")
    ours_tree, sdk_tree = pair.trees()
    assert ours_tree == {}
    assert sdk_tree == {"new": None, "new/dir": None}  # the SDK leaves these behind


@pytest.mark.dates
def test_rename_into_itself_is_a_clear_error(pair: Pair) -> None:
    pair.both(create(f"{M}/d/a.md", "A"))
    ours, sdk = pair.both(rename(f"{M}/d", f"{M}/d/sub/d2"))
    assert sdk[0] == "exc:OSError"
    assert ours == ("err", "Cannot move /memories/d into itself (/memories/d/sub/d2)")


@pytest.mark.dates
def test_inside_traversal_refused(pair: Pair) -> None:
    pair.both(create(f"{M}/a/x.md", "x"))
    ours, sdk = pair.both(view(f"{M}/a/../a/x.md"))
    assert sdk[0] == "ok"
    assert ours[0] == "err" and "'..'" in ours[1]


def test_missing_fields_are_tool_errors(pair: Pair) -> None:
    ours, sdk = pair.both({"command": "create", "path": f"{M}/a.md"})
    assert sdk[0] == "exc:AttributeError"  # after the SDK has created an empty file
    assert ours == ("err", "Missing required field `file_text` for the create command")
    assert pair.trees()[0] == {}


@pytest.mark.dates
def test_ill_typed_view_range_is_a_tool_error(pair: Pair) -> None:
    pair.both(create(NOTES, TEN))
    for bad in ([1], [1, 2, 3], ["1", 2], [True, 2], "1-3"):
        ours, _ = pair.both({"command": "view", "path": NOTES, "view_range": bad})
        assert ours[0] == "err" and "view_range" in ours[1], bad


@pytest.mark.dates
def test_create_under_a_file_is_a_clear_error(pair: Pair) -> None:
    pair.both(create(NOTES, "x"))
    ours, sdk = pair.both(create(f"{NOTES}/child.md", "y"))
    assert sdk[0] == "exc:NotADirectoryError"
    assert ours == (
        "err",
        "Cannot use /memories/notes.md/child.md: one of its parent directories is a file",
    )
