"""SyntaxTreeChunker on Ruby, PHP, C#, Kotlin, Scala, Swift, Elixir, Haskell, Lua, Zig, Bash, C and C++:
the same records as the six, with symbols qualified as each language writes them."""

from __future__ import annotations

import pytest
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.syntax_tree import SyntaxTreeChunker
from codeground.components.chunkers.text import PARSED_AS_TEXT
from codeground.components.records import line_of
from tests.conftest import FIXTURES

MORE = FIXTURES / "more_languages"


def chunk(path: str, data: bytes) -> dict:
    return SyntaxTreeChunker().run(sources=[ByteStream(data, meta={"file_path": path})])


def fixture(name: str) -> tuple[list, str]:
    data = (MORE / name).read_bytes()
    out = chunk(name, data)
    assert out["failed"] == []
    return out["documents"], data.decode()


def table(docs) -> list[tuple[str, str, int, int]]:
    return [(d.meta["symbol"], d.meta["source_type"], d.meta["start_line"], d.meta["end_line"]) for d in docs]


# (symbol, type, first line, last line) of every record: nested types, generics, overloads,
# extensions, anonymous functions (which stay inside their definition), doc comments as `api`
EXPECTED = {
    "Shapes.cs": [
        ("App.Geometry.Circle", "api", 5, 7),
        ("App.Geometry.Circle", "impl", 8, 8),
        ("App.Geometry.Circle.DefaultRadius", "api", 9, 10),
        ("App.Geometry.Circle", "impl", 12, 12),
        ("App.Geometry.Circle.Circle", "impl", 14, 14),
        ("App.Geometry.Circle.Area", "api", 16, 17),
        ("App.Geometry.Circle.Area", "impl", 18, 20),
        ("App.Geometry.Circle.Scale", "impl", 22, 22),
        ("App.Geometry.Circle.Scale", "impl", 23, 23),
        ("App.Geometry.Circle.Radius", "impl", 25, 25),
        ("App.Geometry.Circle.Unit", "impl", 27, 27),
        ("App.Geometry.IHasArea", "impl", 30, 31),
        ("App.Geometry.IHasArea.Area", "impl", 32, 32),
        ("App.Geometry.Point", "impl", 35, 35),
        ("App.Geometry.CircleExtensions", "impl", 37, 38),
        ("App.Geometry.CircleExtensions.Diameter", "impl", 39, 39),
    ],
    "Shapes.hs": [
        ("Shapes", "module", 1, 8),
        ("Shape", "api", 10, 14),
        ("Radius", "impl", 16, 16),
        ("Point", "impl", 18, 18),
        ("HasArea", "api", 20, 21),
        ("HasArea.perimeter", "impl", 22, 24),
        ("Shape.areaOf", "impl", 27, 27),
        ("area", "api", 29, 32),
        ("largest", "impl", 34, 36),
        ("origin", "impl", 38, 39),
    ],
    "Shapes.kt": [
        ("DEFAULT_RADIUS", "api", 5, 6),
        ("Circle", "api", 8, 12),
        ("Circle.area", "api", 13, 14),
        ("Circle.area", "impl", 15, 16),
        ("Circle.scale", "impl", 18, 18),
        ("Circle.scale", "impl", 19, 19),
        ("Circle.unit", "impl", 22, 22),
        ("Circle.Unit", "impl", 25, 25),
        ("HasArea", "impl", 28, 28),
        ("HasArea.area", "impl", 29, 29),
        ("Registry", "impl", 32, 34),
        ("Point", "impl", 36, 36),
        ("Circle.diameter", "impl", 38, 38),
        ("maxOf", "impl", 40, 40),
    ],
    "Shapes.php": [
        ("Shapes", "module", 1, 7),
        ("App\\Geometry\\Circle", "api", 9, 13),
        ("App\\Geometry\\Circle", "impl", 14, 17),
        ("App\\Geometry\\Circle::__construct", "api", 19, 20),
        ("App\\Geometry\\Circle::__construct", "impl", 21, 23),
        ("App\\Geometry\\Circle::area", "impl", 25, 28),
        ("App\\Geometry\\Circle::unit", "impl", 30, 33),
        ("App\\Geometry\\HasArea", "impl", 36, 37),
        ("App\\Geometry\\HasArea::area", "impl", 38, 38),
        ("App\\Geometry\\Scales", "impl", 41, 42),
        ("App\\Geometry\\Scales::scale", "impl", 43, 46),
        ("App\\Geometry\\Unit", "impl", 49, 51),
        ("App\\Geometry\\Unit::label", "impl", 53, 56),
        ("App\\Geometry\\distance", "impl", 59, 63),
    ],
    "Shapes.scala": [
        ("Circle", "api", 5, 6),
        ("Circle.area", "api", 7, 8),
        ("Circle.scale", "impl", 10, 10),
        ("Circle.scale", "impl", 11, 11),
        ("Circle", "impl", 14, 15),
        ("Circle.unit", "impl", 17, 17),
        ("HasArea", "impl", 20, 20),
        ("HasArea.area", "impl", 21, 21),
        ("Box", "impl", 24, 24),
        ("Box.Lid", "impl", 25, 25),
        ("Unit", "impl", 28, 30),
        ("Circle", "impl", 32, 32),
        ("Circle.diameter", "impl", 33, 33),
        ("distance", "impl", 35, 36),
    ],
    "Shapes.swift": [
        ("Circle", "api", 3, 5),
        ("Circle.defaultRadius", "api", 6, 7),
        ("Circle", "impl", 9, 9),
        ("Circle.init", "impl", 11, 13),
        ("Circle.area", "api", 15, 16),
        ("Circle.area", "impl", 17, 18),
        ("Circle.scale", "impl", 20, 20),
        ("Circle.scale", "impl", 21, 21),
        ("Circle.Unit", "impl", 23, 25),
        ("HasArea", "impl", 28, 28),
        ("HasArea.area", "impl", 29, 29),
        ("Circle", "impl", 32, 33),
        ("Circle.grown", "impl", 35, 35),
        ("Direction", "impl", 38, 39),
        ("Direction.flipped", "impl", 41, 41),
        ("distance", "impl", 44, 47),
    ],
    "build.sh": [
        ("build", "module", 1, 4),
        ("log", "api", 6, 7),
        ("log", "impl", 8, 9),
        ("build_all", "impl", 11, 14),
        ("cleanup", "impl", 16, 16),
        ("build", "module", 18, 18),
    ],
    "shapes.c": [
        ("shapes", "module", 1, 4),
        ("circle_area", "api", 6, 7),
        ("circle_area", "impl", 8, 10),
        ("circle_scale", "impl", 12, 16),
        ("main", "impl", 18, 21),
    ],
    "shapes.cpp": [
        ("geometry::Circle", "api", 6, 7),
        ("geometry::Circle", "impl", 8, 8),
        ("geometry::Circle::Circle", "impl", 9, 9),
        ("geometry::Circle::area", "api", 11, 12),
        ("geometry::Circle::scale", "impl", 14, 14),
        ("geometry::Circle::scale", "impl", 15, 15),
        ("geometry::Circle", "impl", 17, 22),
        ("geometry::Circle::area", "impl", 25, 27),
        ("geometry::largest", "impl", 29, 33),
        ("geometry::detail::square", "impl", 36, 36),
        ("geometry", "impl", 37, 37),
        ("shapes", "module", 39, 39),
        ("operator*", "impl", 41, 41),
    ],
    "shapes.ex": [
        ("Geometry.Circle", "impl", 1, 8),
        ("Geometry.Circle.area", "api", 10, 14),
        ("Geometry.Circle.scale", "impl", 16, 18),
        ("Geometry.Circle.scale", "impl", 20, 20),
        ("Geometry.Circle.square", "impl", 22, 22),
        ("Geometry.Circle.unit", "impl", 24, 26),
        ("Geometry.Circle.Unit", "impl", 28, 28),
        ("Geometry.Circle.Unit.factor", "impl", 29, 29),
        ("Geometry.HasArea", "impl", 33, 33),
        ("Geometry.HasArea.area", "impl", 34, 34),
        ("Geometry.HasArea.Geometry.Circle", "impl", 37, 37),
        ("Geometry.HasArea.Geometry.Circle.area", "impl", 38, 38),
    ],
    "shapes.h": [
        ("shapes", "module", 1, 4),
        ("SQUARE", "impl", 6, 6),
        ("circle_t", "api", 8, 11),
        ("point", "impl", 13, 15),
        ("unit", "impl", 17, 17),
        ("circle_area", "api", 19, 20),
    ],
    "shapes.lua": [
        ("shapes", "module", 1, 4),
        ("M.area", "api", 6, 8),
        ("M.area", "impl", 9, 10),
        ("M.Circle:scale", "impl", 12, 15),
        ("square", "impl", 17, 19),
        ("M.unit", "impl", 21, 23),
        ("distance", "impl", 25, 27),
        ("shapes", "module", 29, 29),
    ],
    "shapes.rb": [
        ("shapes", "module", 1, 3),
        ("Geometry", "impl", 5, 7),
        ("Geometry::Circle", "api", 9, 10),
        ("Geometry::Circle", "impl", 11, 11),
        ("Geometry::Circle#initialize", "api", 13, 14),
        ("Geometry::Circle#initialize", "impl", 15, 16),
        ("Geometry::Circle#area", "impl", 18, 20),
        ("Geometry::Circle.unit", "impl", 22, 24),
        ("Geometry::Circle::Unit", "impl", 26, 26),
        ("Geometry::Circle::Unit#factor", "impl", 27, 27),
        ("Geometry", "impl", 31, 31),
        ("Geometry.origin", "impl", 32, 34),
        ("Geometry::Square", "impl", 38, 38),
        ("Geometry::Square#area", "impl", 39, 39),
        ("shapes", "module", 42, 42),
    ],
    "shapes.zig": [
        ("shapes", "module", 1, 1),
        ("default_radius", "api", 3, 4),
        ("Circle", "api", 6, 7),
        ("Circle", "impl", 8, 8),
        ("Circle.area", "api", 10, 11),
        ("Circle.area", "impl", 12, 13),
        ("Circle.scale", "impl", 15, 17),
        ("Circle.Unit", "impl", 19, 19),
        ("Box", "impl", 22, 26),
        ("square", "impl", 28, 30),
        ("shapes", "module", 32, 34),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_one_record_per_definition_with_symbols_qualified_as_the_language_writes_them(name):
    docs, _ = fixture(name)
    assert table(docs) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_record_is_the_exact_slice_of_the_file_it_cites(name):
    docs, text = fixture(name)
    for doc in docs:
        start, end = doc.meta["start_char"], doc.meta["end_char"]
        assert doc.content == text[start:end]
        assert doc.meta["start_line"] == line_of(text, start)
        assert doc.meta["end_line"] == line_of(text, end - 1)
    assert len({d.id for d in docs}) == len(docs)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_records_of_a_file_never_overlap(name):
    docs, _ = fixture(name)
    spans = sorted((d.meta["start_char"], d.meta["end_char"]) for d in docs)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


BROKEN = {
    "a.rb": b"class A\n  def f(\nend\n",
    "a.php": b"<?php\nfunction f( {\n",
    "a.cs": b"class A { void M( }\n",
    "a.kt": b"fun f( {\n",
    "a.kts": b"val x = (\n",
    "a.scala": b"def f( =\n",
    "a.swift": b"func f( {\n",
    "a.ex": b"defmodule A do\n  def f(\nend\n",
    "a.exs": b"defmodule A do\n",
    "a.hs": b"f x = = 1\n",
    "a.lua": b"function f(\n",
    "a.zig": b"fn f( {\n",
    "a.sh": b"f() {\n",
    "a.bash": b"if then fi\n",
    "a.c": b"int f( {\n",
    "a.h": b"int f( {\n",
    "a.cpp": b"class A { void f( };\n",
    "a.hpp": b"namespace { int f( }\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_file_that_does_not_parse_becomes_text_records_and_is_counted(name):
    out = chunk(name, BROKEN[name])
    assert out["failed"] == [[name, PARSED_AS_TEXT]]
    assert [d.meta["source_type"] for d in out["documents"]] == ["text"]
    assert out["documents"][0].content.strip() == BROKEN[name].decode().strip()


def test_a_cpp_header_named_dot_h_is_parsed_as_cpp():
    src = b"namespace geo {\n/// A box.\nclass Box {\n public:\n  int size() const { return 1; }\n};\n}\n"
    out = chunk("box.h", src)
    assert out["failed"] == []
    assert [(d.meta["symbol"], d.meta["source_type"]) for d in out["documents"]] == [
        ("geo::Box", "api"),
        ("geo::Box", "impl"),
        ("geo::Box::size", "impl"),
    ]


def test_a_ruby_doc_comment_is_the_searchable_view_and_the_body_is_carried():
    docs, text = fixture("shapes.rb")
    api, body = (d for d in docs if d.meta["symbol"] == "Geometry::Circle#initialize")
    assert api.content == "    # Make a circle.\n    def initialize(radius = DEFAULT_RADIUS)"
    assert api.meta["impl"] == text[api.meta["start_char"] : body.meta["end_char"]]
    assert body.meta["body_of"] == api.id


def test_an_elixir_doc_attribute_documents_the_def_below_it():
    docs, _ = fixture("shapes.ex")
    (api,) = (d for d in docs if d.meta["symbol"] == "Geometry.Circle.area")
    assert api.meta["source_type"] == "api" and api.content.startswith('  @doc """')
    assert "def area(" in api.content


def test_haskell_equations_of_one_function_and_its_signature_are_one_record():
    docs, _ = fixture("Shapes.hs")
    (area,) = (d for d in docs if d.meta["symbol"] == "area")
    assert area.content.splitlines() == [
        "-- | The area of a shape.",
        "area :: Shape -> Double",
        "area (Circle r) = pi * r * r",
        "area (Square s) = s * s",
    ]


def test_a_php_namespace_line_qualifies_the_rest_of_the_file_and_a_block_its_own_body():
    block = b"<?php\nnamespace A\\B {\n  class C { function m() {} }\n}\n"
    assert [d.meta["symbol"] for d in chunk("n.php", block)["documents"]] == ["A\\B\\C", "A\\B\\C::m"]
    line = b"<?php\nnamespace A\\B;\n\nclass C { function m() {} }\n"
    assert [d.meta["symbol"] for d in chunk("l.php", line)["documents"]] == ["A\\B\\C", "A\\B\\C::m"]


def test_a_csharp_file_scoped_namespace_qualifies_the_types_after_it():
    src = b"namespace App.Geometry;\n\npublic class A\n{\n    public void M() { }\n}\n"
    docs = chunk("A.cs", src)["documents"]
    assert [d.meta["symbol"] for d in docs] == ["App.Geometry.A", "App.Geometry.A.M"]


def test_a_scala_extension_with_several_methods_names_each_after_the_extended_type():
    src = b"extension (c: Circle)\n  def a: Int = 1\n  def b: Int = 2\n"
    assert [d.meta["symbol"] for d in chunk("e.scala", src)["documents"]] == [
        "Circle",
        "Circle.a",
        "Circle.b",
    ]


def test_three_equations_of_one_haskell_function_are_one_record_and_the_next_function_its_own():
    src = b"f :: Int -> Int\nf 0 = 1\nf 1 = 1\nf n = n * f (n - 1)\ng :: Int\ng = 2\n"
    docs = chunk("F.hs", src)["documents"]
    spans = [(d.meta["symbol"], d.meta["start_line"], d.meta["end_line"]) for d in docs]
    assert spans == [("f", 1, 4), ("g", 5, 6)]
