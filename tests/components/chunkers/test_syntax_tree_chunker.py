"""SyntaxTreeChunker: JS/TS, Go, Rust and Java files become the same records as Python files."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack.dataclasses import ByteStream

from codeground.components.chunkers.syntax_tree import SyntaxTreeChunker
from codeground.components.chunkers.text import PARSED_AS_TEXT
from codeground.components.records import line_of
from tests.conftest import FIXTURES

LANGS = FIXTURES / "languages"
JAVA = "src/main/java/org/shapes/Circle.java"


def chunk(path: str, data: bytes) -> dict:
    return SyntaxTreeChunker().run(sources=[ByteStream(data, meta={"file_path": path})])


def fixture(rel: str) -> tuple[list, str]:
    data = (LANGS / rel).read_bytes()
    out = chunk(rel, data)
    assert out["failed"] == []
    return out["documents"], data.decode()


def table(docs) -> list[tuple[str, str, int, int]]:
    return [(d.meta["symbol"], d.meta["source_type"], d.meta["start_line"], d.meta["end_line"]) for d in docs]


EXPECTED = {
    "shapes.ts": [
        ("DEFAULT_RADIUS", "api", 3, 4),  # exported const: API
        ("Shape", "api", 6, 9),  # JSDoc + interface header
        ("Shape", "impl", 10, 11),
        ("MaybeShape", "api", 13, 14),  # type alias
        ("Kind", "impl", 16, 19),  # enum, no doc comment
        ("Circle", "api", 21, 23),  # doc + decorator + generic class header
        ("Circle", "impl", 24, 24),  # its own fields
        ("Circle.area", "api", 26, 27),
        ("Circle.area", "impl", 28, 29),
        ("Circle.of", "impl", 31, 31),  # three overloads, three records
        ("Circle.of", "impl", 32, 32),
        ("Circle.of", "impl", 33, 35),
        ("Circle", "impl", 37, 37),  # class text between and after its methods is not lost
        ("getUserById", "api", 40, 43),  # arrow function assigned to a const
        ("scale", "impl", 45, 45),
        ("scale", "impl", 46, 46),
        ("scale", "impl", 47, 49),
        ("Geometry.distance", "impl", 52, 54),  # namespace member
        ("default", "impl", 57, 59),  # anonymous default export
        ("shapes", "module", 61, 61),  # module text between definitions; the import is skipped
    ],
    "server.go": [
        ("server", "module", 1, 7),  # package doc comment, package, imports
        ("DefaultAddr", "api", 9, 10),  # documented var
        ("server", "module", 12, 15),  # undocumented const block
        ("Server", "api", 17, 21),  # two `//` lines directly above
        ("Handler", "api", 24, 25),  # members of a grouped type declaration
        ("Pair", "impl", 26, 29),  # generic
        ("NewServer", "api", 32, 33),
        ("NewServer", "impl", 34, 35),
        ("Server.Start", "api", 37, 38),  # pointer receiver: Type.Method
        ("Server.Start", "impl", 39, 43),  # the closure inside stays in its function
        ("Pair.Key", "impl", 45, 45),  # generic receiver
    ],
    "shapes.rs": [
        ("shapes", "module", 1, 2),  # `//!` crate doc
        ("SQUARE_SIDES", "api", 4, 5),
        ("Point", "api", 7, 9),  # `///` + attribute + generic struct header
        ("Point", "impl", 10, 12),
        ("Point.new", "api", 15, 16),  # inside `impl<T> Point<T>`
        ("Point.new", "impl", 17, 18),
        ("Point.x", "impl", 20, 22),
        ("Point.fmt", "impl", 26, 28),  # inside `impl fmt::Display for Point<i32>`
        ("Shape", "api", 31, 32),  # trait
        ("Shape.area", "api", 33, 34),
        ("Kind", "impl", 37, 40),
        ("geometry.distance", "impl", 43, 45),  # mod member
        ("square", "impl", 48, 52),  # macro_rules!
    ],
    JAVA: [
        ("Circle", "api", 5, 9),  # Javadoc + annotation + generic class header
        ("Circle.DEFAULT_RADIUS", "api", 10, 11),  # documented field
        ("Circle", "impl", 13, 13),  # undocumented field: class text
        ("Circle.Circle", "api", 15, 16),  # constructor
        ("Circle.Circle", "impl", 17, 18),
        ("Circle.area", "api", 20, 22),  # @Override between Javadoc and method
        ("Circle.area", "impl", 23, 24),
        ("Circle.scale", "impl", 26, 28),  # overloads
        ("Circle.scale", "impl", 30, 32),
        ("Circle.wrap", "impl", 34, 36),  # generic method
        ("Circle.Visitor", "impl", 38, 38),  # nested interface
        ("Circle.Visitor.visit", "impl", 39, 39),
        ("Circle.Unit", "impl", 42, 43),  # nested enum with its constants
        ("Circle.Unit.factor", "impl", 45, 47),  # enum method
    ],
}


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_one_record_per_definition_with_class_member_symbols_and_exact_lines(rel):
    docs, _ = fixture(rel)
    assert table(docs) == EXPECTED[rel]


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_every_record_is_the_exact_slice_of_the_file_it_cites(rel):
    docs, text = fixture(rel)
    for doc in docs:
        start, end = doc.meta["start_char"], doc.meta["end_char"]
        assert doc.content == text[start:end]
        assert doc.meta["start_line"] == line_of(text, start)
        assert doc.meta["end_line"] == line_of(text, end - 1)
        assert doc.id.startswith(f"{rel}:{doc.meta['symbol']}:{doc.meta['start_line']}")
    assert len({d.id for d in docs}) == len(docs)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_records_of_a_file_never_overlap(rel):
    docs, _ = fixture(rel)
    spans = sorted((d.meta["start_char"], d.meta["end_char"]) for d in docs)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


def test_a_documented_definition_has_two_views_linked_by_body_of():
    docs, text = fixture("server.go")
    api, body = (d for d in docs if d.meta["symbol"] == "Server.Start")
    assert api.content.startswith("// Start starts the server.\nfunc (s *Server) Start() error {")
    assert api.meta["impl"] == text[api.meta["start_char"] : body.meta["end_char"]]
    assert (api.meta["impl_start_line"], api.meta["impl_end_line"]) == (37, 43)
    assert body.meta["body_of"] == api.id


def test_a_rust_impl_or_mod_block_of_just_its_header_writes_no_record_of_its_own():
    docs, _ = fixture("shapes.rs")
    assert not [d for d in docs if "impl" in d.content.split("\n")[0] and d.meta["symbol"] == "Point"]


def test_a_plain_comment_above_a_definition_is_not_its_doc_comment():
    src = b"// just a note\n\nfunc F() {}\n\n/* not javadoc */\nfunc G() {}\n"
    docs = chunk("a.go", src)["documents"]
    assert [(d.meta["symbol"], d.meta["source_type"]) for d in docs] == [
        ("a", "module"),
        ("F", "impl"),
        ("a", "module"),
        ("G", "impl"),
    ]


def test_a_file_that_does_not_parse_becomes_text_records_and_is_counted():
    src = b"export function ok() { return 1; }\nexport function broken( {\n  return 2;\n"
    out = chunk("bad.ts", src)
    assert out["failed"] == [["bad.ts", PARSED_AS_TEXT]]
    (doc,) = out["documents"]
    assert doc.meta["source_type"] == "text" and "broken" in doc.content and "ok()" in doc.content


def test_tsx_is_parsed_with_the_tsx_grammar():
    src = b"export function Button(props: { label: string }) {\n  return <button>{props.label}</button>;\n}\n"
    assert [d.meta["symbol"] for d in chunk("button.tsx", src)["documents"]] == ["Button"]
    assert chunk("button.ts", src)["failed"] == [["button.ts", PARSED_AS_TEXT]]


def test_variance_annotations_the_grammar_lacks_still_parse_and_keep_offsets():
    src = "/** A box. */\nexport interface Box<\n  /** é */\n  out T,\n  in U = never,\n> {\n  get(): T;\n}\n"
    out = chunk("box.ts", src.encode())
    assert out["failed"] == []
    api = out["documents"][0]
    assert (api.meta["symbol"], api.meta["source_type"]) == ("Box", "api")
    assert api.content == src[api.meta["start_char"] : api.meta["end_char"]]
    assert "out T," in api.content and "in U = never" in api.content  # the text is the file's, unmasked


def test_non_ascii_text_before_a_definition_keeps_char_offsets_exact():
    src = "// Ünïcödé 🚀 comment\n\n/// Größe.\nfn größe() -> u8 { 1 }\n"
    docs = chunk("u.rs", src.encode())["documents"]
    fn = next(d for d in docs if d.meta["symbol"] == "größe")
    assert (
        fn.content == src[fn.meta["start_char"] : fn.meta["end_char"]] == "/// Größe.\nfn größe() -> u8 { 1 }"
    )


def test_two_definitions_of_one_symbol_on_one_line_get_distinct_ids():
    src = b"export function f(a: string): void; export function f(a: any) {}\n"
    docs = chunk("one.ts", src)["documents"]
    assert [d.meta["symbol"] for d in docs] == ["f", "f"]
    assert len({d.id for d in docs}) == 2


def test_javascript_classes_and_arrow_functions():
    src = b"/** Adds. */\nexport const add = (a, b) => a + b;\nclass Counter {\n  inc() { this.n++; }\n}\n"
    docs = chunk("m.mjs", src)["documents"]
    assert [(d.meta["symbol"], d.meta["source_type"]) for d in docs] == [
        ("add", "api"),
        ("Counter", "impl"),
        ("Counter.inc", "impl"),
    ]


def test_run_never_mutates_its_input():
    stream = ByteStream((LANGS / "server.go").read_bytes(), meta={"file_path": "server.go"})
    before = (bytes(stream.data), dict(stream.meta))
    SyntaxTreeChunker().run(sources=[stream])
    assert (stream.data, stream.meta) == before


def test_a_file_path_source_is_read_from_disk(tmp_path: Path):
    path = tmp_path / "x.go"
    path.write_text("package x\n\nfunc X() {}\n")
    docs = SyntaxTreeChunker().run(sources=[path])["documents"]
    assert docs[-1].meta["symbol"] == "X"


def test_a_file_of_reexports_alone_is_one_module_record():
    text = b"export * from './schemas';\nexport { ZodError } from './errors';\n"
    docs = chunk("src/v4/index.ts", text)["documents"]
    assert [(d.meta["symbol"], d.meta["source_type"]) for d in docs] == [("src.v4.index", "module")]
    go = chunk("pkg/imports.go", b'package pkg\n\nimport _ "embed"\n')["documents"]
    assert [d.meta["source_type"] for d in go] == ["module"]
