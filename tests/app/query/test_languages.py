"""JS/TS, Go, Rust and Java end to end: indexed by the shipped pipeline, found by the symbol a
question names, and checked by the grounding check (real stores, real model, fake Ollama)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeground.app.index.indexing import run_index
from codeground.app.pipeline.loader import DEFAULT_INDEX_PIPELINE, PIPELINES_DIR
from codeground.app.query.engine import QueryEngine
from tests.conftest import FIXTURES

QUERY = PIPELINES_DIR / "query.yaml"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path, object]:
    base = tmp_path_factory.mktemp("languages")
    repo = base / "repo"
    shutil.copytree(FIXTURES / "languages", repo)
    (repo / "broken.go").write_text("package broken\n\nfunc Broken( {\n")
    (repo / "web" / "node_modules" / "dep").mkdir(parents=True)
    (repo / "web" / "node_modules" / "dep" / "index.js").write_text("export const dep = 1;\n")
    (repo / "web" / "app.min.js").write_text("function a(){}\n")
    result = run_index(repo, base / "idx", DEFAULT_INDEX_PIPELINE)
    return repo, base / "idx", result


@pytest.fixture(scope="module")
def engine(indexed) -> QueryEngine:
    return QueryEngine(indexed[1], QUERY)


def test_every_language_file_is_indexed_structurally_and_the_unparsable_one_as_text(indexed):
    _, _, result = indexed
    assert result.walk["unparsed"] == {"broken.go": "syntax_error_as_text"}
    assert result.walk["pruned"] == {"node_modules": 1}
    assert result.walk["skipped"].get("minified") == 1
    assert {"api", "impl", "module", "text"} <= set(result.records_by_type)


@pytest.mark.parametrize(
    "question, symbol",
    [
        ("What does Server.Start return?", "Server.Start"),
        ("How do I call Point::new?", "Point.new"),
        ("What does Circle#area compute?", "Circle.area"),
        ("What does getUserById return?", "getUserById"),
        ("Which overloads does `Circle.of` have?", "Circle.of"),
    ],
)
def test_a_question_naming_a_symbol_finds_its_record_first(engine, question, symbol):
    assert engine.search(question, k=5).documents[0].meta["symbol"] == symbol


@pytest.mark.parametrize(
    "reply, invented",
    [
        ("Call `s.Start()`; `Server.StartTLS()` also exists, via `http.HandleFunc`.", "Server.StartTLS"),
        ("Use `Point::new(1, 2)` or `Point::origin()`; `Vec::with_capacity(2)` holds them.", "Point.origin"),
        ("Call `circle.area()` or `Circle.perimeter()`; see `System.out.println`.", "Circle.perimeter"),
        ("`await getUserById(id)` or `getUserByEmail(e)`; log with `console.log`.", "getUserByEmail"),
    ],
)
def test_an_invented_method_on_a_real_type_is_flagged_and_standard_names_are_not(
    indexed, fake_ollama, monkeypatch, reply, invented
):
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.configure(reply=reply)
    result = QueryEngine(indexed[1], QUERY).answer("How do I use the server, points, circles and users?")
    assert result.grounding["unknown"] == [invented]
