"""The grounding check on each of the 13 languages the syntax-tree chunker added (issue 58): a member
written as that language writes it is known, an invented member of a real type is flagged, and the
language's standard names are allowed only in a repository written in that language."""

from __future__ import annotations

import re

import pytest
from haystack.dataclasses import ByteStream, ChatMessage

from codeground.components.chunkers.syntax_tree import SyntaxTreeChunker
from codeground.components.grounding.checker import GroundingChecker
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import FIXTURES

MORE = FIXTURES / "more_languages"

# fixture: (a real member as the language writes it, an invented member of a real type, a standard name)
CASES = {
    "shapes.rb": ("Geometry::Circle#area", "Geometry::Circle#perimeter", "Math::PI"),
    "Shapes.php": ("Circle::area", "Circle::perimeter", "InvalidArgumentException"),
    "Shapes.cs": ("Circle.Area", "Circle.Perimeter", "Console.WriteLine"),
    "Shapes.kt": ("Circle.area", "Circle.perimeter", "IllegalArgumentException"),
    "Shapes.scala": ("Circle.area", "Circle.perimeter", "Option.empty"),
    "Shapes.swift": ("Circle.area", "Circle.perimeter", "CustomStringConvertible"),
    "shapes.ex": ("Geometry.Circle.area", "Geometry.Circle.perimeter", "GenServer.start_link"),
    "Shapes.hs": ("HasArea.perimeter", "HasArea.perimeterOf", "Data.Maybe"),
    "shapes.lua": ("M.area", "M.perimeter", "string.format"),
    "shapes.zig": ("Circle.area", "Circle.perimeter", "std.mem.Allocator"),
    "build.sh": ("build_all", "build_everything", "mkdir"),
    "shapes.c": ("circle_area", "circle_perimeter", "malloc"),
    "shapes.cpp": ("geometry::Circle::area", "geometry::Circle::perimeter", "std::vector"),
}


def _last(name: str) -> str:
    """The member's own name, whatever the separators (``A::B#c`` → ``c``)."""
    return re.split(r"::|#|\.", name)[-1]


def _store(name: str) -> SQLiteBM25DocumentStore:
    data = (MORE / name).read_bytes()
    out = SyntaxTreeChunker().run(sources=[ByteStream(data, meta={"file_path": name})])
    assert out["failed"] == [] and out["documents"]
    store = SQLiteBM25DocumentStore()
    store.write_documents(out["documents"])
    return store


def _unknown(store: SQLiteBM25DocumentStore, answer: str) -> list[str]:
    checker = GroundingChecker(document_store=store)
    checker.warm_up()
    return checker.run(replies=[ChatMessage.from_assistant(answer)], documents=[])["grounding"]["unknown"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_invented_member_of_a_real_type_is_flagged_and_the_real_one_and_standard_names_are_not(name):
    real, invented, standard = CASES[name]
    answer = f"Call `{real}` and `{standard}`; `{invented}` would be new."
    unknown = _unknown(_store(name), answer)
    assert [_last(u) for u in unknown] == [_last(invented)]


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in ("shapes.c", "shapes.cpp")))
def test_a_languages_standard_names_are_not_allowed_in_a_repository_of_another_language(name):
    standard = CASES[name][2]
    other = "shapes.c" if not name.endswith(".c") else "shapes.rb"
    assert _unknown(_store(other), f"Use `{standard}` here.") != []
