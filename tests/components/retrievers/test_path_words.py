"""Tests for PathWordRetriever: files a question names by their words become candidates."""

from __future__ import annotations

from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict

from codeground.components.retrievers.path_words import PathWordRetriever
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed


def _store(tmp_path, *records):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    store.write_documents(
        [
            Document(id=f"{path}:{line}", content=text, meta={"file_path": path, "start_line": line})
            for path, line, text in records
        ]
    )
    store.save()
    return store


def _ids(retriever, query):
    return [d.id for d in retriever.run(query=query)["documents"]]


def test_a_file_named_by_the_question_is_found_though_its_text_shares_no_word(tmp_path):
    store = _store(
        tmp_path,
        ("context.go", 1, "func (c *Context) Error(err error) *Error"),
        ("errors.go", 1, "type ErrorType uint64"),
        ("middleware/cors.py", 1, "class CORSMiddleware: ..."),
    )
    retriever = PathWordRetriever(document_store=store)
    assert _ids(retriever, "error types and per-request error collection") == ["errors.go:1"]
    assert _ids(retriever, "How does the middleware handle preflight?") == ["middleware/cors.py:1"]


def test_the_file_s_record_that_shares_most_words_with_the_question_is_the_one_returned(tmp_path):
    store = _store(
        tmp_path,
        ("render/json.go", 1, "package render"),
        ("render/json.go", 5, "func (r JSON) Render(w http.ResponseWriter) error { writeJSON }"),
        ("render/json.go", 20, "func writeJSON(w http.ResponseWriter, obj any) error"),
    )
    assert _ids(PathWordRetriever(document_store=store), "JSON response rendering") == ["render/json.go:5"]


def test_most_words_first_then_the_shallower_path_and_at_most_top_files(tmp_path):
    store = _store(
        tmp_path,
        ("a/b/session_store.py", 1, "x"),
        ("session_store.py", 1, "x"),
        ("session.py", 1, "x"),
        ("store.py", 1, "x"),
    )
    retriever = PathWordRetriever(document_store=store, top_files=2)
    assert _ids(retriever, "where is the session store kept?") == [
        "session_store.py:1",
        "a/b/session_store.py:1",
    ]


def test_a_symbol_question_or_one_without_content_words_finds_nothing(tmp_path):
    store = _store(tmp_path, ("router.go", 1, "type Router struct{}"), ("how.py", 1, "x"))
    retriever = PathWordRetriever(document_store=store)
    assert _ids(retriever, "Router") == []
    assert _ids(retriever, "how does it do that?") == []


def test_a_file_spelling_too_small_a_share_of_the_words_is_not_a_candidate(tmp_path):
    store = _store(tmp_path, ("utils.go", 1, "x"))
    retriever = PathWordRetriever(document_store=store, min_share=0.2)
    assert _ids(retriever, "utility helpers for path detection and content-type formatting") == []
    assert _ids(retriever, "utility helpers") == ["utils.go:1"]


def test_it_round_trips_through_yaml_serialization(tmp_path):
    store = _store(tmp_path, ("errors.go", 1, "x"))
    with codeground_components_allowed():
        again = component_from_dict(
            PathWordRetriever,
            component_to_dict(PathWordRetriever(document_store=store, top_files=5), "p"),
            "p",
        )
    assert again.top_files == 5 and _ids(again, "error kinds") == ["errors.go:1"]
