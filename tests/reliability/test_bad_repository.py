"""Bad repository content: indexing completes, each file is indexed or skipped with a counted
reason, nothing prints a traceback, and the good files' records are exactly what they are without
the bad ones.

One repository holds the sample repository plus every bad input of ``BAD_FILES``; it is indexed
once through ``codeground index`` (the real CLI, model and stores). Each row of the table is then
checked on its own against the index manifest and the stores.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeground.components.chunkers.text import PARSED_AS_TEXT
from codeground.components.records import line_of
from codeground.components.walker import RepositoryWalker
from tests.conftest import make_sample_repo
from tests.reliability.helpers import (
    assert_no_traceback,
    bm25_records,
    cg,
    index_table,
    manifest_of,
    search_file,
)

RUNNING_AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
OUTSIDE_TOKEN = "OUTSIDEONLYTOKEN"


@dataclass(frozen=True)
class Expect:
    """What must become of a file: ``indexed`` (with these symbols at least), or ``skipped`` /
    ``unparsed`` (read, no records) for a named reason."""

    verdict: str  # "indexed" | "skipped" | "unparsed" | "as_text"
    reason: str = ""
    symbols: tuple[str, ...] = ()


def indexed(*symbols: str) -> Expect:
    return Expect("indexed", symbols=symbols)


def skipped(reason: str) -> Expect:
    return Expect("skipped", reason)


def unparsed(reason: str) -> Expect:
    return Expect("unparsed", reason)


def as_text(reason: str) -> Expect:
    """Read, counted as unparsed for ``reason``, and indexed as text records all the same."""
    return Expect("as_text", reason)


def _write(data: bytes | str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)

    return make


def _sparse_50mb(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(b"x = 1\n")
        fh.truncate(50 * 1024 * 1024)  # sparse: instant, no 50 MB written


def _symlink(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)

    return make


def _symlink_outside(path: Path) -> None:
    outside = path.parents[2] / "outside"  # next to the repository, not in it
    outside.mkdir(exist_ok=True)
    (outside / "leak.py").write_text(f"def leak():\n    return '{OUTSIDE_TOKEN}'\n")
    os.symlink(outside / "leak.py", path)


def _symlink_outside_dir(path: Path) -> None:
    outside = path.parents[2] / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "leak.md").write_text(f"# Leak\n\n{OUTSIDE_TOKEN}\n")
    os.symlink(outside, path, target_is_directory=True)


def _unreadable(path: Path) -> None:
    path.write_text("def locked():\n    return 1\n")
    path.chmod(0)


def _notebook(cells: list, **top) -> str:
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, **top}, indent=1)


def _nested_classes(levels: int) -> str:
    lines = []
    for i in range(levels):
        pad = "    " * i
        lines += [f"{pad}class C{i}:", f'{pad}    """Level {i}."""']
    return "\n".join(lines) + "\n"


# 10,000 lines; short ones, so that the ~60 pieces it becomes stay cheap to embed
LONG_FUNCTION = "def long_function(x):\n" + "    0\n" * 9_998 + "    return x\n"
PY_OVER_SNIFF = "def before_nul():\n    return 1\n" + "# padding\n" * 1_000 + "X = '\x00'\n"
MD_OVER_SNIFF = "# Before\n\n" + "text line\n" * 1_000 + "after \x00 nul\n"

# (path in the repository, how to make it, what must become of it)
BAD_FILES: list[tuple[str, Callable[[Path], None], Expect]] = [
    ("bad/syntax_error.py", _write("def broken(:\n    return 1\n"), as_text(PARSED_AS_TEXT)),
    ("bad/nul_at_start.txt", _write(b"\x00\x00\x00text after nul bytes\n"), skipped("binary")),
    ("bad/nul_past_sniff_window.py", _write(PY_OVER_SNIFF), as_text(PARSED_AS_TEXT)),
    ("bad/nul_past_sniff_window.md", _write(MD_OVER_SNIFF), indexed("Before")),
    ("bad/huge_50mb.py", _sparse_50mb, skipped("too_large")),
    (
        "bad/binary_named.py",
        _write(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))),
        skipped("binary"),
    ),
    ("bad/latin1.py", _write("# caf\xe9 au lait\nx = 1\n".encode("latin-1")), skipped("not_utf8")),
    ("bad/utf16.md", _write("# Titre\n\ncafé\n".encode("utf-16")), skipped("binary")),
    (
        "bad/crlf.py",
        _write(
            "def crlf_f(a):\r\n    return a\r\n\r\n"
            "class CrlfK:\r\n    def m(self, x):\r\n        return x\r\n"
        ),
        indexed("crlf_f", "CrlfK", "CrlfK.m"),
    ),
    (
        "bad/mixed_endings.py",
        _write(
            '"""Doc."""\r\nX = 1\rdef mixed_f(a):\r\n    return a\n\rdef mixed_g(b):\r    """G."""\r'
            "    return b\r\nclass MixedK:\n    def m(self, x):\r        return x\n"
        ),
        indexed("mixed_f", "mixed_g", "MixedK.m"),
    ),
    (
        "bad/cr_only.py",
        _write("def cr_f(a):\r    return a\r\rdef cr_g(b):\r    return b\r"),
        indexed("cr_f", "cr_g"),
    ),
    ("bad/bom.py", _write("\ufeffdef bom_function(a):\n    return a\n"), indexed("bom_function")),
    ("bad/bom.md", _write("\ufeff# Bom Title\n\nBody text.\n"), indexed("Bom Title")),
    ("bad/crlf.md", _write("# Crlf Page\r\n\r\nText.\r\n\r\n## Part\r\n\r\nMore.\r\n"), indexed("Crlf Page")),
    (
        "bad/tabs.py",
        _write("class TabK:\n\tdef tab_m(self, x):\n\t\treturn x\n"),
        indexed("TabK", "TabK.tab_m"),
    ),
    (
        "bad/tabs_inconsistent.py",
        _write("def tab_mix(x):\n\tif x:\n        return 1\n\treturn 2\n"),
        indexed("tab_mix"),  # Python refuses the ambiguous tabs (TabError); tree-sitter reads them
    ),
    ("bad/long_function.py", _write(LONG_FUNCTION), indexed("long_function")),
    # a bundle is not source anyone asks about: skipped by its lines, whatever its name
    ("bad/minified.js", _write("var a=1;" * 1_500 + "\n"), skipped("minified")),
    ("bad/unparsable.ts", _write("export function broken( {\n  return 1;\n"), as_text(PARSED_AS_TEXT)),
    ("bad/nested_60.py", _write(_nested_classes(60)), indexed("C0", ".".join(f"C{i}" for i in range(60)))),
    # too deep for Python's parser (IndentationError past 100 levels), not for tree-sitter's
    ("bad/nested_120.py", _write(_nested_classes(120)), indexed("C0", ".".join(f"C{i}" for i in range(120)))),
    (
        "bad/nb_invalid_json.ipynb",
        _write('{"cells": [{"cell_type": "code", "source": "x ='),
        unparsed("malformed_notebook"),
    ),
    (
        "bad/nb_missing_cells.ipynb",
        _write('{"metadata": {}, "nbformat": 4, "nbformat_minor": 5}'),
        unparsed("malformed_notebook"),
    ),
    ("bad/nb_cell_not_object.ipynb", _write(_notebook([1, "two"])), unparsed("malformed_notebook")),
    (
        "bad/nb_source_string.ipynb",
        _write(
            _notebook(
                [
                    {"cell_type": "markdown", "metadata": {}, "source": "# Nb String\nintro"},
                    {"cell_type": "code", "metadata": {}, "source": "nb_string_call()", "outputs": []},
                ]
            )
        ),
        indexed("Nb String"),
    ),
    (
        "bad/nb_source_list.ipynb",
        _write(
            _notebook(
                [
                    {"cell_type": "markdown", "metadata": {}, "source": ["# Nb List\n", "intro"]},
                    {"cell_type": "code", "metadata": {}, "source": ["nb_list_call(\n", ")"], "outputs": []},
                ]
            )
        ),
        indexed("Nb List"),
    ),
    (
        "bad/nb_no_kernelspec.ipynb",
        _write(json.dumps({"cells": [{"cell_type": "code", "source": "no_kernel_call()", "outputs": []}]})),
        indexed("cell 1"),
    ),
    ("bad/empty.md", _write(""), skipped("empty")),
    ("bad/blank.md", _write("\n   \n\t\n"), skipped("empty")),
    ("bad/empty.py", _write(""), skipped("empty")),
    (
        "bad/no_headings.rst",
        _write("Just a paragraph of reST text.\nNo heading at all.\n"),
        indexed("no_headings"),
    ),
    ("bad/loop_a.py", _symlink("loop_b.py"), skipped("symlink")),
    ("bad/loop_b.py", _symlink("loop_a.py"), skipped("symlink")),
    ("bad/dir_loop", _symlink("."), skipped("symlink")),
    ("bad/outside_link.py", _symlink_outside, skipped("symlink")),
    ("bad/outside_dir", _symlink_outside_dir, skipped("symlink")),
    ("bad/dangling.py", _symlink("does_not_exist.py"), skipped("symlink")),
    ("bad/unreadable.py", _unreadable, skipped("unreadable")),
    ("bad/vanishing.py", _write("def vanishing():\n    return 1\n"), skipped("vanished")),
]
VANISHING = "bad/vanishing.py"


@pytest.fixture(scope="module")
def bad_index(tmp_path_factory):
    """``(repo, index_dir, cli result)``: the sample repository plus every bad file, indexed once.

    ``bad/vanishing.py`` is deleted by a hook after the walker listed it and before it reads it.
    """
    base = tmp_path_factory.mktemp("bad_repo")
    repo = make_sample_repo(base / "repo")
    for rel, make, _ in BAD_FILES:
        make(repo / rel)
    real_read = RepositoryWalker._read

    def read_after_delete(self, path, cap):
        if path.endswith(VANISHING):
            os.unlink(path)
        return real_read(self, path, cap)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(RepositoryWalker, "_read", read_after_delete)
        result = cg("index", repo, "--index-dir", base / "idx")
    yield repo, base / "idx", result
    (repo / "bad" / "unreadable.py").chmod(0o644)  # let pytest clean up


def test_indexing_a_repository_full_of_bad_files_completes_without_a_traceback(bad_index):
    _, index_dir, result = bad_index
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    assert manifest_of(index_dir).chunk_count > 0


@pytest.mark.parametrize(
    "rel,expect", [(rel, expect) for rel, _, expect in BAD_FILES], ids=[r for r, _, _ in BAD_FILES]
)
def test_every_bad_file_is_indexed_or_skipped_with_a_counted_reason(bad_index, rel, expect):
    repo, index_dir, _ = bad_index
    if rel == "bad/unreadable.py" and RUNNING_AS_ROOT:
        pytest.skip("running as root: chmod 000 does not stop root from reading the file")
    manifest = manifest_of(index_dir)
    skipped_files = dict(manifest.walk["skipped_files"])
    unparsed_files = manifest.walk["unparsed"]
    records = [r for r in bm25_records(index_dir).values() if r["meta"]["file_path"] == rel]

    if expect.verdict == "skipped":
        assert skipped_files.get(rel) == expect.reason, (rel, skipped_files.get(rel))
        assert rel not in manifest.files and not records
    elif expect.verdict == "unparsed":
        assert unparsed_files.get(rel) == expect.reason, (rel, unparsed_files.get(rel))
        assert manifest.files[rel].ids == [] and not records
    elif expect.verdict == "as_text":
        assert unparsed_files.get(rel) == expect.reason, (rel, unparsed_files.get(rel))
        assert records and {r["meta"]["source_type"] for r in records} == {"text"}
        text = (repo / rel).read_bytes().decode("utf-8")
        assert "".join(r["content"] for r in sorted(records, key=lambda r: r["meta"]["start_char"])) in text
    else:
        assert rel not in skipped_files and rel not in unparsed_files
        assert sorted(manifest.files[rel].ids) == sorted(i for i, _ in _ids(index_dir, rel))
        symbols = {r["meta"]["symbol"] for r in records}
        assert set(expect.symbols) <= symbols, (rel, sorted(symbols))
        if not rel.endswith(".ipynb"):
            text = (repo / rel).read_bytes().decode("utf-8")
            for r in records:
                meta = r["meta"]
                assert text[meta["start_char"] : meta["end_char"]] == r["content"], meta
                assert meta["start_line"] == line_of(text, meta["start_char"]), meta


def _ids(index_dir: Path, rel: str) -> list[tuple[str, dict]]:
    return [(i, r) for i, r in bm25_records(index_dir).items() if r["meta"]["file_path"] == rel]


def test_index_output_counts_every_skip_and_parse_failure_as_the_manifest_does(bad_index):
    _, index_dir, result = bad_index
    walk = manifest_of(index_dir).walk
    table = index_table(result)
    assert table["files seen"] == walk["seen"] == walk["indexed"] + sum(walk["skipped"].values())
    for reason, count in walk["skipped"].items():
        assert table[f"skipped: {reason}"] == count, reason
    for reason, count in walk["unparsed_counts"].items():
        what = "indexed as text" if reason == PARSED_AS_TEXT else "read, no records"
        assert table[f"{what}: {reason}"] == count, reason
    assert table["records total"] == manifest_of(index_dir).chunk_count
    # every bad input is accounted for by name
    expected = Counter((e.verdict, e.reason) for rel, _, e in BAD_FILES if e.verdict != "indexed")
    if RUNNING_AS_ROOT:
        expected[("skipped", "unreadable")] -= 1
    bad_skips = Counter(("skipped", why) for p, why in walk["skipped_files"] if p.startswith("bad/"))
    bad_unparsed = Counter(
        ("as_text" if why == "syntax_error_as_text" else "unparsed", why)
        for p, why in walk["unparsed"].items()
        if p.startswith("bad/")
    )
    assert bad_skips + bad_unparsed == +expected


def test_good_files_keep_exactly_their_records_next_to_bad_ones(bad_index, indexed_sample):
    _, clean_dir = indexed_sample
    _, index_dir, _ = bad_index
    clean = bm25_records(clean_dir)
    mixed = {
        i: r for i, r in bm25_records(index_dir).items() if not r["meta"]["file_path"].startswith("bad/")
    }
    assert mixed == clean
    clean_files = manifest_of(clean_dir).files
    mixed_files = manifest_of(index_dir).files
    assert {p: e for p, e in mixed_files.items() if not p.startswith("bad/")} == clean_files


def test_long_function_is_cut_into_pieces_that_tile_it_exactly(bad_index):
    repo, index_dir, _ = bad_index
    pieces = sorted(
        (r for _, r in _ids(index_dir, "bad/long_function.py")), key=lambda r: r["meta"]["start_char"]
    )
    assert len(pieces) > 50 and all(len(r["content"]) <= 1000 for r in pieces)
    assert "".join(r["content"] for r in pieces) == LONG_FUNCTION.rstrip("\n")
    assert pieces[-1]["meta"]["end_line"] == 10_000


def test_nothing_behind_a_symlink_is_indexed(bad_index):
    _, index_dir, _ = bad_index
    gen_bytes = b"".join(p.read_bytes() for p in index_dir.rglob("*") if p.is_file())
    assert OUTSIDE_TOKEN.encode() not in gen_bytes


def test_search_still_finds_good_and_odd_files_in_the_bad_repository(bad_index, tmp_path):
    _, index_dir, _ = bad_index
    expected = {
        "Trainer.fit": "pkg/trainer.py",
        "bom_function": "bad/bom.py",
        "mixed_g": "bad/mixed_endings.py",
        "CrlfK.m": "bad/crlf.py",
        "no_kernel_call": "bad/nb_no_kernelspec.ipynb",
    }
    found = search_file(index_dir, list(expected), tmp_path, k=3)
    assert [sources[0]["file_path"] for sources in found] == list(expected.values())


def test_an_empty_repository_indexes_to_zero_records_and_search_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    result = cg("index", tmp_path / "empty", "--index-dir", tmp_path / "idx")
    assert result.exit_code == 0, result.output
    assert_no_traceback(result)
    assert index_table(result)["records total"] == 0 and manifest_of(tmp_path / "idx").chunk_count == 0
    found = cg("search", "anything at all", "--index-dir", tmp_path / "idx")
    assert found.exit_code == 0 and "no sources found" in found.stdout
    assert_no_traceback(found)
