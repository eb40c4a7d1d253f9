"""End to end over the shipped pipelines: the record of a symbol the question names, which BM25 ranks
below its callers and a page that repeats the question's words, is shown fourth (``query.yaml``'s
``SymbolReseater(seat=4)``), not in the last places as DESIGN.md's re-seating put it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine

QUESTION = "What is the signature of `ErrorMap`?"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("seat")
    repo = base / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "pkg" / "errors.py").write_text('class ErrorMap:\n    """Maps an issue to its message."""\n')
    for i in range(1, 7):  # callers that repeat the name and the question's words
        (repo / "pkg" / f"use{i}.py").write_text(
            f"def handler_{i}(issue):\n"
            f'    """What the signature of the error map means for handler {i}: it gets the issue."""\n'
            "    error_map = ErrorMap()\n"
            "    return error_map(issue) or ErrorMap()(issue) or describe_error_map(issue, ErrorMap)\n"
        )
    (repo / "docs" / "guide.md").write_text(
        "# Guide\n\n## What is the error map?\n\n"
        "What is the error map? The error map signature: the error map takes an issue.\n"
    )
    run_index(repo, base / "idx", DEFAULT_INDEX_PIPELINE)
    return base / "idx"


def _symbols(index_dir: Path, pipeline: Path) -> list[str]:
    engine = QueryEngine(index_dir, pipeline)
    return [d.meta.get("symbol") for d in engine.search(QUESTION, k=10).documents]


@pytest.fixture(scope="module")
def lowest(index_dir, tmp_path_factory) -> list[str]:
    """The same search with DESIGN.md's rule (``seat: null``): what the fused list alone shows."""
    overlay = tmp_path_factory.mktemp("lowest") / "lowest.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "extends": str(PIPELINES_DIR / "hybrid_norerank.yaml"),
                "set": {"components.reseat.init_parameters.seat": None},
            }
        )
    )
    return _symbols(index_dir, overlay)


def test_a_named_symbol_that_bm25_ranks_low_is_shown_fourth(index_dir, lowest):
    for name in ("query.yaml", "hybrid_norerank.yaml"):
        symbols = _symbols(index_dir, PIPELINES_DIR / name)
        assert symbols.index("ErrorMap") == 3, (name, symbols)
        # the fused list's first three keep their places (the page and two callers, as BM25 ranks them)
        assert symbols[:3] == lowest[:3], (name, symbols, lowest)
        assert "Guide > What is the error map?" in symbols[:3]


def test_without_a_seat_the_named_symbol_keeps_its_low_place(lowest):
    assert lowest.index("ErrorMap") > 3
