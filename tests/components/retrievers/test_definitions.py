"""Tests for DefinitionRetriever: a one-identifier question gets the records that define it."""

from __future__ import annotations

from haystack import Document
from haystack.core.serialization import component_from_dict, component_to_dict
from haystack.document_stores.in_memory import InMemoryDocumentStore

from codeground.components.retrievers.definitions import DefinitionRetriever
from codeground.components.stores.sqlite_bm25 import SQLiteBM25DocumentStore
from tests.conftest import codeground_components_allowed


def _store(tmp_path, *records):
    store = SQLiteBM25DocumentStore(persist_path=str(tmp_path / "bm25.sqlite3"))
    docs = [
        Document(
            id=i, content=f"code of {symbol}", meta={"file_path": path, "symbol": symbol, "source_type": kind}
        )
        for i, path, symbol, kind in records
    ]
    store.write_documents(docs)
    store.save()
    return store


def _ids(retriever, query):
    return [d.id for d in retriever.run(query=query)["documents"]]


def test_a_popular_name_s_definitions_are_found_however_many_records_share_it(tmp_path):
    uses = [(f"u{i}", f"src/t{i}.rs", f"T{i}.deserialize", "impl") for i in range(30)]
    store = _store(
        tmp_path,
        *uses,
        ("def", "src/de/mod.rs", "Deserialize", "api"),
        ("derive", "derive/lib.rs", "derive.Deserialize", "api"),
    )
    assert _ids(DefinitionRetriever(document_store=store), "Deserialize") == ["def", "derive"]


def test_the_file_named_after_the_symbol_comes_first_and_docs_never_count(tmp_path):
    store = _store(
        tmp_path,
        ("tree", "gin/tree.go", "Router", "api"),
        ("doc", "docs/router.md", "Router", "docs"),
        ("def", "gin/router.go", "Router", "api"),
    )
    assert _ids(DefinitionRetriever(document_store=store), "Router") == ["def", "tree"]


def test_a_qualified_name_finds_itself_first_then_its_last_part(tmp_path):
    store = _store(
        tmp_path,
        ("bare", "a.rs", "Deserializer", "api"),
        ("full", "de.rs", "de.Deserializer", "api"),
        ("other", "b.rs", "Serializer", "api"),
    )
    assert _ids(DefinitionRetriever(document_store=store), "de::Deserializer") == ["full", "bare"]
    assert _ids(DefinitionRetriever(document_store=store, top_k=1), "de::Deserializer") == ["full"]


def test_a_sentence_or_a_store_that_cannot_look_names_up_finds_nothing(tmp_path):
    store = _store(tmp_path, ("def", "router.go", "Router", "api"))
    assert _ids(DefinitionRetriever(document_store=store), "How does the Router match paths?") == []
    memory = InMemoryDocumentStore()
    memory.write_documents([Document(id="x", content="x", meta={"symbol": "Router", "source_type": "api"})])
    assert _ids(DefinitionRetriever(document_store=memory), "Router") == []


def test_it_round_trips_through_yaml_serialization(tmp_path):
    store = _store(tmp_path, ("def", "router.go", "Router", "api"))
    data = component_to_dict(DefinitionRetriever(document_store=store, top_k=3), "d")
    with codeground_components_allowed():
        again = component_from_dict(DefinitionRetriever, data, "d")
    assert again.top_k == 3 and _ids(again, "Router") == ["def"]
