"""The 13 languages of language_table: their grammar wheels load, the walker and the index pipeline route
their files to the tree-sitter chunker, their test layouts are priors, generated folders are pruned,
and a question naming a qualified symbol finds its defining record first."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.syntax_tree import SyntaxTreeChunker
from codeground.components.generated_dirs import GENERATED_DIR_NAMES
from codeground.components.language_table import LANGUAGE_ROWS
from codeground.components.languages import LANGUAGES, grammar, language_for
from codeground.components.retrievers.bm25 import BM25Retriever
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from codeground.components.walker import RepositoryWalker
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
NEW = [row["name"] for row in LANGUAGE_ROWS]


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang.name in NEW], ids=lambda lang: lang.name)
def test_every_grammar_wheel_loads_with_the_installed_tree_sitter(lang):
    assert grammar(lang.grammar, lang.entry) is not None
    assert all(kind in lang.definitions for kind in lang.containers)


@pytest.mark.parametrize(
    "path, name",
    [
        ("app/models/user.rb", "ruby"),
        ("src/Geometry/Circle.php", "php"),
        ("src/App/Circle.cs", "csharp"),
        ("app/src/main/kotlin/Circle.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("src/main/scala/Circle.scala", "scala"),
        ("Sources/Geometry/Circle.swift", "swift"),
        ("lib/geometry/circle.ex", "elixir"),
        ("test/circle_test.exs", "elixir"),
        ("src/Geometry.hs", "haskell"),
        ("lua/plugin/init.lua", "lua"),
        ("src/main.zig", "zig"),
        ("scripts/build.sh", "bash"),
        ("src/shapes.c", "c"),
        ("include/shapes.h", "c"),
        ("src/shapes.cpp", "cpp"),
        ("src/shapes.cc", "cpp"),
        ("include/shapes.hpp", "cpp"),
    ],
)
def test_each_suffix_routes_to_its_language(path, name):
    assert language_for(path).name == name


def test_the_index_pipeline_routes_every_parsed_language_to_the_tree_sitter_chunker():
    data = yaml.safe_load((ROOT / "pipelines" / "index.yaml").read_text())
    code = {c["sender"].split(".", 1)[1] for c in data["connections"] if c["receiver"] == "code.sources"}
    for lang in LANGUAGES:
        assert any(re.fullmatch(pattern, lang.mime) for pattern in code), lang.name


@pytest.mark.parametrize(
    "path",
    [
        "spec/models/user_spec.rb",
        "test/models/user_test.rb",
        "tests/Unit/CircleTest.php",
        "App.Tests/CircleTests.cs",
        "app/src/test/kotlin/CircleTest.kt",
        "src/test/scala/CircleSpec.scala",
        "core/CircleSuite.scala",
        "Tests/GeometryTests/CircleTests.swift",
        "test/geometry/circle_test.exs",
        "test/Geometry/ShapesSpec.hs",
        "spec/shapes_spec.lua",
        "src/shapes_test.zig",
        "test/build.bats",
        "tests/test_shapes.c",
        "src/shapes_test.cc",
    ],
)
def test_each_language_s_test_layout_is_a_test_path(path):
    assert any(lang.is_test(path) for lang in LANGUAGES)


@pytest.mark.parametrize(
    "path", ["app/models/user.rb", "src/Circle.php", "src/App/Circle.cs", "lua/shapes.lua", "src/shapes.c"]
)
def test_source_files_are_not_test_paths(path):
    assert not any(lang.is_test(path) for lang in LANGUAGES)


def test_generated_and_vendored_folders_are_pruned_and_counted_but_bin_is_source(tmp_path):
    for folder in ("Pods/Alamofire", "_build/dev", "deps/plug", ".zig-cache/o", "obj/Debug", ".stack-work/x"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "gen.rb").write_text("def generated; end\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "setup.sh").write_text("setup() { echo hi; }\n")
    (tmp_path / "lib.rb").write_text("def real; end\n")
    (tmp_path / "t.bats").write_text('@test "x" { true; }\n')
    result = RepositoryWalker().run(root=str(tmp_path))
    files = {s.meta["file_path"]: s.mime_type for s in result["files"]}
    assert files == {"bin/setup.sh": "text/x-shellscript", "lib.rb": "text/x-ruby", "t.bats": "text/plain"}
    assert set(result["report"]["pruned"]) == {"Pods", "_build", "deps", ".zig-cache", "obj", ".stack-work"}
    assert {"Pods", "_build", "deps", "zig-cache", ".build", "dist-newstyle"} <= GENERATED_DIR_NAMES


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> SQLiteBM25DocumentStore:
    repo = tmp_path_factory.mktemp("more") / "repo"
    shutil.copytree(FIXTURES / "more_languages", repo)
    streams = RepositoryWalker().run(root=str(repo))["files"]
    docs = SyntaxTreeChunker().run(sources=streams)["documents"]
    bm25 = SQLiteBM25DocumentStore()
    bm25.write_documents(docs)
    return bm25


@pytest.mark.parametrize(
    "question, symbol",
    [
        ("What does Geometry::Circle#initialize do?", "Geometry::Circle#initialize"),
        ("How is App\\Geometry\\Circle::__construct used?", "App\\Geometry\\Circle::__construct"),
        (
            "What does App.Geometry.CircleExtensions.Diameter return?",
            "App.Geometry.CircleExtensions.Diameter",
        ),
        ("What does Geometry.Circle.square compute?", "Geometry.Circle.square"),
        ("How does geometry::detail::square work?", "geometry::detail::square"),
        ("What does M.Circle:scale return?", "M.Circle:scale"),
        ("What does HasArea.perimeter default to?", "HasArea.perimeter"),
        ("What does Box.Lid hold?", "Box.Lid"),  # scala
        ("What does Direction.flipped return?", "Direction.flipped"),  # swift
        ("What does maxOf compare?", "maxOf"),  # kotlin
        ("What is default_radius in shapes.zig?", "default_radius"),  # zig (DEFAULT_RADIUS is Kotlin's)
        ("What does build_all run?", "build_all"),  # bash
        ("How does circle_scale change the radius?", "circle_scale"),  # c
    ],
)
def test_a_question_naming_a_qualified_symbol_finds_its_defining_record_first(store, question, symbol):
    found = BM25Retriever(document_store=store, top_k=5).run(query=question)["documents"]
    assert found[0].meta["symbol"] == symbol


def test_an_unparsable_file_of_a_new_language_is_indexed_as_text_never_dropped():
    out = SyntaxTreeChunker().run(
        sources=[ByteStream(b"class A\n  def f(\nend\n", meta={"file_path": "a.rb"})]
    )
    assert out["failed"] == [["a.rb", "syntax_error_as_text"]]
    assert out["documents"][0].meta["source_type"] == "text"
